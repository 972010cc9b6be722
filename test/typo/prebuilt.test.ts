/**
 * The built-in suggester reads what scripts/generate-data.js computed of its lists (issue 30, cold start): the
 * generated targets and slip lookups must be what the code computes from the lists today, and the suggester
 * built from them must answer as the one {@link createDomainSuggester} builds over the same lists.
 */
import { describe, expect, it } from 'vitest';
import { builtInKnown, PREBUILT_TYPO_INDEX, typoData } from '../../src/data/typo.js';
import { listParts, prebuild, slipsFrom, targetsFrom } from '../../src/typo/prebuilt.js';
import { slipIndex } from '../../src/typo/slips.js';
import { createDomainSuggester, defaultSuggester } from '../../src/typo/suggest.js';
import { oneEditTyposOf, SLIP_KINDS, SLIP_PROVIDERS, splitDomain } from '../support/typo-sets.js';

describe('the generated typo index', () => {
  it('is what prebuild computes from the built-in lists (run npm run data when it is not)', () => {
    expect(prebuild(typoData())).toEqual(PREBUILT_TYPO_INDEX);
  });

  it('reads back as the targets and slip lookups a suggester computes', () => {
    const { targets, known, topLevel } = listParts(typoData());
    expect(targets.length).toBe(typoData().domains.length);
    expect(targetsFrom(PREBUILT_TYPO_INDEX.targets)).toEqual(targets);
    const slips = slipIndex(targets, topLevel, (domain) => known.has(domain));
    expect(slipsFrom(PREBUILT_TYPO_INDEX)).toEqual(slips);
    expect(slips.joined.get('gmailcom')).toBe('gmail.com'); // not empty lookups
  });

  it('round-trips a small index', () => {
    const index = prebuild({ domains: ['Gmail.com.', 'yahoo.co.uk', 'aol.com'], topLevel: ['com', 'co.uk'] });
    expect(index.targets).toBe('gmail.com com 1\nyahoo.co.uk co.uk 1\naol.com com 0');
    expect(slipsFrom(index).doubled.get('aoll.com')).toBe('aol.com');
    expect(targetsFrom(index.targets)[1]).toMatchObject({ rank: 1, name: 'yahoo', suffix: 'co.uk' });
  });
});

describe('the built-in known domains', () => {
  it('are the targets, the secondary targets and the protected domains, searched in the sorted lists', () => {
    const { known } = listParts(typoData());
    const isKnown = builtInKnown();
    const missed = [...known].filter((domain) => !isKnown(domain));
    expect(missed).toEqual([]);
    const near = [...known].flatMap((domain) => [`x${domain}`, `${domain}x`, domain.slice(1)]);
    expect(near.filter((domain) => isKnown(domain) !== known.has(domain))).toEqual([]);
  });
});

describe('the built-in suggester', () => {
  it('answers as createDomainSuggester over the same lists', () => {
    const computed = createDomainSuggester(typoData());
    const inputs = [
      ...SLIP_PROVIDERS.flatMap((domain) => {
        const { name, suffix } = splitDomain(domain);
        return Object.values(SLIP_KINDS).map((slip) => slip(name, suffix));
      }),
      ...typoData().domains.flatMap((domain) => oneEditTyposOf(domain).map(([typo]) => typo)),
      ...typoData()
        .secondaryDomains.slice(0, 100)
        .map((domain) => domain.replace(/.$/, 'x')),
      'b.com',
      'gmail.com',
      'yahooo.de',
      'hotmail.co',
    ];
    expect(inputs.length).toBeGreaterThan(1000);
    const differ = inputs.filter((input) => defaultSuggester().suggest(input) !== computed.suggest(input));
    expect(differ).toEqual([]);
    const extended = defaultSuggester().extend(['acme-mail.com']);
    expect(extended.suggest('acme-mial.com')).toBe(
      computed.extend(['acme-mail.com']).suggest('acme-mial.com'),
    );
  });
});
