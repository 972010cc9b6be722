/**
 * Text every job store can keep. PostgreSQL's `text` and `jsonb` cannot hold U+0000, nor (encoded as UTF-8) an
 * unpaired UTF-16 surrogate, so an address, a CSV cell or a header name with either is refused when it comes in,
 * on every store alike, instead of failing later in the database.
 * @module
 */

/** An unpaired UTF-16 surrogate: a high one not followed by a low one, or a low one not preceded by a high one. */
export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Why `text` cannot be kept by every job store, or `undefined` when it can: it holds a NUL character or a lone
 * surrogate. Positions are 1-based, in UTF-16 code units.
 * @example
 * unstorableText('a\u0000b@example.com'); // 'contains a NUL character (U+0000) at character 2'
 */
export function unstorableText(text: string): string | undefined {
  const nul = text.indexOf('\0');
  if (nul !== -1) return `contains a NUL character (U+0000) at character ${nul + 1}`;
  const lone = LONE_SURROGATE.exec(text);
  if (lone !== null) {
    const code = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return `contains a lone surrogate (U+${code}) at character ${lone.index + 1}`;
  }
  return undefined;
}

/** The first of `cells` that cannot be kept, as `cell N <problem>` (1-based), or `undefined`. */
export function unstorableCell(cells: readonly string[]): string | undefined {
  for (let i = 0; i < cells.length; i++) {
    const problem = unstorableText(cells[i]!);
    if (problem !== undefined) return `has a cell ${i + 1} that ${problem}`;
  }
  return undefined;
}
