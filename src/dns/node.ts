/**
 * The default {@link Resolver}: node:dns (c-ares), talking to the system's name servers or to `servers`.
 * @module
 */
import { Resolver as DnsResolver } from 'node:dns/promises';
import { DnsError, type DnsFailure, OptionsError } from '../errors.js';
import { integerOption } from '../option-fields.js';
import { guardedLookup, raceSignal } from './abort.js';
import { keepPreferred, mergeAddressAnswers } from './merge.js';
import { parseNameServer, probeNoData } from './nodata-probe.js';
import { requireReverseName } from './reverse.js';
import type { DnsAnswer, LookupOptions, MxRecord, Resolver } from './types.js';

/** Options of {@link nodeResolver}. */
export interface NodeResolverOptions {
  /**
   * Name servers, as `'ip'` or `'ip:port'` (`'[::1]:53'` for IPv6 with a port), e.g. `['127.0.0.1:5353']`.
   * @default the system's (from /etc/resolv.conf)
   */
  readonly servers?: readonly string[];
  /** Time to wait for one reply, in milliseconds. @default 2500 */
  readonly timeoutMs?: number;
  /** Attempts per name server before a lookup fails with `timeout`. @default 2 */
  readonly tries?: number;
  /** Most records accepted from one answer; MX answers keep the most preferred. @default 100 */
  readonly maxRecords?: number;
}

/** A {@link Resolver} on node:dns. */
export interface NodeResolver extends Resolver {
  /** PTR lookups (node:dns `resolvePtr` of the reverse name). */
  ptr(address: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /** TXT lookups (node:dns `resolveTxt`; each record's strings joined). */
  txt(name: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /** Cancels lookups in flight (they reject with `DnsError` `aborted`); later lookups reject the same way. */
  close(): void;
}

/** c-ares error codes (as node:dns reports them) mapped to why a lookup got no answer. */
const FAILURES: Readonly<Record<string, DnsFailure>> = {
  ESERVFAIL: 'servfail',
  EREFUSED: 'refused',
  ECONNREFUSED: 'refused',
  ENOTIMP: 'refused',
  ETIMEOUT: 'timeout',
  EFORMERR: 'malformed',
  EBADRESP: 'malformed',
  EBADQUERY: 'malformed',
  EBADNAME: 'malformed',
  EBADFAMILY: 'malformed',
  ECANCELLED: 'aborted',
  EDESTRUCTION: 'aborted',
};

function serverList(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.length > 16) {
    throw new OptionsError('servers', 'must be an array of 1-16 name server addresses');
  }
  for (const server of value) {
    if (typeof server !== 'string' || server.length === 0 || server.length > 64) {
      throw new OptionsError('servers', 'entries must be addresses such as 192.0.2.53 or 127.0.0.1:5353');
    }
  }
  return value as string[];
}

/** Turns a node:dns rejection into an answer (`nodata`, `nxdomain`) or a thrown {@link DnsError}. */
function answerOrThrow(error: unknown, name: string, type: string): DnsAnswer<never> {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENODATA') return { kind: 'nodata' };
  if (code === 'ENOTFOUND') return { kind: 'nxdomain' };
  const reason = (typeof code === 'string' ? FAILURES[code] : undefined) ?? 'other';
  throw new DnsError(reason, name, `${type} lookup of ${name} failed (${String(code ?? 'unknown error')})`, {
    cause: error,
  });
}

/**
 * Creates a resolver on node:dns. MX answers carry no TTL there (node does not report it), so a cache above
 * uses its default (`cachedResolver`'s `defaultTtlMs`); A and AAAA answers carry the smallest record TTL.
 * PTR and TXT answers carry no TTL either.
 * A lookup that gets no answer throws a `DnsError`: SERVFAIL gives reason `servfail`; REFUSED or a closed
 * server port `refused`; no reply after `tries` attempts `timeout`; a bad name or reply `malformed`.
 * @example
 * const resolver = nodeResolver({ servers: ['127.0.0.1:5353'], timeoutMs: 1000 });
 * const answer = await resolver.mx('example.com');
 * resolver.close();
 */
export function nodeResolver(options: NodeResolverOptions = {}): NodeResolver {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', 2_500, 1, 600_000);
  const tries = integerOption(options.tries, 'tries', 2, 1, 10);
  const maxRecords = integerOption(options.maxRecords, 'maxRecords', 100, 1, 10_000);
  const servers = serverList(options.servers);
  const resolver = new DnsResolver({ timeout: timeoutMs, tries });
  if (servers !== undefined) {
    try {
      resolver.setServers(servers);
    } catch (error) {
      throw new OptionsError('servers', `are not valid name server addresses (${(error as Error).message})`);
    }
  }
  let closed = false;

  async function ask<T>(
    name: string,
    type: string,
    query: () => Promise<DnsAnswer<T>>,
  ): Promise<DnsAnswer<T>> {
    if (closed) throw new DnsError('aborted', name, `${type} lookup of ${name}: the resolver is closed`);
    try {
      return await query();
    } catch (error) {
      return answerOrThrow(error, name, type);
    }
  }

  /**
   * c-ares reports a reply truncated even over TCP, and an answer of looping CNAMEs, as "no data": a second
   * look over TCP tells them apart, so that they fail the lookup (`dns_error`) instead of reading as a domain
   * without mail servers.
   */
  async function confirmNoData(name: string): Promise<DnsAnswer<never>> {
    const server = parseNameServer(resolver.getServers()[0] ?? '');
    if (server === undefined || closed) return { kind: 'nodata' };
    const verdict = await probeNoData(server, name, 15, timeoutMs);
    if (verdict === 'truncated') {
      throw new DnsError(
        'malformed',
        name,
        `MX lookup of ${name} failed (the reply is truncated even over TCP)`,
      );
    }
    if (verdict === 'cname_loop') {
      throw new DnsError('servfail', name, `MX lookup of ${name} failed (its CNAME records loop)`);
    }
    return { kind: 'nodata' };
  }

  async function mx(name: string): Promise<DnsAnswer<MxRecord>> {
    const answer = await mxAnswer(name);
    return answer.kind === 'nodata' ? confirmNoData(name) : answer;
  }

  function mxAnswer(name: string): Promise<DnsAnswer<MxRecord>> {
    return ask(name, 'MX', async () => {
      const records = await resolver.resolveMx(name);
      if (records.length === 0) return { kind: 'nodata' };
      const kept = keepPreferred(records, maxRecords);
      return {
        kind: 'records',
        records: kept.map((record) => ({ exchange: record.exchange, priority: record.priority })),
      };
    });
  }

  function family(name: string, type: 'A' | 'AAAA'): Promise<DnsAnswer<string>> {
    return ask(name, type, async () => {
      const records = await (type === 'A'
        ? resolver.resolve4(name, { ttl: true })
        : resolver.resolve6(name, { ttl: true }));
      if (records.length === 0) return { kind: 'nodata' };
      const kept = records.slice(0, maxRecords);
      return {
        kind: 'records',
        records: kept.map((record) => record.address),
        ttlSeconds: Math.min(...kept.map((record) => record.ttl)),
      };
    });
  }

  function names(name: string): Promise<DnsAnswer<string>> {
    return ask(name, 'PTR', async () => {
      const records = await resolver.resolvePtr(name);
      if (records.length === 0) return { kind: 'nodata' };
      return {
        kind: 'records',
        records: records.slice(0, maxRecords).map((host) => host.replace(/\.$/, '')),
      };
    });
  }

  function texts(name: string): Promise<DnsAnswer<string>> {
    return ask(name, 'TXT', async () => {
      const records = await resolver.resolveTxt(name);
      if (records.length === 0) return { kind: 'nodata' };
      return { kind: 'records', records: records.slice(0, maxRecords).map((chunks) => chunks.join('')) };
    });
  }

  return {
    mx(domain: string, lookupOptions?: LookupOptions) {
      return guardedLookup(domain, lookupOptions?.signal, mx);
    },
    addresses(host: string, lookupOptions?: LookupOptions) {
      return guardedLookup(host, lookupOptions?.signal, (name) =>
        Promise.allSettled([family(name, 'A'), family(name, 'AAAA')]).then(([v4, v6]) =>
          mergeAddressAnswers(v4, v6, maxRecords),
        ),
      );
    },
    ptr(address: string, lookupOptions?: LookupOptions) {
      let name: string;
      try {
        name = requireReverseName(address);
      } catch (error) {
        return Promise.reject(error);
      }
      return raceSignal(names(name), name, lookupOptions?.signal);
    },
    txt(name: string, lookupOptions?: LookupOptions) {
      return guardedLookup(name, lookupOptions?.signal, texts);
    },
    close() {
      if (closed) return;
      closed = true;
      resolver.cancel();
    },
  };
}
