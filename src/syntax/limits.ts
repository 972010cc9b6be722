/**
 * Length limits of an SMTP envelope address, in octets (UTF-8 bytes).
 * @module
 */

/** Longest address: RFC 5321 4.5.3.1.3 path limit of 256 octets, minus the angle brackets (RFC 3696 erratum 1690). */
export const MAX_ADDRESS_OCTETS = 254;
/** Longest local part (RFC 5321 4.5.3.1.1). */
export const MAX_LOCAL_OCTETS = 64;
/** Longest domain in ASCII form, without a trailing dot (RFC 1035 2.3.4, RFC 5321 4.5.3.1.2). */
export const MAX_DOMAIN_OCTETS = 253;
/** Longest DNS label (RFC 1035 2.3.1). */
export const MAX_LABEL_OCTETS = 63;
/**
 * Longest input (in UTF-16 code units) from which `user` and `domain` are still read for the result when the
 * address is invalid. Longer input is rejected without being split, so that hostile input costs no more work.
 */
export const MAX_BEST_EFFORT_LENGTH = 1024;

/** Number of UTF-8 bytes needed to encode `text` (a lone surrogate counts as the 3 bytes of U+FFFD). */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) {
      bytes += 1;
      continue;
    }
    // A surrogate pair is 2 code units and 4 bytes; any other code unit from U+0800 up is 3 bytes.
    bytes += 2;
    if (code <= 0xdbff && code >= 0xd800 && isLowSurrogate(text.charCodeAt(i + 1))) i++;
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
