/**
 * Unicode that must never appear in an address, whatever the grammar allows: characters that are invisible,
 * reorder or hide text, or are not characters at all.
 * @module
 */

/**
 * Control, format (zero-width and bidi controls among them), surrogate, private-use and unassigned code points
 * (`\p{C}`), all separators (`\p{Z}`), and default-ignorable code points (fillers, variation selectors, ...).
 */
const UNSAFE = /[\p{C}\p{Z}\p{Default_Ignorable_Code_Point}]/u;

/** As {@link UNSAFE}, but the ASCII space is allowed (inside a quoted local part). */
const UNSAFE_EXCEPT_SPACE = /[\p{C}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]|(?! )\p{Zs}/u;

/** A combining mark at the start would combine with whatever precedes the address when it is displayed. */
const LEADING_MARK = /^\p{M}/u;

/**
 * True when `text` holds a code point that is unsafe in an address: see {@link UNSAFE}, plus a combining mark
 * in first position. With `allowSpace`, the ASCII space is allowed (quoted local parts); other spaces are not.
 * @example
 * hasUnsafeCharacter('jo\u200bhn'); // true: ZERO WIDTH SPACE
 */
export function hasUnsafeCharacter(text: string, allowSpace = false): boolean {
  return LEADING_MARK.test(text) || (allowSpace ? UNSAFE_EXCEPT_SPACE : UNSAFE).test(text);
}
