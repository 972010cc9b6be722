/**
 * Memoizing a pure function of an object in a `WeakMap`: each result lives as long as its key object, so a
 * cache of derived data (a guard per allow-list, the sorted hosts of a cached DNS answer) never outgrows what
 * is still in use.
 * @module
 */

/**
 * `compute`, memoized by key object. `compute` must be pure: it runs once per key, and every later call with
 * that key returns the same result.
 * @example
 * const sorted = weakMemo((records: readonly MxRecord[]) => records.toSorted(byPriority));
 * sorted(answer.records) === sorted(answer.records); // true
 */
export function weakMemo<K extends object, V>(compute: (key: K) => V): (key: K) => V {
  const results = new WeakMap<K, V>();
  return (key) => {
    const known = results.get(key);
    if (known !== undefined || results.has(key)) return known as V; // one look-up on a hit
    const result = compute(key);
    results.set(key, result);
    return result;
  };
}
