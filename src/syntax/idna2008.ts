/**
 * IDNA2008 label validity (RFC 5891 5.4, RFC 5892, RFC 5893). The code point classes are derived at run time
 * from the engine's Unicode properties by the algorithm of RFC 5892 section 3, which is how the IANA tables are
 * made; checked against the `idna` package's tables (Unicode 17) for every code point: no difference.
 * @module
 */
import { satisfiesBidiRule } from './bidi.js';
import { nfkcCasefold } from './uts46.js';

/** IDNA2008 derived property of a code point. CONTEXTJ (the joiners) counts as DISALLOWED: they are unsafe. */
type CodePointClass = 'pvalid' | 'contexto' | 'disallowed';

/** RFC 5892 2.6 Exceptions (F). */
const EXCEPTIONS = new Map<number, CodePointClass>([
  [0xdf, 'pvalid'],
  [0x3c2, 'pvalid'],
  [0x6fd, 'pvalid'],
  [0x6fe, 'pvalid'],
  [0xf0b, 'pvalid'],
  [0x3007, 'pvalid'],
  [0xb7, 'contexto'],
  [0x375, 'contexto'],
  [0x5f3, 'contexto'],
  [0x5f4, 'contexto'],
  [0x30fb, 'contexto'],
  [0x640, 'disallowed'],
  [0x7fa, 'disallowed'],
  [0x302e, 'disallowed'],
  [0x302f, 'disallowed'],
  [0x3031, 'disallowed'],
  [0x3032, 'disallowed'],
  [0x3033, 'disallowed'],
  [0x3034, 'disallowed'],
  [0x3035, 'disallowed'],
  [0x303b, 'disallowed'],
]);

/** Unassigned (J), ignorable properties (C) and LetterDigits (A) of RFC 5892 section 2. */
const UNASSIGNED = /\p{Cn}/u;
const IGNORABLE_PROPERTY = /[\p{Default_Ignorable_Code_Point}\p{White_Space}\p{Noncharacter_Code_Point}]/u;
const LETTER_DIGIT = /[\p{Ll}\p{Lu}\p{Lo}\p{Nd}\p{Lm}\p{Mn}\p{Mc}]/u;

function isArabicIndicDigit(code: number): boolean {
  return code >= 0x660 && code <= 0x669;
}

function isExtendedArabicIndicDigit(code: number): boolean {
  return code >= 0x6f0 && code <= 0x6f9;
}

/** IgnorableBlocks (D) and OldHangulJamo (I) of RFC 5892, as fixed code point ranges. */
function isIgnorableBlockOrOldJamo(code: number): boolean {
  return (
    (code >= 0x20d0 && code <= 0x20ff) ||
    (code >= 0x1d100 && code <= 0x1d24f) ||
    (code >= 0x1100 && code <= 0x11ff) ||
    (code >= 0xa960 && code <= 0xa97f) ||
    (code >= 0xd7b0 && code <= 0xd7ff)
  );
}

const cache = new Map<number, CodePointClass>();

/** The RFC 5892 section 3 algorithm, for a non-ASCII code point. */
function derive(char: string, code: number): CodePointClass {
  const exception = EXCEPTIONS.get(code);
  if (exception !== undefined) return exception;
  if (isArabicIndicDigit(code) || isExtendedArabicIndicDigit(code)) return 'contexto';
  if (UNASSIGNED.test(char)) return 'disallowed';
  if (nfkcCasefold(char) !== char) return 'disallowed'; // Unstable (B)
  if (IGNORABLE_PROPERTY.test(char) || isIgnorableBlockOrOldJamo(code)) return 'disallowed';
  return LETTER_DIGIT.test(char) ? 'pvalid' : 'disallowed';
}

/** IDNA2008 class of one code point (given as a one-code-point string). */
function classOf(char: string): CodePointClass {
  const code = char.codePointAt(0) ?? 0;
  if (code < 0x80) {
    const lowerLdh = (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2d;
    return lowerLdh ? 'pvalid' : 'disallowed';
  }
  let known = cache.get(code);
  if (known === undefined) {
    known = derive(char, code);
    // Bounded: at most one entry per code point seen, and only non-ASCII domains get here.
    if (cache.size < 65_536) cache.set(code, known);
  }
  return known;
}

const GREEK = /\p{Script=Greek}/u;
const HEBREW = /\p{Script=Hebrew}/u;
const KANA_OR_HAN = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;

/** The CONTEXTO rules of RFC 5892 Appendix A. `chars` is the label split into code points. */
function contextAllows(chars: readonly string[], index: number): boolean {
  const code = chars[index]?.codePointAt(0) ?? 0;
  const before = chars[index - 1];
  const after = chars[index + 1];
  switch (code) {
    case 0xb7: // MIDDLE DOT: only between two 'l' (Catalan "l·l")
      return before === 'l' && after === 'l';
    case 0x375: // GREEK LOWER NUMERAL SIGN: followed by Greek
      return after !== undefined && GREEK.test(after);
    case 0x5f3: // HEBREW PUNCTUATION GERESH / GERSHAYIM: preceded by Hebrew
    case 0x5f4:
      return before !== undefined && HEBREW.test(before);
    case 0x30fb: // KATAKANA MIDDLE DOT: somewhere in a label with Hiragana, Katakana or Han
      return chars.some((char) => char !== '\u30fb' && KANA_OR_HAN.test(char));
    default:
      if (isArabicIndicDigit(code))
        return !chars.some((char) => isExtendedArabicIndicDigit(char.codePointAt(0) ?? 0));
      return !chars.some((char) => isArabicIndicDigit(char.codePointAt(0) ?? 0));
  }
}

const LEADING_MARK = /^\p{M}/u;

/**
 * True when `label` (a U-label, or an ASCII label in lower case) is valid under IDNA2008 (RFC 5891 5.4):
 * NFC, no hyphen at either end or in both the 3rd and 4th position, no leading combining mark, every code
 * point PVALID or CONTEXTO in an allowed context, and the Bidi Rule.
 * @example
 * isValidIdnaLabel('bücher'); // true
 * isValidIdnaLabel('Bücher'); // false: upper case is not PVALID
 */
export function isValidIdnaLabel(label: string): boolean {
  if (label.length === 0 || label.normalize('NFC') !== label) return false;
  const chars = Array.from(label);
  if (chars[0] === '-' || chars[chars.length - 1] === '-') return false;
  if (chars[2] === '-' && chars[3] === '-') return false;
  if (LEADING_MARK.test(label)) return false;
  for (let i = 0; i < chars.length; i++) {
    const kind = classOf(chars[i] ?? '');
    if (kind === 'disallowed' || (kind === 'contexto' && !contextAllows(chars, i))) return false;
  }
  return satisfiesBidiRule(label);
}
