/**
 * Resources a verifier owns and shares between its verifications.
 * @module
 */
import { cachedResolver } from './dns/cached.js';
import { nodeResolver } from './dns/node.js';
import type { Resolver } from './dns/types.js';
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

/** Builds the runtime of a verifier from its resolved options, with real defaults for each seam. */
export function createRuntime(options: ResolvedOptions): OwnedRuntime {
  const ownsResolver = options.resolver === undefined;
  const resolver = options.resolver ?? cachedResolver(nodeResolver());
  const transport = options.transport ?? tcpTransport();
  const now = Date.now;
  const randomBytes = (size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size));
  const prober = createProber({
    transport,
    heloHost: options.heloHost ?? defaultHeloHost(),
    perMxConcurrency: options.perMxConcurrency,
    concurrency: options.concurrency,
    maxRcptPerSession: options.maxRcptPerSession,
    idleSessionMs: options.idleSessionMs,
    catchAllTtlMs: options.catchAllTtlMs,
    now,
    randomBytes,
  });
  return {
    resolver,
    transport,
    now,
    randomBytes,
    prober,
    async close() {
      await prober.close();
      if (ownsResolver) resolver.close?.();
    },
  };
}
