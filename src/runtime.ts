/**
 * Resources a verifier owns and shares between its verifications.
 * @module
 */
import { cachedResolver } from './dns/cached.js';
import { nodeResolver } from './dns/node.js';
import type { Resolver } from './dns/types.js';
import { MailvetError } from './errors.js';
import type { ResolvedOptions } from './options.js';
import { defaultHeloHost } from './smtp/host.js';
import { createProber, type Prober } from './smtp/prober.js';
import { tcpTransport } from './smtp/tcp.js';
import type { Transport } from './smtp/types.js';

/** Shared resources of one verifier; created by `createVerifier`, released by `dispose()`. */
export interface VerifierRuntime {
  /** DNS seam (default: a cached node:dns resolver). */
  readonly resolver: Resolver;
  /** TCP seam (default: node:net). */
  readonly transport: Transport;
  /** Clock in milliseconds. */
  readonly now: () => number;
  /** Source of random bytes (catch-all probe names). */
  readonly randomBytes: (size: number) => Uint8Array;
  /** SMTP probing: the per-MX session pools and the catch-all cache. */
  readonly prober: Prober;
}

/** A runtime together with the means to release it. */
export interface OwnedRuntime extends VerifierRuntime {
  /** Releases pools, caches and timers. */
  close(): Promise<void>;
}

/**
 * Builds the runtime of a verifier from its resolved options, with real defaults for each seam. The resolver
 * and the prober (pools, catch-all cache) are made on first use, so a verifier that never goes on the network
 * (`dns: false`, or a `verify(email, options)` call that fails syntax) costs microseconds, not the
 * milliseconds their caches take to allocate.
 */
export function createRuntime(options: ResolvedOptions): OwnedRuntime {
  const transport = options.transport ?? tcpTransport();
  const now = Date.now;
  const randomBytes = (size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size));
  let resolver: Resolver | undefined = options.resolver;
  let prober: Prober | undefined;
  let closed = false;
  return {
    get resolver() {
      resolver ??= cachedResolver(nodeResolver());
      return resolver;
    },
    transport,
    now,
    randomBytes,
    get prober() {
      if (closed && prober === undefined)
        throw new MailvetError('disposed', 'the verifier has been disposed');
      prober ??= createProber({
        transport,
        heloHost: options.heloHost ?? defaultHeloHost(),
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
      return prober;
    },
    async close() {
      closed = true;
      await prober?.close();
      if (options.resolver === undefined) resolver?.close?.();
    },
  };
}
