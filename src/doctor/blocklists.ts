/**
 * DNS blocklists (DNSBL, RFC 5782): is the egress address listed, and why. A query asks for the A record of the
 * address's reversed labels under the list's zone (`7.113.0.203.zen.spamhaus.org`); an answer in 127.0.0.0/8
 * means listed, NXDOMAIN means not listed, and the TXT record at the same name gives the reason.
 * @module
 */

import { reversedLabels } from '../dns/reverse.js';
import type { Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import { parseIp } from '../net/guard.js';

/** One default blocklist, with where its usage terms are stated. */
export interface BlocklistInfo {
  /** The DNS zone to query. */
  readonly zone: string;
  /** Who runs it. */
  readonly name: string;
  /** Its usage terms, in one line (see docs/doctor.md). */
  readonly terms: string;
}

/**
 * The blocklists queried by default: widely used public lists whose terms allow an occasional query of one's own
 * address. `mailvet doctor` asks each once per run. Spamhaus refuses queries that come through large public
 * resolvers (8.8.8.8, 1.1.1.1, ...) with the answer 127.255.255.254: the check then warns rather than guess.
 */
export const DEFAULT_BLOCKLISTS: readonly BlocklistInfo[] = Object.freeze([
  {
    zone: 'zen.spamhaus.org',
    name: 'Spamhaus ZEN',
    terms:
      'free for low-volume, non-commercial use; queries through public resolvers are refused; commercial use needs a Spamhaus subscription',
  },
  {
    zone: 'bl.spamcop.net',
    name: 'SpamCop',
    terms: 'free public DNS lookups; heavy users are asked to mirror the zone',
  },
  {
    zone: 'psbl.surriel.com',
    name: 'Passive Spam Block List',
    terms: 'free to query; heavy users are asked to rsync the zone',
  },
]);

/** What one blocklist said about the address. */
export interface BlocklistAnswer {
  readonly zone: string;
  /** `listed`, `clear`, `refused` (the list answered with an error code, e.g. 127.255.255.254), or `error`. */
  readonly outcome: 'listed' | 'clear' | 'refused' | 'error';
  /** The A records returned (return codes such as `127.0.0.2`). */
  readonly codes: readonly string[];
  /** The listing's TXT reason, when listed and the resolver has `txt()`. */
  readonly reason: string | null;
  /** For `refused` and `error`: what went wrong. */
  readonly problem: string | null;
}

const MAX_REASON = 300;

function isLoopbackV4(address: string): boolean {
  const ip = parseIp(address);
  return ip !== null && ip.family === 4 && ip.bytes[0] === 127;
}

/**
 * Queries one blocklist for `address`. Never throws: a failed lookup is an answer of outcome `error`.
 * Answers outside 127.0.0.0/8 are not listings (a resolver that rewrites NXDOMAIN to an advert gives those);
 * 127.255.255.x is a list's error code (Spamhaus: refused for public resolvers, or over the free limit).
 */
export async function queryBlocklist(
  resolver: Resolver,
  address: string,
  zone: string,
  signal?: AbortSignal,
): Promise<BlocklistAnswer> {
  const labels = reversedLabels(address);
  const base = { zone, codes: [] as string[], reason: null, problem: null };
  if (labels === null) return { ...base, outcome: 'error', problem: `${address} is not an IP address` };
  const name = `${labels.join('.')}.${zone}`;
  const options = signal === undefined ? {} : { signal };
  try {
    const answer = await resolver.addresses(name, options);
    if (answer.kind !== 'records') return { ...base, outcome: 'clear' };
    const codes = answer.records.filter(isLoopbackV4);
    if (codes.length === 0) {
      return {
        ...base,
        outcome: 'error',
        codes: answer.records.slice(0, 4),
        problem:
          'the answer lies outside 127.0.0.0/8: the resolver rewrites missing names, so the list cannot be read',
      };
    }
    if (codes.every((code) => code.startsWith('127.255.255.'))) {
      return {
        ...base,
        outcome: 'refused',
        codes,
        problem: `the list refused the query (${codes.join(', ')}); query it through your own resolver, within its terms`,
      };
    }
    let reason: string | null = null;
    if (resolver.txt !== undefined) {
      const texts = await resolver.txt(name, options).catch(() => null);
      if (texts?.kind === 'records' && texts.records.length > 0) {
        reason = texts.records
          .join(' ')
          .replace(/[\u0000-\u001f\u007f]/g, ' ')
          .slice(0, MAX_REASON);
      }
    }
    return { ...base, outcome: 'listed', codes, reason };
  } catch (error) {
    const why = error instanceof DnsError ? error.reason : 'error';
    return { ...base, outcome: 'error', problem: `the lookup of ${name} failed (${why})` };
  }
}
