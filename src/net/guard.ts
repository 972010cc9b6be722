/**
 * The SSRF guard: every address of a mail host passes here before any connection. Addresses that are not
 * globally routable (RFC 6890 special-purpose blocks, and IPv6 forms that embed such IPv4 addresses) are refused
 * unless the operator allow-listed them. Pure: text in, decision out.
 * @module
 */
import { OptionsError } from '../errors.js';

/** A parsed IP address: 4 bytes (IPv4) or 16 bytes (IPv6), network order. */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/** A parsed CIDR range; host bits are cleared. */
export interface CidrRange extends IpAddress {
  readonly prefix: number;
  /** The range as written (trimmed). */
  readonly text: string;
}

const MAX_IPV6_TEXT = 45; // 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255'
const DECIMAL_OCTET = /^(?:0|[1-9]\d{0,2})$/;
const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/**
 * Parses dotted-quad IPv4 strictly: four decimal octets 0-255 and no leading zeros, since `010.0.0.1` means
 * 8.0.0.1 to inet_aton (octal) and 10.0.0.1 to others, a classic guard bypass. Hex and short forms are refused.
 */
function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const bytes = new Uint8Array(4);
  for (const [index, part] of parts.entries()) {
    if (!DECIMAL_OCTET.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    bytes[index] = value;
  }
  return bytes;
}

function hexGroups(text: string): number[] | null {
  if (text === '') return [];
  const groups: number[] = [];
  for (const group of text.split(':')) {
    if (!HEX_GROUP.test(group)) return null;
    groups.push(Number.parseInt(group, 16));
  }
  return groups;
}

/** Parses RFC 4291 IPv6 text: full, `::`-compressed, and with a trailing dotted quad. Zone ids are refused. */
function parseIpv6(text: string): Uint8Array | null {
  if (text.length < 2 || text.length > MAX_IPV6_TEXT) return null;
  const lastColon = text.lastIndexOf(':');
  if (lastColon === -1) return null;
  let embedded: Uint8Array | null = null;
  let body = text;
  if (text.includes('.', lastColon)) {
    embedded = parseIpv4(text.slice(lastColon + 1));
    if (embedded === null) return null;
    body = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = body.split('::');
  if (halves.length > 2) return null;
  const head = hexGroups(halves[0] ?? '');
  const tail = halves.length === 2 ? hexGroups(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  const count = head.length + tail.length;
  if (halves.length === 1 ? count !== 8 : count > 7) return null;
  const groups = [...head, ...new Array<number>(8 - count).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  for (const [index, group] of groups.entries()) {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  }
  if (embedded !== null) bytes.set(embedded, 12);
  return bytes;
}

/**
 * Parses an IPv4 or IPv6 address in text form, or returns `null`. Refused: zone ids (`fe80::1%eth0`), brackets,
 * ports, octal/hex/short IPv4 forms, white space, and anything over 45 characters.
 * @example
 * parseIp('::ffff:10.0.0.1'); // { family: 6, bytes: Uint8Array(16) [0, ..., 0xff, 0xff, 10, 0, 0, 1] }
 * parseIp('010.0.0.1'); // null
 */
export function parseIp(text: string): IpAddress | null {
  if (typeof text !== 'string' || text.length > MAX_IPV6_TEXT) return null;
  if (text.includes(':')) {
    const bytes = parseIpv6(text);
    return bytes === null ? null : { family: 6, bytes };
  }
  const bytes = parseIpv4(text);
  return bytes === null ? null : { family: 4, bytes };
}

/** Parses `address/prefix` (or a bare address, a single-address range), or returns `null`. Host bits are cleared. */
export function parseCidr(text: string): CidrRange | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  const slash = trimmed.indexOf('/');
  const ip = parseIp(slash === -1 ? trimmed : trimmed.slice(0, slash));
  if (ip === null) return null;
  const bits = ip.family === 4 ? 32 : 128;
  let prefix = bits;
  if (slash !== -1) {
    const digits = trimmed.slice(slash + 1);
    if (!DECIMAL_OCTET.test(digits) || Number(digits) > bits) return null;
    prefix = Number(digits);
  }
  const bytes = ip.bytes.slice();
  for (let bit = prefix; bit < bits; bit++) bytes[bit >> 3] = (bytes[bit >> 3] ?? 0) & ~(0x80 >> (bit & 7));
  return { family: ip.family, bytes, prefix, text: trimmed };
}

/**
 * Parses a list of CIDR ranges (e.g. the `allowAddresses` option). Throws an {@link OptionsError} naming the
 * first bad entry and its position.
 * @example
 * parseCidrList(['10.0.0.0/8', 'fd00::/8']);
 * parseCidrList(['10.0.0.0/33']); // throws: allowAddresses entry 0 ("10.0.0.0/33") is not ...
 */
export function parseCidrList(list: readonly string[], option = 'allowAddresses'): CidrRange[] {
  return list.map((entry, index) => {
    const range = parseCidr(entry);
    if (range === null) {
      const shown = JSON.stringify(String(entry).slice(0, 64));
      throw new OptionsError(
        option,
        `entry ${index} (${shown}) is not an IP address or CIDR range such as 10.0.0.0/8 or fd00::/8`,
      );
    }
    return range;
  });
}

/** True when `ip` lies in `range` (same family, first `prefix` bits equal). */
export function inRange(ip: IpAddress, range: CidrRange): boolean {
  if (ip.family !== range.family) return false;
  const whole = range.prefix >> 3;
  for (let index = 0; index < whole; index++) {
    if (ip.bytes[index] !== range.bytes[index]) return false;
  }
  const rest = range.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((ip.bytes[whole] ?? 0) & mask) === (range.bytes[whole] ?? 0);
}

/** One blocked range and why it is blocked. */
export interface BlockedRange {
  readonly range: string;
  readonly name: string;
  readonly rfc: string;
}

/** IPv4 ranges that are never contacted unless allow-listed (RFC 6890 and its updates). */
export const BLOCKED_IPV4: readonly BlockedRange[] = [
  { range: '0.0.0.0/8', name: '"this network"', rfc: 'RFC 791' },
  { range: '10.0.0.0/8', name: 'private use', rfc: 'RFC 1918' },
  { range: '100.64.0.0/10', name: 'shared address space (CGNAT)', rfc: 'RFC 6598' },
  { range: '127.0.0.0/8', name: 'loopback', rfc: 'RFC 1122' },
  { range: '169.254.0.0/16', name: 'link local', rfc: 'RFC 3927' },
  { range: '172.16.0.0/12', name: 'private use', rfc: 'RFC 1918' },
  { range: '192.0.0.0/24', name: 'IETF protocol assignments', rfc: 'RFC 6890' },
  { range: '192.0.2.0/24', name: 'documentation (TEST-NET-1)', rfc: 'RFC 5737' },
  { range: '192.168.0.0/16', name: 'private use', rfc: 'RFC 1918' },
  { range: '198.18.0.0/15', name: 'benchmarking', rfc: 'RFC 2544' },
  { range: '198.51.100.0/24', name: 'documentation (TEST-NET-2)', rfc: 'RFC 5737' },
  { range: '203.0.113.0/24', name: 'documentation (TEST-NET-3)', rfc: 'RFC 5737' },
  { range: '224.0.0.0/4', name: 'multicast', rfc: 'RFC 5771' },
  { range: '240.0.0.0/4', name: 'reserved (and broadcast)', rfc: 'RFC 1112' },
];

/**
 * IPv6 ranges that are never contacted unless allow-listed. Besides these, anything outside global unicast
 * `2000::/3` is refused, and the forms that embed an IPv4 address are judged by that address (see
 * {@link EMBEDDED_IPV4}).
 */
export const BLOCKED_IPV6: readonly BlockedRange[] = [
  { range: '::/128', name: 'unspecified', rfc: 'RFC 4291' },
  { range: '::1/128', name: 'loopback', rfc: 'RFC 4291' },
  { range: '::/96', name: 'IPv4-compatible (deprecated)', rfc: 'RFC 4291' },
  { range: '64:ff9b:1::/48', name: 'local-use IPv4/IPv6 translation', rfc: 'RFC 8215' },
  { range: '100::/64', name: 'discard-only', rfc: 'RFC 6666' },
  { range: '2001::/23', name: 'IETF protocol assignments (Teredo, benchmarking, ORCHID)', rfc: 'RFC 2928' },
  { range: '2001:db8::/32', name: 'documentation', rfc: 'RFC 3849' },
  { range: '3fff::/20', name: 'documentation', rfc: 'RFC 9637' },
  { range: '5f00::/16', name: 'SRv6 SIDs', rfc: 'RFC 9602' },
  { range: 'fc00::/7', name: 'unique local', rfc: 'RFC 4193' },
  { range: 'fe80::/10', name: 'link local', rfc: 'RFC 4291' },
  { range: 'fec0::/10', name: 'site local (deprecated)', rfc: 'RFC 3879' },
  { range: 'ff00::/8', name: 'multicast', rfc: 'RFC 4291' },
];

/** IPv6 forms that carry an IPv4 address, and where: such an address is judged by its IPv4 address. */
export const EMBEDDED_IPV4: readonly (BlockedRange & { readonly offset: number })[] = [
  { range: '::ffff:0:0/96', name: 'IPv4-mapped', rfc: 'RFC 4291', offset: 12 },
  { range: '64:ff9b::/96', name: 'NAT64 well-known prefix', rfc: 'RFC 6052', offset: 12 },
  { range: '2002::/16', name: '6to4', rfc: 'RFC 3056', offset: 2 },
];

const GLOBAL_UNICAST = parseCidr('2000::/3') as CidrRange;
/** The IPv4-mapped form (`::ffff:a.b.c.d`): the only embedded form that an IPv4 allow entry opens. */
const IPV4_MAPPED = '::ffff:0:0/96';

/** A list of blocked ranges with each range parsed. */
type Compiled<T extends BlockedRange> = (T & { readonly cidr: CidrRange })[];

function compile<T extends BlockedRange>(list: readonly T[]): Compiled<T> {
  return list.map((entry) => ({ ...entry, cidr: parseCidr(entry.range) as CidrRange }));
}

/** The blocked ranges, parsed on the first check (a process that checks no address parses none). */
let compiled:
  | {
      readonly v4: Compiled<BlockedRange>;
      readonly v6: Compiled<BlockedRange>;
      readonly embedded: Compiled<(typeof EMBEDDED_IPV4)[number]>;
    }
  | undefined;

function ranges(): NonNullable<typeof compiled> {
  compiled ??= { v4: compile(BLOCKED_IPV4), v6: compile(BLOCKED_IPV6), embedded: compile(EMBEDDED_IPV4) };
  return compiled;
}

/** Why the guard let an address through or not. */
export type GuardReason = 'global' | 'allow_listed' | 'special_purpose' | 'malformed';

/** The guard's decision on one address. */
export interface GuardDecision {
  readonly allowed: boolean;
  readonly reason: GuardReason;
  /** For `special_purpose`: the blocked range and its name, e.g. `10.0.0.0/8 private use (via ::ffff:0:0/96 IPv4-mapped)`. */
  readonly detail: string | null;
}

/** Decides which addresses may be contacted. */
export interface AddressGuard {
  /** The decision on `address`, with its reason. */
  check(address: string): GuardDecision;
  /** True when `address` may be contacted. */
  allows(address: string): boolean;
}

function describe(entry: BlockedRange): string {
  return `${entry.range} ${entry.name}`;
}

/**
 * Creates a guard that refuses every address that is not globally routable, unless it (or the IPv4 address an
 * IPv6 form embeds) lies in one of the `allow` ranges. Unparseable addresses are refused.
 * @example
 * const guard = createAddressGuard(['127.0.0.0/8']);
 * guard.allows('127.0.0.2'); // true (allow-listed)
 * guard.allows('10.1.2.3'); // false (private use)
 * guard.allows('::ffff:10.1.2.3'); // false (the same, IPv4-mapped)
 */
export function createAddressGuard(allow: readonly (string | CidrRange)[] = []): AddressGuard {
  const allowed = allow.map((entry) =>
    typeof entry === 'string' ? parseCidrList([entry])[0] : entry,
  ) as CidrRange[];
  const isAllowListed = (ip: IpAddress) => allowed.some((range) => inRange(ip, range));

  function check(address: string): GuardDecision {
    const ip = parseIp(address);
    if (ip === null) return { allowed: false, reason: 'malformed', detail: null };
    if (isAllowListed(ip)) return { allowed: true, reason: 'allow_listed', detail: null };
    const blocks = ranges();
    if (ip.family === 6) {
      const carrier = blocks.embedded.find((entry) => inRange(ip, entry.cidr));
      if (carrier !== undefined) {
        const v4: IpAddress = { family: 4, bytes: ip.bytes.slice(carrier.offset, carrier.offset + 4) };
        // Only the IPv4-mapped form is the IPv4 host itself (a dual-stack socket): an allow entry for an IPv4
        // range opens it. NAT64 and 6to4 forms go through a translator or relay and leave the host, so they
        // stay refused unless the IPv6 range itself is allowed (checked above).
        if (carrier.range === IPV4_MAPPED && isAllowListed(v4))
          return { allowed: true, reason: 'allow_listed', detail: null };
        const blocked = blocks.v4.find((entry) => inRange(v4, entry.cidr));
        return blocked === undefined
          ? { allowed: true, reason: 'global', detail: null }
          : {
              allowed: false,
              reason: 'special_purpose',
              detail: `${describe(blocked)} (via ${describe(carrier)})`,
            };
      }
      const blocked = blocks.v6.find((entry) => inRange(ip, entry.cidr));
      if (blocked !== undefined)
        return { allowed: false, reason: 'special_purpose', detail: describe(blocked) };
      if (!inRange(ip, GLOBAL_UNICAST)) {
        return { allowed: false, reason: 'special_purpose', detail: 'outside 2000::/3 global unicast' };
      }
      return { allowed: true, reason: 'global', detail: null };
    }
    const blocked = blocks.v4.find((entry) => inRange(ip, entry.cidr));
    if (blocked !== undefined)
      return { allowed: false, reason: 'special_purpose', detail: describe(blocked) };
    return { allowed: true, reason: 'global', detail: null };
  }

  return { check, allows: (address) => check(address).allowed };
}

/**
 * True when `address` may be contacted: globally routable, or inside one of the `allow` ranges.
 * @example
 * isRoutable('8.8.8.8'); // true
 * isRoutable('fe80::1'); // false
 * isRoutable('fe80::1', ['fe80::/10']); // true
 */
export function isRoutable(address: string, allow: readonly (string | CidrRange)[] = []): boolean {
  return createAddressGuard(allow).allows(address);
}
