/**
 * The DNS seam: what the verifier asks of a resolver. Declared in the core (which calls through it and imports no
 * seam module); `dns/types.ts` re-exports it beside the implementations.
 * @module
 */

/** One MX record. A null MX (RFC 7505) arrives as `{ exchange: '', priority: 0 }`. */
export interface MxRecord {
  readonly exchange: string;
  readonly priority: number;
}

/**
 * An answer from DNS is a value: records, "the name exists but has no such records" (`nodata`) or
 * "the name does not exist" (`nxdomain`). Failing to get an answer (SERVFAIL, REFUSED, timeout) is a thrown
 * {@link DnsError} instead. An answer is never changed once handed out: the MX check keeps what it derives from
 * one (sorted hosts, guarded addresses) with that answer object, for as long as a cache hands it out again.
 */
export type DnsAnswer<T> =
  | { readonly kind: 'records'; readonly records: readonly T[]; readonly ttlSeconds?: number }
  | { readonly kind: 'nodata'; readonly ttlSeconds?: number }
  | { readonly kind: 'nxdomain'; readonly ttlSeconds?: number };

/** Per-lookup options. */
export interface LookupOptions {
  /** Aborts the lookup; the promise then rejects with a {@link DnsError} of reason `aborted`. */
  readonly signal?: AbortSignal;
}

/** The DNS seam. Implementations: `nodeResolver()`, `cachedResolver()`, or your own. */
export interface Resolver {
  /** MX records of `domain` (ASCII form), in any order. */
  mx(domain: string, options?: LookupOptions): Promise<DnsAnswer<MxRecord>>;
  /** IPv4 and IPv6 addresses of `host` (A and AAAA together), as text. */
  addresses(host: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /**
   * Host names of the PTR records of `address` (an IPv4 or IPv6 address as text; the reverse name is made
   * here), without trailing dots. Optional: resolvers written before it may lack it, and whatever needs it
   * (`diagnose()`) then reports the check as skipped. A bad address rejects with `DnsError` `malformed`.
   */
  ptr?(address: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /**
   * TXT records of `name`, each record's character-strings joined into one string (as SPF reads them).
   * Optional, like {@link Resolver.ptr}.
   */
  txt?(name: string, options?: LookupOptions): Promise<DnsAnswer<string>>;
  /**
   * The answer already at hand for an `mx` or `addresses` lookup of `name`, without waiting: a cached answer, or
   * `undefined` when a lookup would have to ask (nothing cached, expired, a remembered failure, a bad name).
   * Optional: with it, a verification whose every answer is cached skips the machinery of a lookup under way
   * (abort signal, budget timer, promises). `cachedResolver` has it.
   */
  peek?<K extends 'mx' | 'addresses'>(
    kind: K,
    name: string,
  ): DnsAnswer<K extends 'mx' ? MxRecord : string> | undefined;
  /** Releases sockets, timers and caches. Optional. */
  close?(): void;
}
