/**
 * `parseAddress`: the whole syntax check as one pure function.
 * @module
 */
import punycode from 'punycode/punycode.js';
import type { AddressParts } from '../checks/types.js';
import { type DomainName, parseDomainName } from './domain.js';
import { type DomainLiteral, parseDomainLiteral } from './domain-literal.js';
import type { SyntaxFailure } from './failures.js';
import { MAX_ADDRESS_OCTETS, MAX_BEST_EFFORT_LENGTH, utf8Length } from './limits.js';
import { parseLocalPart } from './local-part.js';
import type { SyntaxOptions } from './syntax-options.js';
import { uts46Map } from './uts46.js';

/** A syntactically valid address. */
export interface ValidAddress {
  readonly ok: true;
  /** The address in canonical parts. */
  readonly address: AddressParts;
  /** The local part (equal to `address.local`). */
  readonly user: string;
  /** The ASCII domain (equal to `address.domain`). */
  readonly domain: string;
}

/** An address that broke a syntax rule, with what could still be read from it. */
export interface InvalidAddress {
  readonly ok: false;
  /** The rule it broke (see docs/syntax.md). */
  readonly reason: SyntaxFailure;
  /** The text before the last `@`, or `null` when there is none, it is empty, or it holds a control character. */
  readonly user: string | null;
  /** The text after the last `@`, lower case and in ASCII form when it converts, else `null`. */
  readonly domain: string | null;
}

/** The outcome of {@link parseAddress}. */
export type SyntaxResult = ValidAddress | InvalidAddress;

const NON_ASCII = /[^\0-\x7f]/;
/** CR, LF and NUL can never be part of an address (they would end or split an SMTP command line). */
const FORBIDDEN = /[\r\n\0]/;
const CONTROL = /[\0-\x1f\x7f-\x9f]/;
/** U+FFFD REPLACEMENT CHARACTER: text that went through a broken decoding upstream, never a real address. */
const REPLACEMENT = '\uFFFD';

/**
 * Checks that `input` is a deliverable address (RFC 5321 envelope syntax, with the stricter rules listed in
 * docs/syntax.md) and returns it in canonical parts, or the rule it broke. Pure and total: it never throws,
 * and work is bounded by the length limit whatever the input. `input` is used as given (not trimmed).
 * @example
 * const result = parseAddress('José.Ñoño@Bücher.DE');
 * if (result.ok) result.address.normalized; // 'José.Ñoño@xn--bcher-kva.de'
 */
export function parseAddress(input: string, options: SyntaxOptions = {}): SyntaxResult {
  if (input.length === 0) return invalid('empty', null, null);
  // Every UTF-16 code unit is at least one UTF-8 octet: longer input cannot be within the limit.
  if (input.length > MAX_ADDRESS_OCTETS) return invalidWithParts('too_long', input);
  if (FORBIDDEN.test(input)) return invalidWithParts('forbidden_character', input);
  if (input.includes(REPLACEMENT)) return invalidWithParts('replacement_character', input);
  const at = input.lastIndexOf('@');
  if (at === -1) return invalid('no_at_sign', null, null);
  const rawLocal = input.slice(0, at);
  const rawDomain = input.slice(at + 1);
  const local = parseLocalPart(rawLocal, options);
  if (typeof local === 'string') return invalid(local, bestUser(rawLocal), bestDomain(rawDomain));
  let domain: DomainName | DomainLiteral | SyntaxFailure;
  let literalAddress: string | null = null;
  if (rawDomain.startsWith('[')) {
    domain =
      options.allowDomainLiteral === true ? parseDomainLiteral(rawDomain) : 'domain_literal_not_allowed';
    if (typeof domain !== 'string') literalAddress = domain.address;
  } else {
    domain = parseDomainName(rawDomain, options);
  }
  if (typeof domain === 'string') return invalid(domain, bestUser(rawLocal), bestDomain(rawDomain));
  const asciiDomain = 'ascii' in domain ? domain.ascii : domain.domain;
  const unicodeDomain = 'unicode' in domain ? domain.unicode : domain.domain;
  const normalized = `${local.local}@${asciiDomain}`;
  // The limit holds for the input, the canonical form, and the form with the domain in Unicode.
  const localOctets = local.smtpUtf8 ? utf8Length(local.local) : local.local.length;
  const unicodeOctets = unicodeDomain === asciiDomain ? asciiDomain.length : utf8Length(unicodeDomain);
  if (
    localOctets + 1 + Math.max(asciiDomain.length, unicodeOctets) > MAX_ADDRESS_OCTETS ||
    (NON_ASCII.test(input) && utf8Length(input) > MAX_ADDRESS_OCTETS)
  ) {
    return invalid('too_long', local.local, asciiDomain);
  }
  const address: AddressParts = {
    local: local.local,
    domain: asciiDomain,
    unicodeDomain,
    normalized,
    smtpUtf8: local.smtpUtf8,
    literalAddress,
  };
  return { ok: true, address, user: local.local, domain: asciiDomain };
}

function invalid(reason: SyntaxFailure, user: string | null, domain: string | null): InvalidAddress {
  return { ok: false, reason, user, domain };
}

/** Splits over-long or forbidden input for the result, unless it is too long to be worth the work. */
function invalidWithParts(reason: SyntaxFailure, input: string): InvalidAddress {
  if (input.length > MAX_BEST_EFFORT_LENGTH) return invalid(reason, null, null);
  const at = input.lastIndexOf('@');
  if (at === -1) return invalid(reason, null, null);
  return invalid(reason, bestUser(input.slice(0, at)), bestDomain(input.slice(at + 1)));
}

function bestUser(raw: string): string | null {
  return raw.length === 0 || CONTROL.test(raw) ? null : raw;
}

/** The domain as read, lower case and ASCII when it converts; `null` when empty, or with a control character. */
function bestDomain(raw: string): string | null {
  if (raw.length === 0 || CONTROL.test(raw)) return null;
  if (!NON_ASCII.test(raw)) return raw.toLowerCase();
  const mapped = uts46Map(raw);
  if (mapped === null) return null;
  try {
    return mapped
      .split('.')
      .map((label) => (NON_ASCII.test(label) ? `xn--${punycode.encode(label)}` : label))
      .join('.');
  } catch {
    return null; // a lone surrogate makes Punycode throw
  }
}
