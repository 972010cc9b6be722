/**
 * Address literals after the `@` (RFC 5321 4.1.3): `[192.0.2.1]` and `[IPv6:2001:db8::1]`. No other tag is
 * registered, so anything else in brackets is invalid.
 * @module
 */
import type { SyntaxFailure } from './failures.js';
import { formatIPv6, parseIPv4, parseIPv6 } from './ip-address.js';

/** A valid address literal in canonical form. */
export interface DomainLiteral {
  /** The literal with its brackets, IPv6 in RFC 5952 form: `[192.0.2.1]`, `[IPv6:2001:db8::1]`. */
  readonly domain: string;
  /** The IP address alone: `192.0.2.1`, `2001:db8::1`. */
  readonly address: string;
}

const DIGITS_AND_DOTS = /^[0-9.]+$/;

/**
 * Parses `raw` (the text after the `@`, brackets included) as an address literal.
 * @example
 * parseDomainLiteral('[IPv6:2001:0DB8:0:0:0:0:0:1]'); // { domain: '[IPv6:2001:db8::1]', address: '2001:db8::1' }
 */
export function parseDomainLiteral(raw: string): DomainLiteral | SyntaxFailure {
  if (raw.length < 2 || !raw.startsWith('[') || !raw.endsWith(']')) return 'domain_literal_invalid';
  const inner = raw.slice(1, -1);
  if (DIGITS_AND_DOTS.test(inner)) {
    return parseIPv4(inner) === null ? 'domain_literal_invalid' : { domain: `[${inner}]`, address: inner };
  }
  if (inner.startsWith('IPv6:')) {
    const groups = parseIPv6(inner.slice(5));
    if (groups === null) return 'domain_literal_invalid';
    const address = formatIPv6(groups);
    return { domain: `[IPv6:${address}]`, address };
  }
  return 'domain_literal_invalid';
}
