import { describe, expect, it } from 'vitest';
import { domainOrParentIn, normalizeDomainEntry } from '../../src/data/domains.js';
import { EMPTY, lazySet, memoByPatch, patchEntries, patched } from '../../src/data/lookup.js';
import type { ListPatch } from '../../src/options.js';

const lower = (entry: string) => entry.trim().toLowerCase();

describe('lazySet', () => {
  it('splits the text into a set on first use and keeps it', () => {
    const get = lazySet('a.com\nb.com');
    const first = get();
    expect([...first]).toEqual(['a.com', 'b.com']);
    expect(get()).toBe(first);
  });

  it('gives an empty set for empty text', () => {
    expect(lazySet('')().size).toBe(0);
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
