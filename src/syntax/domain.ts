/**
 * The domain after the `@`: host name syntax, IDNA (UTS #46 mapping, IDNA2008 validity, Punycode), lengths,
 * and the rules that make a name globally deliverable.
 * @module
 */
import punycode from 'punycode/punycode.js';
import { LDH } from './ascii.js';
import type { SyntaxFailure } from './failures.js';
import { isValidIdnaLabel } from './idna2008.js';
import { MAX_DOMAIN_OCTETS, MAX_LABEL_OCTETS } from './limits.js';
import { isSpecialUseTld, isWithin } from './special-use.js';
import { allowedNames, type SyntaxOptions } from './syntax-options.js';
import { hasUnsafeCharacter } from './unicode-safety.js';
import { uts46Map } from './uts46.js';

/** A valid domain in both forms. */
export interface DomainName {
  /** A-labels, lower case: the form sent in SMTP without SMTPUTF8 and looked up in DNS. */
  readonly ascii: string;
  /** U-labels, lower case (equal to `ascii` for a domain without IDN labels). */
  readonly unicode: string;
}

const NON_ASCII = /[^\0-\x7f]/;

/**
 * Checks `raw` (the text after the last `@`, not a domain literal) and returns both forms of the domain, or the
 * rule it breaks. Only `allowTlds` is read.
 * @example
 * parseDomainName('Bücher.example.COM'); // { ascii: 'xn--bcher-kva.example.com', unicode: 'bücher.example.com' }
 */
export function parseDomainName(raw: string, options: SyntaxOptions = {}): DomainName | SyntaxFailure {
  if (raw.length === 0) return 'domain_empty';
  const parsed = parseAsciiName(raw) ?? parseInternationalName(raw);
  return typeof parsed === 'string' ? parsed : deliverable(parsed, options);
}

/**
 * Fast path for plain ASCII host names: one pass, no allocation unless upper case must be lowered. Returns
 * `null` (hand over to the IDNA path) on the first non-ASCII character or `xn--` label.
 */
function parseAsciiName(raw: string): DomainName | SyntaxFailure | null {
  let labelStart = 0;
  let upper = false;
  for (let i = 0; i <= raw.length; i++) {
    const code = i < raw.length ? raw.charCodeAt(i) : 0x2e;
    if (code === 0x2e) {
      const length = i - labelStart;
      if (length === 0) return 'domain_dot';
      if (length > MAX_LABEL_OCTETS) return 'label_too_long';
      if (raw.charCodeAt(labelStart) === 0x2d || raw.charCodeAt(i - 1) === 0x2d) return 'domain_hyphen';
      if (length >= 4 && raw.charCodeAt(labelStart + 2) === 0x2d && raw.charCodeAt(labelStart + 3) === 0x2d) {
        return raw.slice(labelStart, labelStart + 2).toLowerCase() === 'xn'
          ? null
          : 'domain_reserved_hyphens';
      }
      labelStart = i + 1;
    } else if (code >= 0x80) return null;
    else if (LDH[code] !== 1) return 'domain_invalid_character';
    else if (code >= 0x41 && code <= 0x5a) upper = true;
  }
  const ascii = upper ? raw.toLowerCase() : raw;
  return { ascii, unicode: ascii };
}

/** The IDNA path: UTS #46 mapping, then each label checked and converted (RFC 5891 section 5). */
function parseInternationalName(raw: string): DomainName | SyntaxFailure {
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code < 0x80 && code !== 0x2e && LDH[code] !== 1) return 'domain_invalid_character';
  }
  if (hasUnsafeCharacter(raw)) return 'domain_unsafe_character';
  const mapped = uts46Map(raw);
  if (mapped === null) return 'domain_invalid_character';
  const asciiLabels: string[] = [];
  const unicodeLabels: string[] = [];
  for (const label of mapped.split('.')) {
    if (label.length === 0) return 'domain_dot';
    if (label.startsWith('-') || label.endsWith('-')) return 'domain_hyphen';
    const chars = Array.from(label);
    if (chars[2] === '-' && chars[3] === '-' && !label.startsWith('xn')) return 'domain_reserved_hyphens';
    let asciiLabel: string;
    let unicodeLabel: string;
    if (NON_ASCII.test(label)) {
      if (!isValidIdnaLabel(label)) return 'domain_idna_invalid';
      asciiLabel = `xn--${punycode.encode(label)}`;
      unicodeLabel = label;
    } else {
      const decoded = label.startsWith('xn--') ? decodeALabel(label) : label;
      if (decoded === null) return 'domain_idna_invalid';
      asciiLabel = label;
      unicodeLabel = decoded;
    }
    if (asciiLabel.length > MAX_LABEL_OCTETS) return 'label_too_long';
    asciiLabels.push(asciiLabel);
    unicodeLabels.push(unicodeLabel);
  }
  return { ascii: asciiLabels.join('.'), unicode: unicodeLabels.join('.') };
}

/**
 * The U-label of an A-label, or `null` unless the A-label is well-formed Punycode, is the canonical encoding of
 * what it decodes to (RFC 5891 5.4: decode, re-encode, compare), and decodes to a valid, safe U-label.
 */
function decodeALabel(label: string): string | null {
  const encoded = label.slice(4);
  if (encoded.length === 0 || encoded.endsWith('-')) return null;
  let decoded: string;
  try {
    decoded = punycode.decode(encoded);
  } catch {
    return null; // RangeError: malformed Punycode, overflow, or a code point beyond U+10FFFF
  }
  if (!NON_ASCII.test(decoded) || punycode.encode(decoded) !== encoded) return null;
  return !hasUnsafeCharacter(decoded) && isValidIdnaLabel(decoded) ? decoded : null;
}

/** Rules for a globally deliverable name, applied to the converted domain. */
function deliverable(name: DomainName, options: SyntaxOptions): DomainName | SyntaxFailure {
  const { ascii, unicode } = name;
  if (ascii.length > MAX_DOMAIN_OCTETS) return 'domain_too_long';
  const lastDot = ascii.lastIndexOf('.');
  // No dotless names: ICANN prohibits MX records on TLDs (2013); a caller may allow a name like `localhost`.
  if (lastDot === -1) {
    const allowed = allowedNames(options);
    if (!allowed.has(ascii) && !allowed.has(unicode)) return 'domain_dotless';
  }
  // Every TLD has at least two characters and ends with a letter (which also rules out all-numeric TLDs, and
  // so IPv4 addresses written without brackets). A Punycode label always ends with a letter.
  const last = ascii.charCodeAt(ascii.length - 1);
  if (last < 0x61 || last > 0x7a || ascii.length - lastDot < 3) return 'domain_invalid_tld';
  if (isSpecialUseTld(ascii.slice(lastDot + 1))) {
    const allowed = allowedNames(options);
    if (!isWithin(ascii, allowed) && !isWithin(unicode, allowed)) return 'domain_special_use';
  }
  return name;
}
