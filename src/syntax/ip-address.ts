/**
 * Strict IPv4 and IPv6 text forms, as used in address literals (RFC 5321 4.1.3), and the canonical IPv6 text
 * form (RFC 5952). Same acceptance as Python's `ipaddress` (no leading zeros in IPv4 octets), without zone ids.
 * @module
 */

const OCTET = /^(?:0|[1-9][0-9]{0,2})$/;
const HEXTET = /^[0-9a-fA-F]{1,4}$/;

/**
 * The four octets of a dotted-quad IPv4 address, or `null`.
 * @example
 * parseIPv4('192.0.2.1'); // [192, 0, 2, 1]
 * parseIPv4('192.0.2.01'); // null: leading zeros are ambiguous (octal in some parsers)
 */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const octets: number[] = [];
  for (const part of parts) {
    if (!OCTET.test(part)) return null;
    const value = Number(part);
    if (value > 255) return null;
    octets.push(value);
  }
  return octets;
}

/**
 * The eight 16-bit groups of an IPv6 address (RFC 4291 2.2 text forms, including `::` and a trailing dotted
 * quad), or `null`.
 * @example
 * parseIPv6('2001:db8::1'); // [0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]
 */
export function parseIPv6(text: string): number[] | null {
  const parts = text.split(':');
  if (parts.length < 3 || parts.length > 9) return null;
  const last = parts[parts.length - 1] ?? '';
  if (last.includes('.')) {
    const octets = parseIPv4(last);
    if (octets === null) return null;
    const [a = 0, b = 0, c = 0, d = 0] = octets;
    parts.splice(parts.length - 1, 1, ((a << 8) | b).toString(16), ((c << 8) | d).toString(16));
    if (parts.length > 9) return null;
  }
  let gap = -1;
  for (let i = 1; i < parts.length - 1; i++) {
    if (parts[i] !== '') continue;
    if (gap !== -1) return null; // at most one '::'
    gap = i;
  }
  let head = parts;
  let tail: string[] = [];
  if (gap === -1) {
    if (parts.length !== 8) return null;
  } else {
    head = parts.slice(0, gap);
    tail = parts.slice(gap + 1);
    // A leading or trailing ':' is only allowed as half of the '::'.
    if (head[0] === '') {
      if (head.length !== 1) return null;
      head = [];
    }
    if (tail[tail.length - 1] === '') {
      if (tail.length !== 1) return null;
      tail = [];
    }
    if (head.length + tail.length > 7) return null; // '::' stands for at least one group
  }
  const groups: number[] = [];
  for (const part of head) if (!pushHextet(groups, part)) return null;
  while (groups.length < 8 - tail.length) groups.push(0);
  for (const part of tail) if (!pushHextet(groups, part)) return null;
  return groups;
}

function pushHextet(groups: number[], part: string): boolean {
  if (!HEXTET.test(part)) return false;
  groups.push(Number.parseInt(part, 16));
  return true;
}

/**
 * RFC 5952 text form of eight groups: lower-case hex without leading zeros, the longest run of two or more zero
 * groups (the first, on a tie) written `::`.
 * @example
 * formatIPv6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1]); // '2001:db8::1'
 */
export function formatIPv6(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < groups.length; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let end = i;
    while (end < groups.length && groups[end] === 0) end++;
    if (end - i > bestLength) {
      bestStart = i;
      bestLength = end - i;
    }
    i = end;
  }
  const hex = groups.map((group) => group.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}
