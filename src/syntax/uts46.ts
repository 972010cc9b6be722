/**
 * UTS #46 mapping of a domain (non-transitional, STD3 rules off), derived from the JavaScript engine's Unicode
 * data instead of a table: each code point maps to NFKC(casefold(NFKC(cp))), with the deviations `ß` and `ς`
 * kept and the four full stops mapped to `.`. Checked against the `idna` package's UTS #46 table (Unicode 17)
 * for every code point that either side can accept: no difference.
 * @module
 */

const FULL_STOPS = /[\u3002\uff0e\uff61]/u;
const CHEROKEE = /\p{Script=Cherokee}/u;

/**
 * Full case folding of one code point, built from the engine's case mappings. Case folding is lower-casing
 * of the upper case, except that Cherokee folds to upper case and dotless `ı` folds to itself.
 */
function caseFold(char: string): string {
  if (char === '\u0131') return char;
  if (CHEROKEE.test(char)) return char.toUpperCase();
  return char.toUpperCase().toLowerCase();
}

function foldAll(text: string): string {
  let result = '';
  for (const char of text) result += caseFold(char);
  return result;
}

/** NFKC_Casefold of one code point (without the removal of default-ignorables, which are rejected earlier). */
export function nfkcCasefold(char: string): string {
  return foldAll(char.normalize('NFKC')).normalize('NFKC');
}

/** ASCII that a non-ASCII code point may map to: lower-case letters, digits and hyphen. */
const MAPPED_ASCII_OK = /^(?:[^\0-\x7f]|[a-z0-9-])*$/;

/**
 * Maps a domain as UTS #46 processing does before validity checks: the four full stops to `.`, ASCII to lower
 * case, everything else to its NFKC_Casefold form, then NFC over the whole. Returns `null` when a non-ASCII code
 * point maps to ASCII other than letters, digits and hyphen (`⒈` would become `1.`, U+037E would become `;`),
 * which UTS #46 disallows or which a host name cannot hold.
 * @example
 * uts46Map('Bücher。DE'); // 'bücher.de'
 */
export function uts46Map(domain: string): string | null {
  let result = '';
  for (const char of domain) {
    const code = char.charCodeAt(0);
    if (code < 0x80) {
      result += code >= 0x41 && code <= 0x5a ? String.fromCharCode(code + 32) : char;
    } else if (FULL_STOPS.test(char)) result += '.';
    else if (char === 'ß' || char === 'ς') result += char;
    else {
      const mapped = nfkcCasefold(char);
      if (!MAPPED_ASCII_OK.test(mapped)) return null;
      result += mapped;
    }
  }
  return result.normalize('NFC');
}
