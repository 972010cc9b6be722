/**
 * ASCII character classes of RFC 5322 / RFC 5321 address syntax, as lookup tables for the fast path.
 * @module
 */

const ATEXT_SPECIALS = "!#$%&'*+-/=?^_`{|}~";

function table(accept: (code: number) => boolean): Uint8Array {
  const result = new Uint8Array(128);
  for (let code = 0; code < 128; code++) result[code] = accept(code) ? 1 : 0;
  return result;
}

function isAlphaNumeric(code: number): boolean {
  return (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** `atext` (RFC 5322 3.2.3): letters, digits and ``!#$%&'*+-/=?^_`{|}~``. Indexed by char code < 128. */
export const ATEXT: Uint8Array = table(
  (code) => isAlphaNumeric(code) || ATEXT_SPECIALS.includes(String.fromCharCode(code)),
);

/** Letters, digits and `-`: the characters of a host name label (RFC 952, RFC 1123 2.1). */
export const LDH: Uint8Array = table((code) => isAlphaNumeric(code) || code === 0x2d);
