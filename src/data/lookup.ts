/**
 * Lookups over the built-in lists (sorted text, searched, then a set built when lookups are many) and the
 * caller's patches applied on top.
 * @module
 */
import type { ListPatch } from '../options.js';

/** Membership test of a list. */
export interface Lookup {
  /** True when `entry` (already normalised) is on the list. */
  has(entry: string): boolean;
}

/** An empty list. */
export const EMPTY: Lookup = Object.freeze({ has: () => false });

/**
 * Lookups a sorted list answers by binary search before {@link sortedList} builds its set: a few hundred
 * searches cost less than a millisecond, building the set of the 56k-domain disposable list tens of them.
 */
export const SEARCHES_BEFORE_SET = 1024;

/**
 * True when `entry` is a non-empty line of `text`, whose lines are sorted by UTF-16 code unit (`Array.prototype.sort`'s
 * order, in which the generated lists are written). A binary search over the text itself: O(log n) line
 * comparisons, nothing split or allocated but the compared lines.
 * @example
 * inSortedLines('a.com\nb.com\nc.com', 'b.com'); // true
 */
export function inSortedLines(text: string, entry: string): boolean {
  if (entry === '') return false;
  // The lines still in question start at `low` and end before `high`; a line ends at a newline or the end.
  let low = 0;
  let high = text.length + 1;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const start = text.lastIndexOf('\n', middle - 1) + 1;
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    if (line === entry) return true;
    if (line < entry) low = end + 1;
    else high = start;
  }
  return false;
}

/**
 * A lookup over the newline-separated `text`, sorted as {@link inSortedLines} needs (the generated lists are).
 * The first {@link SEARCHES_BEFORE_SET} lookups binary-search the text; the next one splits it into a set once,
 * which answers every later lookup in O(1). A process that verifies one address (`mailvet verify`) so never pays
 * for the set, and a bulk job pays for it once.
 * @example
 * sortedList('a.com\nb.com').has('b.com'); // true
 */
export function sortedList(text: string): Lookup {
  let searches = 0;
  let set: ReadonlySet<string> | undefined;
  return {
    has(entry) {
      if (set !== undefined) return set.has(entry);
      if (searches < SEARCHES_BEFORE_SET) {
        searches += 1;
        return inSortedLines(text, entry);
      }
      set = new Set(text === '' ? [] : text.split('\n'));
      return set.has(entry);
    },
  };
}

/** The entries of a patch (`add` entries for an edit), normalised; empty strings are dropped. */
export function patchEntries(patch: ListPatch, normalize: (entry: string) => string): ReadonlySet<string> {
  const entries = isReplacement(patch) ? patch : (patch.add ?? []);
  return normalizedSet(entries, normalize);
}

/** True when the patch replaces the list (an array) rather than editing it. */
export function isReplacement(patch: ListPatch): patch is readonly string[] {
  return Array.isArray(patch);
}

function normalizedSet(
  entries: readonly string[],
  normalize: (entry: string) => string,
): ReadonlySet<string> {
  const set = new Set<string>();
  for (const entry of entries) {
    const normalized = normalize(entry);
    if (normalized !== '') set.add(normalized);
  }
  return set;
}

/**
 * Applies a patch to a base list: an array replaces it; `{ add, remove }` takes the `remove` entries out of
 * the base and puts the `add` entries in (an entry in both is on the list). Lookups stay O(1).
 */
export function patched(base: Lookup, patch: ListPatch, normalize: (entry: string) => string): Lookup {
  if (isReplacement(patch)) return normalizedSet(patch, normalize);
  const add = normalizedSet(patch.add ?? [], normalize);
  const remove = normalizedSet(patch.remove ?? [], normalize);
  if (add.size === 0 && remove.size === 0) return base;
  return { has: (entry) => add.has(entry) || (!remove.has(entry) && base.has(entry)) };
}

/**
 * Memoises per patch object: the same patch (by identity, as options are resolved once per verifier) gives
 * the same built value, so applying it costs one `WeakMap` lookup per verification.
 */
export function memoByPatch<T>(build: (patch: ListPatch) => T): (patch: ListPatch) => T {
  const cache = new WeakMap<object, T>();
  return (patch) => {
    let value = cache.get(patch);
    if (value === undefined) {
      value = build(patch);
      cache.set(patch, value);
    }
    return value;
  };
}
