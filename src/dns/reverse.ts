/**
 * Reverse names of IP addresses: `7.113.0.203.in-addr.arpa` for PTR lookups, and the same reversed labels under
 * another zone for DNS blocklist queries (`7.113.0.203.zen.spamhaus.org`).
 * @module
 */
import { DnsError } from '../errors.js';
import { parseIp } from '../net/guard.js';
import { describeName } from '../net/name.js';

/** The address's labels, least significant first: four octets (IPv4) or 32 nibbles (IPv6), or `null`. */
export function reversedLabels(address: string): string[] | null {
  const ip = parseIp(address);
  if (ip === null) return null;
  if (ip.family === 4) return [...ip.bytes].reverse().map(String);
  const nibbles: string[] = [];
  for (const byte of ip.bytes) nibbles.push((byte >> 4).toString(16), (byte & 0xf).toString(16));
  return nibbles.reverse();
}

/**
 * The name a PTR lookup of `address` asks for, or `null` when `address` is no IPv4 or IPv6 address.
 * @example
 * reverseName('203.0.113.7'); // '7.113.0.203.in-addr.arpa'
 * reverseName('2001:db8::1'); // '1.0.0.0. ... .8.b.d.0.1.0.0.2.ip6.arpa'
 */
export function reverseName(address: string): string | null {
  const labels = reversedLabels(address);
  if (labels === null) return null;
  return `${labels.join('.')}.${labels.length === 4 ? 'in-addr.arpa' : 'ip6.arpa'}`;
}

/** {@link reverseName}, throwing a {@link DnsError} of reason `malformed` for anything but an IP address. */
export function requireReverseName(address: unknown): string {
  const name = typeof address === 'string' ? reverseName(address) : null;
  if (name === null) {
    const shown = describeName(address);
    throw new DnsError('malformed', shown, `${shown} is not an IPv4 or IPv6 address`);
  }
  return name;
}
