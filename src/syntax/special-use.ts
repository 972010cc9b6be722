/**
 * Domain names that can never be globally deliverable: special-use and reserved names.
 * @module
 */

/**
 * Top-level names under which no public mailbox can exist:
 * - IANA Special-Use Domain Names registry (RFC 6761 and later): `test`, `localhost`, `invalid`, `example`,
 *   `local` (RFC 6762), `onion` (RFC 7686), `alt` (RFC 9476), and all of `arpa` (which covers `home.arpa`,
 *   `ipv4only.arpa`, `resolver.arpa`, `service.arpa`, the reverse zones, ...), as python-email-validator does;
 * - `internal`, reserved by ICANN for private use (2024);
 * - `corp`, `home` and `mail`, name-collision strings ICANN will not delegate (Board resolution 2018.02.04.12).
 *
 * `example.com`, `example.net` and `example.org` are real, registered domains (with a null MX) and are not
 * listed: the DNS check reports them.
 */
export const SPECIAL_USE_TLDS: ReadonlySet<string> = new Set([
  'alt',
  'arpa',
  'corp',
  'example',
  'home',
  'internal',
  'invalid',
  'local',
  'localhost',
  'mail',
  'onion',
  'test',
]);

/**
 * True when `domain` or one of its parent domains (at a label boundary) is in `names`.
 * @example
 * isWithin('mx.corp.test', new Set(['test'])); // true
 */
export function isWithin(domain: string, names: ReadonlySet<string>): boolean {
  if (names.size === 0) return false;
  if (names.has(domain)) return true;
  for (let dot = domain.indexOf('.'); dot !== -1; dot = domain.indexOf('.', dot + 1)) {
    if (names.has(domain.slice(dot + 1))) return true;
  }
  return false;
}

/** True when `tld` (lower case, ASCII) is in {@link SPECIAL_USE_TLDS}. */
export function isSpecialUseTld(tld: string): boolean {
  return SPECIAL_USE_TLDS.has(tld);
}
