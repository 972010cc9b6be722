/**
 * The local part (before the `@`): RFC 5321 dot-atom, RFC 6531 UTF-8 dot-atom, and, when allowed, an RFC 5321
 * quoted string, reduced to its minimal quoting.
 * @module
 */
import { ATEXT } from './ascii.js';
import type { SyntaxFailure } from './failures.js';
import { MAX_LOCAL_OCTETS, utf8Length } from './limits.js';
import type { SyntaxOptions } from './syntax-options.js';
import { hasUnsafeCharacter } from './unicode-safety.js';

/** A valid local part in canonical form. */
export interface LocalPart {
  /** NFC-normalized, case kept; quoted (with minimal escaping) only when it cannot be a dot-atom. */
  readonly local: string;
  /** True when the local part holds non-ASCII characters, so that delivery needs SMTPUTF8 (RFC 6531). */
  readonly smtpUtf8: boolean;
}

const NON_ASCII = /[^\0-\x7f]/;
const ASCII_CONTROL = /[\0-\x1f\x7f]/;
const NEEDS_ESCAPE = /["\\]/g;

/**
 * Checks `raw` (the text before the last `@`) and returns it in canonical form, or the rule it breaks. Only
 * `allowSmtpUtf8` and `allowQuotedLocal` are read.
 * @example
 * parseLocalPart('"john.doe"', { allowQuotedLocal: true }); // { local: 'john.doe', smtpUtf8: false }
 */
export function parseLocalPart(raw: string, options: SyntaxOptions): LocalPart | SyntaxFailure {
  if (raw.length === 0) return 'local_empty';
  if (raw.charCodeAt(0) === 0x22) return parseQuoted(raw, options);
  const problem = dotAtomProblem(raw);
  if (problem !== null) return problem;
  if (!NON_ASCII.test(raw))
    return raw.length > MAX_LOCAL_OCTETS ? 'local_too_long' : { local: raw, smtpUtf8: false };
  if (options.allowSmtpUtf8 === false) return 'local_unicode_not_allowed';
  // RFC 6532 3.1: NFC. Normalization can produce ASCII that dot-atom forbids (U+037E GREEK QUESTION MARK is ';').
  const local = raw.normalize('NFC');
  const normalizedProblem = dotAtomProblem(local);
  if (normalizedProblem !== null) return normalizedProblem;
  if (hasUnsafeCharacter(local)) return 'local_unsafe_character';
  return sized(local, NON_ASCII.test(local));
}

/**
 * The dot-atom rule (RFC 5322 3.2.3) with RFC 6531's extension: ASCII `atext` or any non-ASCII character, in
 * runs separated by single dots. A bad character is reported before a bad dot.
 */
function dotAtomProblem(text: string): 'local_invalid_character' | 'local_dot' | null {
  let previousDot = true;
  let badDot = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x2e) {
      if (previousDot) badDot = true;
      previousDot = true;
    } else if (code < 0x80 && ATEXT[code] !== 1) {
      return 'local_invalid_character';
    } else previousDot = false;
  }
  return badDot || previousDot ? 'local_dot' : null;
}

function parseQuoted(raw: string, options: SyntaxOptions): LocalPart | SyntaxFailure {
  if (options.allowQuotedLocal !== true) return 'quoted_local_not_allowed';
  let value = '';
  let i = 1;
  for (; i < raw.length; i++) {
    const char = raw[i];
    if (char === '"') break;
    if (char === '\\') i++; // quoted-pair: the next character stands for itself
    if (i >= raw.length) return 'quoted_local_invalid';
    value += raw[i];
  }
  // Unclosed, or something after the closing quote (`"a"b`, `"a"."b"`).
  if (i !== raw.length - 1) return 'quoted_local_invalid';
  if (value.length === 0) return 'local_empty';
  // qtext and quoted-pair (RFC 5321 4.1.2): printable ASCII and space; RFC 6531 adds any non-ASCII.
  if (ASCII_CONTROL.test(value)) return 'quoted_local_invalid';
  let local = value;
  if (NON_ASCII.test(value)) {
    if (options.allowSmtpUtf8 === false) return 'local_unicode_not_allowed';
    local = value.normalize('NFC');
    if (hasUnsafeCharacter(local, true)) return 'local_unsafe_character';
  }
  const smtpUtf8 = NON_ASCII.test(local);
  // RFC 5321 4.1.2: "the form that uses the minimum quoting possible".
  if (dotAtomProblem(local) === null) return sized(local, smtpUtf8);
  return sized(`"${local.replace(NEEDS_ESCAPE, '\\$&')}"`, smtpUtf8);
}

function sized(local: string, smtpUtf8: boolean): LocalPart | SyntaxFailure {
  return utf8Length(local) > MAX_LOCAL_OCTETS ? 'local_too_long' : { local, smtpUtf8 };
}
