import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { domainOrParentIn, normalizeDomainEntry } from '../../src/data/domains.js';
import {
  EMPTY,
  inSortedLines,
  memoByPatch,
  patchEntries,
  patched,
  SEARCHES_BEFORE_SET,
  sortedList,
} from '../../src/data/lookup.js';
import type { ListPatch } from '../../src/options.js';

const lower = (entry: string) => entry.trim().toLowerCase();

describe('inSortedLines', () => {
  const text = ['a.com', 'b.com', 'b.com.br', 'bb.com', 'mail.b.com', 'z.org'].join('\n');

  it('finds every line, first, middle and last', () => {
    for (const line of text.split('\n')) expect(inSortedLines(text, line), line).toBe(true);
  });

  it('finds no prefix, extension, part or neighbour of a line', () => {
    for (const entry of [
      '',
      'a',
      'a.co',
      'b.com.',
      'com',
      '.com',
      'b.com\nb',
      '0',
      'zz',
      'c.com',
      'z.org\n',
    ]) {
      expect(inSortedLines(text, entry), JSON.stringify(entry)).toBe(false);
    }
  });

  it('agrees with a set on any sorted list and any entry', () => {
    const entry = fc.stringMatching(/^[a-c.]{0,4}$/);
    fc.assert(
      fc.property(fc.uniqueArray(entry, { maxLength: 40 }), entry, (entries, probe) => {
        const sorted = entries.filter((line) => line !== '').sort();
        expect(inSortedLines(sorted.join('\n'), probe)).toBe(probe !== '' && sorted.includes(probe));
      }),
    );
  });
});

describe('sortedList', () => {
  const entries = Array.from({ length: 300 }, (_, i) => `d${String(i).padStart(3, '0')}.com`);
  const probes = [...entries, 'd300.com', 'd.com', 'e000.com', ''];

  it('answers the same before and after it builds its set', () => {
    const list = sortedList(entries.join('\n'));
    const rounds = Math.ceil(SEARCHES_BEFORE_SET / probes.length) + 1;
    for (let round = 0; round < rounds; round += 1) {
      for (const probe of probes) expect(list.has(probe), probe).toBe(entries.includes(probe));
    }
  });

  it('holds nothing for empty text', () => {
    const list = sortedList('');
    for (let i = 0; i <= SEARCHES_BEFORE_SET; i += 1) expect(list.has('')).toBe(false);
    expect(list.has('a.com')).toBe(false);
  });
});

describe('patched', () => {
  const base = new Set(['a', 'b', 'c']);

  it('replaces the list with an array', () => {
    const list = patched(base, [' X ', 'Y', ''], lower);
    expect(['a', 'x', 'y', ''].map((entry) => list.has(entry))).toEqual([false, true, true, false]);
  });

  it('edits the list with { add, remove }', () => {
    const list = patched(base, { add: ['D'], remove: ['b'] }, lower);
    expect(['a', 'b', 'c', 'd'].map((entry) => list.has(entry))).toEqual([true, false, true, true]);
  });

  it('keeps an entry that is both added and removed', () => {
    expect(patched(base, { add: ['b'], remove: ['b'] }, lower).has('b')).toBe(true);
  });

  it('returns the base itself for an empty edit', () => {
    expect(patched(base, {}, lower)).toBe(base);
    expect(patched(base, { add: [], remove: [] }, lower)).toBe(base);
  });

  it('patches an empty list too', () => {
    expect(patched(EMPTY, { add: ['a'] }, lower).has('a')).toBe(true);
    expect(EMPTY.has('a')).toBe(false);
  });
});

describe('patchEntries', () => {
  it('lists the entries a patch puts on the list', () => {
    expect([...patchEntries(['A', 'b'], lower)]).toEqual(['a', 'b']);
    expect([...patchEntries({ add: ['C'], remove: ['d'] }, lower)]).toEqual(['c']);
    expect([...patchEntries({ remove: ['d'] }, lower)]).toEqual([]);
  });
});

describe('memoByPatch', () => {
  it('builds once per patch object, so repeated verifications with the same options cost a lookup', () => {
    let builds = 0;
    const build = memoByPatch((patch: ListPatch) => {
      builds += 1;
      return patched(new Set(['a']), patch, lower);
    });
    const patch: ListPatch = { add: ['b'] };
    const first = build(patch);
    expect(build(patch)).toBe(first);
    expect(builds).toBe(1);
    // An equal but different object is another patch.
    expect(build({ add: ['b'] })).not.toBe(first);
    expect(builds).toBe(2);
  });
});

describe('normalizeDomainEntry', () => {
  it('trims, lower-cases and drops a leading @ or dot and a trailing dot', () => {
    expect(normalizeDomainEntry(' @Mailinator.COM. ')).toBe('mailinator.com');
    expect(normalizeDomainEntry('.example.org')).toBe('example.org');
    expect(normalizeDomainEntry('')).toBe('');
  });
});

describe('domainOrParentIn', () => {
  const list = new Set(['example.com', 'pp.ua']);

  it('matches the domain and any parent, label by label', () => {
    expect(domainOrParentIn(list, 'example.com')).toBe(true);
    expect(domainOrParentIn(list, 'a.b.example.com')).toBe(true);
    expect(domainOrParentIn(list, 'badexample.com')).toBe(false);
    expect(domainOrParentIn(list, 'com')).toBe(false);
    expect(domainOrParentIn(list, '')).toBe(false);
    expect(domainOrParentIn(list, 'example.com.')).toBe(false);
  });
});
