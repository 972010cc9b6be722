/**
 * A DNS zone described as data, shared by {@link staticResolver} and the test DNS server, so that an in-memory
 * resolver and a real server on loopback answer the same questions the same way.
 * @module
 */
import type { MxRecord } from '../dns/types.js';

/** How a name fails instead of answering: an error rcode, or no reply at all (`timeout`). */
export type ZoneFailure = 'nxdomain' | 'servfail' | 'refused' | 'timeout';

/** The record types a zone serves. */
export type ZoneRecordType = 'MX' | 'A' | 'AAAA' | 'PTR' | 'TXT';

/** What one name holds. A name listed with no records exists (its lookups answer "no data"). */
export interface ZoneEntry {
  /** MX records. A null MX (RFC 7505) is `{ priority: 0, exchange: '.' }` (or `''`). */
  readonly mx?: readonly MxRecord[];
  /** IPv4 addresses. */
  readonly a?: readonly string[];
  /** IPv6 addresses (embedded IPv4 forms such as `::ffff:10.0.0.1` are fine). */
  readonly aaaa?: readonly string[];
  /** PTR targets (host names), for reverse names such as `7.113.0.203.in-addr.arpa`. */
  readonly ptr?: readonly string[];
  /** TXT records, one string each (a server splits longer ones into 255-byte character-strings). */
  readonly txt?: readonly string[];
  /** An alias: every lookup of this name continues at the target (the entry's other records are ignored). */
  readonly cname?: string;
  /** TTL of this name's records, in seconds. @default 300 */
  readonly ttl?: number;
  /** Fail every lookup of this name, or only lookups of some types, instead of answering. */
  readonly fail?:
    | ZoneFailure
    | {
        readonly mx?: ZoneFailure;
        readonly a?: ZoneFailure;
        readonly aaaa?: ZoneFailure;
        readonly ptr?: ZoneFailure;
        readonly txt?: ZoneFailure;
      };
}

/**
 * Names (any case, trailing dot optional) mapped to what they hold. Names not listed do not exist (NXDOMAIN).
 * @example
 * const zone: Zone = {
 *   'example.com': { mx: [{ priority: 10, exchange: 'mx.example.com' }] },
 *   'mx.example.com': { a: ['192.0.2.25'], ttl: 60 },
 *   'null.example': { mx: [{ priority: 0, exchange: '.' }] },
 *   'broken.example': { fail: 'servfail' },
 *   'example.org': { txt: ['v=spf1 ip4:192.0.2.0/24 -all'] },
 *   '25.2.0.192.in-addr.arpa': { ptr: ['mx.example.com'] },
 * };
 */
export type Zone = Readonly<Record<string, ZoneEntry>>;

/** Default TTL of zone records, in seconds. */
export const ZONE_DEFAULT_TTL = 300;

/** Most CNAME hops followed before a lookup fails (a loop or an absurd chain answers SERVFAIL). */
export const ZONE_MAX_CNAME_HOPS = 8;

/** One CNAME hop met while answering. */
export interface ZoneAlias {
  readonly name: string;
  readonly target: string;
  readonly ttl: number;
}

/** The zone's answer to one question, with the CNAME hops that led to it. */
export type ZoneAnswer =
  | {
      readonly kind: 'records';
      readonly aliases: readonly ZoneAlias[];
      /** The name that holds the records (the last CNAME target, or the queried name). */
      readonly owner: string;
      readonly mx: readonly MxRecord[];
      readonly addresses: readonly string[];
      /** PTR targets (normalized), for a PTR question. */
      readonly names: readonly string[];
      /** TXT records, for a TXT question. */
      readonly texts: readonly string[];
      readonly ttl: number;
    }
  | { readonly kind: 'nodata' | 'nxdomain'; readonly aliases: readonly ZoneAlias[] }
  | { readonly kind: 'fail'; readonly failure: ZoneFailure };

/** A zone with normalized names, ready to answer. */
export interface CompiledZone {
  answer(name: string, type: ZoneRecordType): ZoneAnswer;
}

/** Lower-cases a name and strips one trailing dot (`Example.COM.` gives `example.com`). */
export function normalizeZoneName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

function failureOf(entry: ZoneEntry, type: ZoneRecordType): ZoneFailure | undefined {
  const fail = entry.fail;
  if (fail === undefined || typeof fail === 'string') return fail;
  const byType = { MX: fail.mx, A: fail.a, AAAA: fail.aaaa, PTR: fail.ptr, TXT: fail.txt } as const;
  return byType[type];
}

/** Normalizes a zone's names (and MX exchanges: `.` becomes `''`, as node:dns reports a null MX). */
export function compileZone(zone: Zone): CompiledZone {
  const names = new Map<string, ZoneEntry>();
  for (const [name, entry] of Object.entries(zone)) names.set(normalizeZoneName(name), entry);

  return {
    answer(name, type) {
      const aliases: ZoneAlias[] = [];
      let current = normalizeZoneName(name);
      for (let hop = 0; hop <= ZONE_MAX_CNAME_HOPS; hop++) {
        const entry = names.get(current);
        if (entry === undefined) return { kind: 'nxdomain', aliases };
        const failure = failureOf(entry, type);
        if (failure !== undefined) return { kind: 'fail', failure };
        const ttl = entry.ttl ?? ZONE_DEFAULT_TTL;
        if (entry.cname !== undefined) {
          const target = normalizeZoneName(entry.cname);
          aliases.push({ name: current, target, ttl });
          current = target;
          continue;
        }
        const mx =
          type === 'MX'
            ? (entry.mx ?? []).map((record) => ({
                priority: record.priority,
                exchange: normalizeZoneName(record.exchange),
              }))
            : [];
        const addresses = type === 'A' ? (entry.a ?? []) : type === 'AAAA' ? (entry.aaaa ?? []) : [];
        const targets = type === 'PTR' ? (entry.ptr ?? []).map(normalizeZoneName) : [];
        const texts = type === 'TXT' ? (entry.txt ?? []) : [];
        if (mx.length + addresses.length + targets.length + texts.length === 0)
          return { kind: 'nodata', aliases };
        return { kind: 'records', aliases, owner: current, mx, addresses, names: targets, texts, ttl };
      }
      return { kind: 'fail', failure: 'servfail' };
    },
  };
}
