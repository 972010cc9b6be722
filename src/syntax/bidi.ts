/**
 * The Bidi Rule of IDNA (RFC 5893 section 2) for one label. JavaScript exposes no Bidi_Class property, so the
 * class of each code point that IDNA permits in a label is derived from its general category and the
 * right-to-left ranges of DerivedBidiClass.txt, with the few exceptions listed below. Checked against Python's
 * `unicodedata.bidirectional` (Unicode 15.1) for every permitted code point: no difference.
 * @module
 */

/** The bidi classes that can occur in a valid label. */
type BidiClass = 'L' | 'R' | 'AL' | 'AN' | 'EN' | 'ES' | 'ON' | 'NSM';

const MARK = /[\p{Mn}\p{Me}]/u;
const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u{10800}-\u{10fff}\u{1e800}-\u{1efff}]/u;

/** Modifier letters and one other whose class is ON rather than L. */
const OTHER_NEUTRAL = new Set([
  0xb7, 0x375, 0x2b9, 0x2ba, 0x2c6, 0x2c7, 0x2c8, 0x2c9, 0x2ca, 0x2cb, 0x2cc, 0x2cd, 0x2ce, 0x2cf, 0x2ec,
  0x2e2f, 0x30fb, 0xa67f, 0xa717, 0xa718, 0xa719, 0xa71a, 0xa71b, 0xa71c, 0xa71d, 0xa71e, 0xa71f, 0xa788,
]);
/** Non-spacing marks whose class is L, and a spacing mark whose class is NSM. */
const MARK_LEFT = new Set([0xcbf, 0xcc6, 0x11a07, 0x11a08, 0x11c3f]);
const SPACING_NSM = 0x1171e;

function isArabicLetterRange(code: number): boolean {
  return (
    (code >= 0x600 && code <= 0x7bf) ||
    (code >= 0x860 && code <= 0x8ff) ||
    (code >= 0xfb50 && code <= 0xfdcf) ||
    (code >= 0xfdf0 && code <= 0xfdff) ||
    (code >= 0xfe70 && code <= 0xfeff) ||
    (code >= 0x10d00 && code <= 0x10d3f) ||
    (code >= 0x10ec0 && code <= 0x10eff) ||
    (code >= 0x10f30 && code <= 0x10f6f) ||
    (code >= 0x1ec70 && code <= 0x1ecbf) ||
    (code >= 0x1ed00 && code <= 0x1ed4f) ||
    (code >= 0x1ee00 && code <= 0x1eeff)
  );
}

/** Bidi class of a code point that IDNA2008 permits in a label (PVALID or CONTEXTO). */
function bidiClass(char: string): BidiClass {
  const code = char.codePointAt(0) ?? 0;
  if (code === 0x2d) return 'ES';
  if (code >= 0x30 && code <= 0x39) return 'EN';
  if (code < 0x80) return 'L';
  if (OTHER_NEUTRAL.has(code)) return 'ON';
  if (code === SPACING_NSM) return 'NSM';
  if (MARK.test(char)) return MARK_LEFT.has(code) ? 'L' : 'NSM';
  if ((code >= 0x660 && code <= 0x669) || (code >= 0x10d30 && code <= 0x10d39)) return 'AN';
  if (code >= 0x6f0 && code <= 0x6f9) return 'EN';
  if (!RTL.test(char)) return 'L';
  return isArabicLetterRange(code) ? 'AL' : 'R';
}

/**
 * True when `label` satisfies the Bidi Rule. Labels without R, AL or AN characters always do.
 * @example
 * satisfiesBidiRule('שלום'); // true
 * satisfiesBidiRule('aשלום'); // false: an LTR label cannot hold R characters
 */
export function satisfiesBidiRule(label: string): boolean {
  const classes: BidiClass[] = [];
  let rtlLabel = false;
  for (const char of label) {
    const kind = bidiClass(char);
    if (kind === 'R' || kind === 'AL' || kind === 'AN') rtlLabel = true;
    classes.push(kind);
  }
  if (!rtlLabel) return true;
  const first = classes[0];
  // Rule 1: the first character is L, R or AL.
  if (first !== 'L' && first !== 'R' && first !== 'AL') return false;
  const rtl = first !== 'L';
  let validEnding = false;
  let numberType: BidiClass | null = null;
  for (const kind of classes) {
    if (rtl) {
      // Rule 2 (the classes CS, ET, BN never occur in a valid label), rule 3, rule 4.
      if (kind === 'L') return false;
      if (kind === 'R' || kind === 'AL' || kind === 'EN' || kind === 'AN') validEnding = true;
      else if (kind !== 'NSM') validEnding = false;
      if (kind === 'EN' || kind === 'AN') {
        if (numberType !== null && numberType !== kind) return false;
        numberType = kind;
      }
    } else {
      // Rule 5, rule 6.
      if (kind === 'R' || kind === 'AL' || kind === 'AN') return false;
      if (kind === 'L' || kind === 'EN') validEnding = true;
      else if (kind !== 'NSM') validEnding = false;
    }
  }
  return validEnding;
}
