/**
 * What a resolver accepts as a name to look up. Checked before anything reaches DNS: node:dns would otherwise
 * cut a name at a NUL byte, punycode a Unicode name behind the caller's back, or query the root for `''`.
 * @module
 */
import { DnsError } from '../errors.js';

/** Longest name (without the trailing dot) DNS can carry. */
export const MAX_NAME_LENGTH = 253;

const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * Normalizes a host name for lookup: lower case, one trailing dot removed. Returns `null` unless every label is
 * 1-63 ASCII letters, digits, `-` or `_` (not starting or ending with `-`) and the whole is at most 253
 * characters. Unicode names must be converted to A-labels first.
 * @example
 * lookupName('MX.Example.COM.'); // 'mx.example.com'
 * lookupName('exämple.com'); // null
 */
export function lookupName(name: unknown): string | null {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME_LENGTH + 1) return null;
  const bare = (name.endsWith('.') ? name.slice(0, -1) : name).toLowerCase();
  if (bare.length === 0 || bare.length > MAX_NAME_LENGTH) return null;
  for (const label of bare.split('.')) {
    if (!LABEL.test(label)) return null;
  }
  return bare;
}

/** A printable, bounded rendering of a hostile name for error messages. */
export function describeName(name: unknown): string {
  const text = typeof name === 'string' ? name : String(name);
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
  return `${shown}${text.length > 80 ? ` (${text.length} characters)` : ''}`;
}

/** {@link lookupName}, throwing a {@link DnsError} of reason `malformed` for a name DNS cannot carry. */
export function requireLookupName(name: unknown): string {
  const normalized = lookupName(name);
  if (normalized === null) {
    const shown = describeName(name);
    throw new DnsError('malformed', shown, `${shown} is not a valid DNS name`);
  }
  return normalized;
}
