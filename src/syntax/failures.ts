/**
 * Why an address failed the syntax check: stable codes, one per rule (see docs/syntax.md).
 * @module
 */

/** Every syntax failure code, in the order the rules are applied. */
export const SYNTAX_FAILURES = [
  'empty',
  'too_long',
  'forbidden_character',
  'replacement_character',
  'no_at_sign',
  'local_empty',
  'local_too_long',
  'local_invalid_character',
  'local_dot',
  'local_unicode_not_allowed',
  'local_unsafe_character',
  'quoted_local_not_allowed',
  'quoted_local_invalid',
  'domain_empty',
  'domain_invalid_character',
  'domain_unsafe_character',
  'domain_dot',
  'domain_hyphen',
  'domain_reserved_hyphens',
  'domain_idna_invalid',
  'domain_too_long',
  'label_too_long',
  'domain_dotless',
  'domain_invalid_tld',
  'domain_special_use',
  'domain_literal_not_allowed',
  'domain_literal_invalid',
] as const;

/** A stable code naming the syntax rule an address broke. */
export type SyntaxFailure = (typeof SYNTAX_FAILURES)[number];
