/**
 * Set lookups over the built-in lists, built lazily, and the caller's patches applied on top.
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
 * Returns a getter for the set of the newline-separated `text`, split on the first call only, so that the
 * cost of a list is paid when (and if) it is first used.
 */
export function lazySet(text: string): () => ReadonlySet<string> {
  let set: ReadonlySet<string> | undefined;
  return () => {
    set ??= new Set(text === '' ? [] : text.split('\n'));
    return set;
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
