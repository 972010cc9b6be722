/**
 * An in-memory {@link Resolver} that answers from a {@link Zone}: for unit tests, and for callers who know their
 * routing already (an internal relay, a fixed test domain).
 * @module
 */
import { guardedLookup } from '../dns/abort.js';
import { keepPreferred, mergeAddressAnswers } from '../dns/merge.js';
import { requireReverseName } from '../dns/reverse.js';
import type { DnsAnswer, LookupOptions, MxRecord, Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import { compileZone, type Zone, type ZoneRecordType } from './zone.js';

/** One lookup a {@link StaticResolver} answered (or failed). */
export interface StaticLookup {
  readonly name: string;
  readonly type: ZoneRecordType;
}

/** A resolver over a fixed zone, which also records the lookups it served. */
export interface StaticResolver extends Resolver {
  /** Every record lookup made (`addresses()` makes two: A and AAAA), in order. */
  readonly lookups: readonly StaticLookup[];
  /** PTR lookups: the zone's entry for the address's reverse name. */
  ptr(address: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /** TXT lookups. */
  txt(name: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
}

/** Options of {@link staticResolver}. */
export interface StaticResolverOptions {
  /** Most records one answer carries, as `nodeResolver` bounds them. @default 100 */
  readonly maxRecords?: number;
}

const REASON = { servfail: 'servfail', refused: 'refused', timeout: 'timeout' } as const;

/**
 * Creates a resolver that answers from `zone` at once. Zone failures become what a real server would cause:
 * `nxdomain` an answer, `servfail`, `refused` and `timeout` a thrown `DnsError` (a `timeout` throws at once
 * rather than waiting). Names are checked as `nodeResolver` checks them (`DnsError` `malformed`).
 * @example
 * const resolver = staticResolver({
 *   'example.com': { mx: [{ priority: 10, exchange: 'mx.example.com' }] },
 *   'mx.example.com': { a: ['192.0.2.25'] },
 * });
 * const verifier = createVerifier({ resolver, allowAddresses: ['192.0.2.0/24'] });
 */
export function staticResolver(zone: Zone, options: StaticResolverOptions = {}): StaticResolver {
  const compiled = compileZone(zone);
  const maxRecords = options.maxRecords ?? 100;
  const lookups: StaticLookup[] = [];

  function lookup(name: string, type: ZoneRecordType): DnsAnswer<MxRecord | string> {
    lookups.push({ name, type });
    const answer = compiled.answer(name, type);
    if (answer.kind === 'fail') {
      if (answer.failure === 'nxdomain') return { kind: 'nxdomain' };
      const reason = REASON[answer.failure];
      throw new DnsError(reason, name, `${type} lookup of ${name} failed: ${reason}`);
    }
    if (answer.kind !== 'records') return { kind: answer.kind };
    const records =
      type === 'MX'
        ? keepPreferred(answer.mx, maxRecords)
        : (type === 'PTR' ? answer.names : type === 'TXT' ? answer.texts : answer.addresses).slice(
            0,
            maxRecords,
          );
    return { kind: 'records', records, ttlSeconds: answer.ttl };
  }

  function settle<T>(name: string, type: ZoneRecordType): Promise<DnsAnswer<T>> {
    try {
      return Promise.resolve(lookup(name, type) as DnsAnswer<T>);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  return {
    lookups,
    mx(domain: string, lookupOptions?: LookupOptions) {
      return guardedLookup(domain, lookupOptions?.signal, (name) => settle<MxRecord>(name, 'MX'));
    },
    addresses(host: string, lookupOptions?: LookupOptions) {
      return guardedLookup(host, lookupOptions?.signal, (name) =>
        Promise.allSettled([settle<string>(name, 'A'), settle<string>(name, 'AAAA')]).then(([v4, v6]) =>
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
      return guardedLookup(name, lookupOptions?.signal, (reverse) => settle<string>(reverse, 'PTR'));
    },
    txt(name: string, lookupOptions?: LookupOptions) {
      return guardedLookup(name, lookupOptions?.signal, (checked) => settle<string>(checked, 'TXT'));
    },
  };
}
