/**
 * One sentence for each syntax failure code, for the `reason` of a result (see docs/syntax.md for the rules).
 * @module
 */
import type { SyntaxFailure } from './failures.js';

const TEXT: Readonly<Record<SyntaxFailure, string>> = {
  empty: 'the address is empty',
  too_long: 'the address is longer than 254 octets (RFC 5321)',
  forbidden_character: 'the address holds a CR, LF or NUL, which no address may hold',
  replacement_character:
    'the address holds U+FFFD, the mark of text damaged by a broken decoding upstream (check the file encoding)',
  no_at_sign: 'the address has no @',
  local_empty: 'the part before the @ is empty',
  local_too_long: 'the part before the @ is longer than 64 octets (RFC 5321)',
  local_invalid_character: 'the part before the @ holds a character an unquoted local part may not hold',
  local_dot: 'the part before the @ starts or ends with a dot, or has two dots in a row',
  local_unicode_not_allowed:
    'the part before the @ is not ASCII, and internationalized (SMTPUTF8) addresses are off',
  local_unsafe_character:
    'the part before the @ holds an invisible, control or text-reordering character (unsafe Unicode)',
  quoted_local_not_allowed: 'the part before the @ is a quoted string, and quoted local parts are off',
  quoted_local_invalid: 'the quoted part before the @ is malformed',
  domain_empty: 'the domain is empty',
  domain_invalid_character: 'the domain holds a character no domain name may hold',
  domain_unsafe_character:
    'the domain holds an invisible, control or text-reordering character (unsafe Unicode)',
  domain_dot: 'the domain starts or ends with a dot, or has two dots in a row',
  domain_hyphen: 'a label of the domain starts or ends with a hyphen',
  domain_reserved_hyphens: 'a label of the domain has -- in 3rd and 4th position without being an xn-- label',
  domain_idna_invalid: 'the internationalized domain is not valid IDNA2008',
  domain_too_long: 'the domain is longer than 253 octets',
  label_too_long: 'a label of the domain is longer than 63 octets',
  domain_dotless: 'the domain has no dot: no public mailbox lives on a top-level domain alone',
  domain_invalid_tld: 'the top-level domain is not one (numeric, or a single character)',
  domain_special_use:
    'the domain is a special-use name (RFC 6761: .test, .example, .invalid, .localhost, .local, ...) that is not on the internet; allow it with the allowTlds option (--allow-tld)',
  domain_literal_not_allowed: 'the domain is an address literal ([1.2.3.4]), and address literals are off',
  domain_literal_invalid: 'the address literal is malformed',
};

/**
 * A human-readable sentence for a syntax failure code.
 * @example
 * explainSyntaxFailure('no_at_sign'); // 'the address has no @'
 */
export function explainSyntaxFailure(failure: SyntaxFailure): string {
  return TEXT[failure];
}
