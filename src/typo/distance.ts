/**
 * Edit distance for typo suggestions.
 * @module
 */

/** Rows reused between calls: distances are computed for short strings (domains), one at a time. */
let rows: Int32Array[] = [new Int32Array(256), new Int32Array(256), new Int32Array(256)];

function rowsFor(width: number): Int32Array[] {
  if (width > rows[0]!.length) rows = [new Int32Array(width), new Int32Array(width), new Int32Array(width)];
  return rows;
}

/**
 * Optimal string alignment distance (restricted Damerau-Levenshtein): the fewest insertions, deletions,
 * substitutions and swaps of two adjacent characters that turn `a` into `b`, where no substring is edited
 * twice. A swap counts as one edit, so `gmial` is 1 from `gmail` (Levenshtein says 2).
 *
 * `max` bounds the work: as soon as the distance is known to exceed it the computation stops and returns
 * `max + 1`. Strings are compared by UTF-16 code unit.
 * @example
 * osaDistance('gmial.com', 'gmail.com'); // 1
 * osaDistance('hotmail.com', 'yahoo.com', 2); // 3 (more than 2)
 */
export function osaDistance(a: string, b: string, max: number = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (n === 0 || m === 0) return Math.min(Math.max(n, m), max + 1);
  let [before, previous, current] = rowsFor(m + 1) as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= m; j += 1) previous[j] = j;
  for (let i = 1; i <= n; i += 1) {
    const ai = a.charCodeAt(i - 1);
    const aPrev = i > 1 ? a.charCodeAt(i - 2) : -1;
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= m; j += 1) {
      const bj = b.charCodeAt(j - 1);
      let value = previous[j - 1]! + (ai === bj ? 0 : 1);
      const deletion = previous[j]! + 1;
      if (deletion < value) value = deletion;
      const insertion = current[j - 1]! + 1;
      if (insertion < value) value = insertion;
      if (j > 1 && ai === b.charCodeAt(j - 2) && aPrev === bj) {
        const swap = before[j - 2]! + 1;
        if (swap < value) value = swap;
      }
      current[j] = value;
      if (value < rowMin) rowMin = value;
    }
    // Each row's minimum grows by at most one per row, and a swap reaches back only one row further, so
    // once a row is entirely above `max` no later cell can come back to it.
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  const distance = previous[m]!;
  return distance > max ? max + 1 : distance;
}
