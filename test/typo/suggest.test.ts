import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domains as freeText } from '../../src/data/generated/free.js';
import { typoData } from '../../src/data/typo.js';
import {
  closestMatch,
  createDomainSuggester,
  defaultSuggester,
  editsFor,
  suggestDomain,
} from '../../src/typo/suggest.js';

describe('suggestDomain (built-in lists)', () => {
  it('corrects common typos of popular domains, swaps included', () => {
    expect(suggestDomain('gmial.com')).toBe('gmail.com');
    expect(suggestDomain('gamil.com')).toBe('gmail.com');
    expect(suggestDomain('gmai.com')).toBe('gmail.com');
    expect(suggestDomain('hotmial.com')).toBe('hotmail.com');
    expect(suggestDomain('yahooo.com')).toBe('yahoo.com');
    expect(suggestDomain('outlok.com')).toBe('outlook.com');
    expect(suggestDomain('iclould.com')).toBe('icloud.com');
    expect(suggestDomain('comcats.net')).toBe('comcast.net');
    expect(suggestDomain('protonmial.com')).toBe('protonmail.com');
  });

  it('corrects typo-squatted endings of popular domains', () => {
    expect(suggestDomain('gmail.co')).toBe('gmail.com');
    expect(suggestDomain('gmail.om')).toBe('gmail.com');
    expect(suggestDomain('hotmail.cm')).toBe('hotmail.com');
    expect(suggestDomain('yahoo.om')).toBe('yahoo.com');
  });

  it('repairs a doubled ending and a left-out dot, towards popular domains only', () => {
    expect(suggestDomain('gmail.com.com')).toBe('gmail.com');
    expect(suggestDomain('yahoo.co.uk.uk')).toBe('yahoo.co.uk');
    expect(suggestDomain('gmailcom.com')).toBe('gmail.com');
    expect(suggestDomain('hotmailcom.com')).toBe('hotmail.com');
    expect(suggestDomain('comcastnet.com')).toBe('comcast.net');
    expect(suggestDomain('telecom.com')).toBeNull();
    expect(suggestDomain('acme.com.com')).toBeNull();
    expect(suggestDomain('yahoo.com.au')).toBeNull();
    expect(suggestDomain('outlook.com.br')).toBeNull();
  });

  it('never suggests anything for a popular domain', () => {
    for (const domain of typoData().domains) expect(suggestDomain(domain), domain).toBeNull();
  });

  it('never corrects a real provider of the free list or a protected domain into another', () => {
    const free = freeText.split('\n');
    expect(free.length).toBeGreaterThan(1_000);
    const corrected = [...free, ...typoData().protected].filter((domain) => suggestDomain(domain) !== null);
    expect(corrected).toEqual([]);
    // Real providers one or two edits away from a popular domain.
    for (const domain of [
      'ymail.com',
      'email.com',
      'mail.com',
      'protonmail.ch',
      'gmx.at',
      'yahoo.ca',
      'mac.com',
    ]) {
      expect(suggestDomain(domain), domain).toBeNull();
    }
  });

  it('does not turn web.com into hey.com (mailcheck does)', () => {
    expect(suggestDomain('web.com')).toBeNull();
    // Nor any other one-edit variant of a three-letter name: each is somebody's real domain.
    expect(suggestDomain('aoi.com')).toBeNull();
    expect(suggestDomain('mns.com')).toBeNull();
    expect(suggestDomain('gmz.de')).toBeNull();
  });

  it('leaves subdomains of known domains alone', () => {
    expect(suggestDomain('mail.yahoo.com')).toBeNull();
    expect(suggestDomain('eu.mail.gmx.net')).toBeNull();
  });

  it('fixes an ending that is no public suffix, keeping the rest', () => {
    expect(suggestDomain('example.cmo')).toBe('example.com');
    expect(suggestDomain('con-artists.con')).toBe('con-artists.com');
    expect(suggestDomain('mail.randomsmallcompany.cmo')).toBe('mail.randomsmallcompany.com');
    expect(suggestDomain('school.ogr')).toBe('school.org');
    expect(suggestDomain('firm.co.ukk')).toBe('firm.co.uk');
    // A short name gets no fuzzy match, but its broken ending is still fixed.
    expect(suggestDomain('aol.con')).toBe('aol.com');
  });

  it('never rewrites a real ending for an arbitrary domain', () => {
    expect(suggestDomain('example.co')).toBeNull();
    expect(suggestDomain('startup.co')).toBeNull();
    expect(suggestDomain('startup.io')).toBeNull();
    expect(suggestDomain('company.cm')).toBeNull();
    expect(suggestDomain('kicksend.com')).toBeNull();
  });

  it('gives up on an unknown ending with nothing close', () => {
    expect(suggestDomain('example.qqqqq')).toBeNull();
  });

  it('corrects a provider name under one of its real regional domains only', () => {
    expect(suggestDomain('yahooo.de')).toBe('yahoo.de');
    expect(suggestDomain('hotmal.fr')).toBe('hotmail.fr');
    // gotmail.net would become hotmail.net, which is nobody's mail domain: no suggestion.
    expect(suggestDomain('gotmail.net')).toBeNull();
  });

  it("never moves a provider's regional domain to another country's suffix", () => {
    // Real free-mail domains mailvet's lists do not hold, each one edit from a listed one of another country.
    for (const regional of [
      'hotmail.com.tr',
      'yahoo.com.tr',
      'live.in',
      'live.cl',
      'yahoo.com.co',
      'posteo.se',
      'home.pl',
    ])
      expect(suggestDomain(regional), regional).toBeNull();
  });

  it('fixes a doubled letter in a three-letter provider name, and no other edit of it', () => {
    expect(suggestDomain('aoll.com')).toBe('aol.com');
    expect(suggestDomain('msnn.com')).toBe('msn.com');
    expect(suggestDomain('gmxx.de')).toBe('gmx.de');
    expect(suggestDomain('gmmx.de')).toBe('gmx.de');
    expect(suggestDomain('attt.net')).toBe('att.net');
    // Swaps and substitutions of three letters are other people's real domains (amc.com, mns.com, ...).
    for (const real of ['amc.com', 'mca.com', 'mns.com', 'oal.com', 'gxm.de', 'ao.com', 'aok.com'])
      expect(suggestDomain(real), real).toBeNull();
  });

  it('still fixes slips of .com that happen to be real country suffixes', () => {
    expect(suggestDomain('gmail.co')).toBe('gmail.com');
    expect(suggestDomain('gmail.cm')).toBe('gmail.com');
    expect(suggestDomain('gmail.om')).toBe('gmail.com');
    expect(suggestDomain('hotmail.co')).toBe('hotmail.com');
    expect(suggestDomain('live.co')).toBe('live.com');
    expect(suggestDomain('yahoo.co.k')).toBe('yahoo.co.uk');
  });

  it('ignores case, surrounding space and a trailing dot', () => {
    expect(suggestDomain('GMIAL.COM')).toBe('gmail.com');
    expect(suggestDomain(' gmial.com. ')).toBe('gmail.com');
    expect(suggestDomain('GMAIL.COM')).toBeNull();
  });

  it('answers null for what is not a domain', () => {
    for (const input of ['', ' ', '.', 'gm', 'gmai', '..', '.com', 'a..com', 'co.uk', 'com', ',', ' , ']) {
      expect(suggestDomain(input), JSON.stringify(input)).toBeNull();
    }
    expect(defaultSuggester().suggest(undefined as unknown as string)).toBeNull();
  });

  it('survives oversized, unicode and hostile input', () => {
    expect(suggestDomain(`${'a'.repeat(100_000)}.com`)).toBeNull();
    expect(suggestDomain(`${'gmail.'.repeat(50)}com`)).toBeNull();
    expect(suggestDomain('gmäil.com')).toBe('gmail.com');
    expect(suggestDomain('xn--gmil-loa.com')).toBeNull();
    expect(suggestDomain('__proto__.com')).toBeNull();
    expect(suggestDomain('gmail.com\r\n')).toBeNull();
    expect(suggestDomain('g\u0000mail.com')).toBe('gmail.com');
    fc.assert(
      fc.property(fc.string({ maxLength: 300, unit: 'binary' }), (input) => {
        const suggestion = suggestDomain(input);
        expect(suggestion === null || typeof suggestion === 'string').toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('memoises: the same domain gives the same answer from the cache', () => {
    const suggester = createDomainSuggester({ ...typoData(), cacheSize: 2 });
    expect(suggester.suggest('gmial.com')).toBe('gmail.com');
    expect(suggester.suggest('example.org')).toBeNull();
    expect(suggester.suggest('gmial.com')).toBe('gmail.com');
    expect(suggester.suggest('example.org')).toBeNull();
    // Evicted entries are recomputed, with the same result.
    suggester.suggest('a.com');
    suggester.suggest('b.com');
    expect(suggester.suggest('gmial.com')).toBe('gmail.com');
  });
});

describe('editsFor', () => {
  it('tolerates more edits for longer names', () => {
    expect([1, 3, 4, 8, 9, 20].map(editsFor)).toEqual([0, 0, 1, 1, 2, 2]);
  });
});

describe('createDomainSuggester', () => {
  it('breaks ties by list order', () => {
    const suggester = createDomainSuggester({ domains: ['abcd.com', 'abce.com'] });
    expect(suggester.suggest('abcx.com')).toBe('abcd.com');
    expect(createDomainSuggester({ domains: ['abce.com', 'abcd.com'] }).suggest('abcx.com')).toBe('abce.com');
  });

  it('prefers the closest target over the more popular one', () => {
    const suggester = createDomainSuggester({ domains: ['examples.com', 'exampel.com'] });
    expect(suggester.suggest('exampel.co')).toBe('exampel.com');
  });

  it('never corrects a protected domain', () => {
    const suggester = createDomainSuggester({ domains: ['gmail.com'], protected: ['gmal.com'] });
    expect(suggester.suggest('gmal.com')).toBeNull();
    expect(suggester.suggest('gmial.com')).toBe('gmail.com');
  });

  it('corrects a second-level name under a listed suffix when no domain of that provider is known', () => {
    const suggester = createDomainSuggester({ domains: [], secondLevel: ['yahoo'], topLevel: ['com', 'fr'] });
    expect(suggester.suggest('yajoo.com')).toBe('yahoo.com');
    expect(suggester.suggest('yajoo.fr')).toBe('yahoo.fr');
    expect(suggester.suggest('yajoo.de')).toBeNull();
    expect(suggester.suggest('yahoo.co')).toBe('yahoo.com');
    expect(suggester.suggest('yahoo.fr')).toBeNull();
  });

  it('corrects to a secondary target within one edit, after the targets, for a country suffix only', () => {
    const suggester = createDomainSuggester({
      domains: ['gmail.com', 'gazeta.com'],
      secondaryDomains: ['gazeta.pl', 'abcd.co', 'abce.co'],
    });
    expect(suggester.suggest('gazeta.pk')).toBe('gazeta.pl');
    expect(suggester.suggest('gazetx.pl')).toBe('gazeta.pl');
    expect(suggester.suggest('gazeta.pl')).toBeNull();
    // Two edits is too far for a secondary target; a target within one edit comes first.
    expect(suggester.suggest('gaztex.pl')).toBeNull();
    expect(suggester.suggest('gazeta.co')).toBe('gazeta.com');
    // `abcd.com` is one edit from `abcd.co`, but an input under com, net or org never meets them.
    expect(suggester.suggest('abcd.com')).toBeNull();
    expect(suggester.suggest('abcd.cx')).toBe('abcd.co');
    // The first of two secondary targets one edit away wins.
    expect(suggester.suggest('abcx.co')).toBe('abcd.co');
  });

  it('does nothing with empty lists', () => {
    const suggester = createDomainSuggester({ domains: [] });
    expect(suggester.suggest('gmial.com')).toBeNull();
    expect(suggester.suggest('example.cmo')).toBeNull();
  });

  it('skips malformed entries of its lists', () => {
    const suggester = createDomainSuggester({
      domains: ['', 'nodot', 'GMAIL.COM.', `${'a'.repeat(300)}.com`],
    });
    expect(suggester.suggest('gmial.com')).toBe('gmail.com');
  });

  it('rejects a bad cache size', () => {
    expect(() => createDomainSuggester({ domains: [], cacheSize: 0 })).toThrow(RangeError);
    expect(() => createDomainSuggester({ domains: [], cacheSize: 1.5 })).toThrow(RangeError);
  });

  it('extends with extra targets ranked first, sharing the rest', () => {
    const base = createDomainSuggester({ domains: ['abcd.com'], topLevel: ['com'] });
    const extended = base.extend(['abce.com']);
    expect(extended.suggest('abcx.com')).toBe('abce.com');
    expect(extended.suggest('abce.com')).toBeNull();
    expect(extended.suggest('other.cmo')).toBe('other.com');
    expect(base.suggest('abcx.com')).toBe('abcd.com');
    expect(base.extend([])).toBe(base);
    expect(base.extend(['ABCD.com'])).toBe(base);
  });
});

describe('closestMatch', () => {
  it("is mailcheck's findClosestDomain with a swap-aware distance", () => {
    expect(closestMatch('hotmial', ['yahoo', 'hotmail'])).toBe('hotmail');
    expect(closestMatch('cmo', ['com', 'org'], 1)).toBe('com');
    expect(closestMatch('gmail.com', ['gmail.com', 'gmail.co'])).toBe('gmail.com');
    expect(closestMatch('zzzz', ['yahoo'])).toBeNull();
    expect(closestMatch('abc', [])).toBeNull();
    expect(closestMatch('abx', ['aby', 'abz'], 1)).toBe('aby');
  });
});
