/**
 * Options of the syntax rules: the same names and defaults as the `verify` options, so that a verifier's
 * resolved options can be passed as they are.
 * @module
 */

/** Options of `parseAddress`. */
export interface SyntaxOptions {
  /** Accept internationalized (RFC 6531) local parts. @default true */
  readonly allowSmtpUtf8?: boolean;
  /** Accept quoted local parts (`"john doe"@example.com`). @default false */
  readonly allowQuotedLocal?: boolean;
  /** Accept address literals (`user@[192.0.2.1]`, `user@[IPv6:2001:db8::1]`). @default false */
  readonly allowDomainLiteral?: boolean;
  /**
   * Special-use or dotless names to accept (`test`, `localhost`, `home.arpa`): the name itself and every
   * domain under it. Matched in lower case; a leading dot is ignored. @default []
   */
  readonly allowTlds?: ReadonlySet<string> | readonly string[];
}

const EMPTY: ReadonlySet<string> = new Set();

/** `allowTlds` as a set of lower-case names (a set is taken as already normalized, as `resolveOptions` makes it). */
export function allowedNames(options: SyntaxOptions): ReadonlySet<string> {
  const value = options.allowTlds;
  if (value === undefined) return EMPTY;
  if (!Array.isArray(value)) return value as ReadonlySet<string>;
  return new Set(value.map((name) => name.trim().toLowerCase().replace(/^\./, '')));
}
