/**
 * Resources a verifier owns and shares between its verifications. Runtime-free: the seams the options leave unset
 * come from {@link PlatformDefaults} (Node's are in node-runtime.ts).
 * @module
 */
import type { Resolver } from './contracts/dns.js';
import type { Prober, ProberFactory } from './contracts/prober.js';
import type { Transport } from './contracts/smtp.js';
import { MailvetError } from './errors.js';
import { type DnsCounters, tellObserver, type VerifierObserver } from './observer.js';

/**
 * What a platform gives a verifier for the seams its options leave unset: each is called at most once per
 * verifier, when first needed (a verifier given `resolver`, `transport` and `heloHost` never calls them).
 */
export interface PlatformDefaults {
  /** The DNS seam when `resolver` is unset; the verifier closes it on dispose. */
  resolver(): Resolver;
  /** The TCP seam when `transport` is unset. */
  transport(): Transport;
  /** The HELO name when `heloHost` is unset. */
  heloHost(): string;
}

/** Shared resources of one verifier; created by `createVerifier`, released by `dispose()`. */
export interface VerifierRuntime {
  /** DNS seam (default: the platform's; on Node a cached node:dns resolver). */
  readonly resolver: Resolver;
  /** TCP seam (default: the platform's; on Node node:net). */
  readonly transport: Transport;
  /** Clock in milliseconds. */
  readonly now: () => number;
  /** Source of random bytes (catch-all probe names). */
  readonly randomBytes: (size: number) => Uint8Array;
  /** SMTP probing: the per-MX session pools and the catch-all cache. */
  readonly prober: Prober;
}

/**
 * What {@link createRuntime} reads of a verifier's resolved options (`ResolvedOptions` has every field): the seams
 * given, the HELO name and the pool settings.
 */
export interface RuntimeSettings {
  readonly resolver: Resolver | undefined;
  readonly transport: Transport | undefined;
  readonly heloHost: string | undefined;
  readonly perMxConcurrency: number;
  readonly concurrency: number;
  readonly maxRcptPerSession: number;
  readonly maxRejectsPerSession: number;
  readonly idleSessionMs: number;
  readonly mxBackoffMs: number;
  readonly catchAllTtlMs: number;
  readonly observer: VerifierObserver | undefined;
}

/** A runtime together with the means to release it. */
export interface OwnedRuntime extends VerifierRuntime {
  /** Releases pools, caches and timers. */
  close(): Promise<void>;
}

/**
 * Builds the runtime of a verifier from its resolved options, with `platform`'s default for each unset seam and
 * its prober made by `probing`. The resolver and the prober (pools, catch-all cache) are made on first use, so a
 * verifier that never goes on the network (`dns: false`, or a `verify(email, options)` call that fails syntax)
 * costs microseconds, not the milliseconds their caches take to allocate (mailvet's `smtpProbing` also imports the
 * prober's code on the first probe).
 */
export function createRuntime(
  options: RuntimeSettings,
  platform: PlatformDefaults,
  probing: ProberFactory,
): OwnedRuntime {
  const transport = options.transport ?? platform.transport();
  const now = Date.now;
  const randomBytes = (size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size));
  const observer = options.observer;
  let resolver: Resolver | undefined = options.resolver;
  if (resolver !== undefined) observeDns(resolver, observer);
  let prober: Prober | undefined;
  let closed = false;
  return {
    get resolver() {
      if (resolver === undefined) {
        resolver = platform.resolver();
        observeDns(resolver, observer);
      }
      return resolver;
    },
    transport,
    now,
    randomBytes,
    get prober() {
      if (closed && prober === undefined)
        throw new MailvetError('disposed', 'the verifier has been disposed');
      if (prober !== undefined) return prober;
      prober = probing.create({
        transport,
        heloHost: options.heloHost ?? platform.heloHost(),
        perMxConcurrency: options.perMxConcurrency,
        concurrency: options.concurrency,
        maxRcptPerSession: options.maxRcptPerSession,
        maxRejectsPerSession: options.maxRejectsPerSession,
        idleSessionMs: options.idleSessionMs,
        mxBackoffMs: options.mxBackoffMs,
        catchAllTtlMs: options.catchAllTtlMs,
        now,
        randomBytes,
      });
      const made = prober;
      const tell = observer?.smtp;
      if (tell !== undefined) tellObserver(() => tell(() => made.stats()));
      return made;
    },
    async close() {
      closed = true;
      await prober?.close();
      if (options.resolver === undefined) resolver?.close?.();
    },
  };
}

/** Hands the observer's `dns` callback the counters of `resolver`, when it keeps them (a cached resolver does). */
function observeDns(resolver: Resolver, observer: VerifierObserver | undefined): void {
  const tell = observer?.dns;
  const stats = (resolver as { stats?: () => DnsCounters }).stats;
  if (tell === undefined || typeof stats !== 'function') return;
  tellObserver(() => tell(() => stats.call(resolver)));
}
