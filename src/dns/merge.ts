/**
 * Shaping answers the same way in every resolver: the A and AAAA answers of one host merged into the one answer
 * `Resolver.addresses()` gives, and over-long MX answers cut down to the most preferred records.
 * @module
 */
import type { DnsAnswer, MxRecord } from './types.js';

/** At most `max` MX records: all of them when they fit, else the most preferred (ties in the order given). */
export function keepPreferred(records: readonly MxRecord[], max: number): readonly MxRecord[] {
  return records.length <= max ? records : records.toSorted((a, b) => a.priority - b.priority).slice(0, max);
}

function minTtl(values: readonly (number | undefined)[]): number | undefined {
  const known = values.filter((value): value is number => value !== undefined);
  return known.length === 0 ? undefined : Math.min(...known);
}

/**
 * Merges the settled A and AAAA lookups of a host:
 * - records from either family win (IPv4 first, then IPv6; at most `maxRecords`), even when the other family
 *   failed (many servers mishandle AAAA);
 * - otherwise a failure is rethrown (the IPv4 one first), since the host may well have addresses;
 * - otherwise `nxdomain` when both families say the name does not exist, else `nodata`.
 * The TTL is the smallest of those reported.
 */
export function mergeAddressAnswers(
  v4: PromiseSettledResult<DnsAnswer<string>>,
  v6: PromiseSettledResult<DnsAnswer<string>>,
  maxRecords: number,
): DnsAnswer<string> {
  const answers = [v4, v6].flatMap((settled) => (settled.status === 'fulfilled' ? [settled.value] : []));
  const records = answers.flatMap((answer) => (answer.kind === 'records' ? answer.records : []));
  if (records.length > 0) {
    const ttl = minTtl(answers.map((answer) => (answer.kind === 'records' ? answer.ttlSeconds : undefined)));
    const bounded = [...new Set(records)].slice(0, maxRecords);
    return ttl === undefined
      ? { kind: 'records', records: bounded }
      : { kind: 'records', records: bounded, ttlSeconds: ttl };
  }
  for (const settled of [v4, v6]) {
    if (settled.status === 'rejected') throw settled.reason;
  }
  const kind = answers.every((answer) => answer.kind === 'nxdomain') ? 'nxdomain' : 'nodata';
  const ttl = minTtl(answers.map((answer) => answer.ttlSeconds));
  return ttl === undefined ? { kind } : { kind, ttlSeconds: ttl };
}
