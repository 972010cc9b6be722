/**
 * The Node runtime module: Node's defaults for the seams a verifier is not given. `createVerifier` wires them in;
 * the core (verifier-core.ts, runtime.ts, checks) never imports this module, so it runs on any platform.
 * @module
 */
import type { CachedResolverStats } from './dns/cached.js';
import type { NodeResolverOptions } from './dns/node.js';
import type { Resolver } from './dns/types.js';
import type { PlatformDefaults } from './runtime.js';
import { defaultHeloHost } from './smtp/host.js';
import type { Transport } from './smtp/types.js';

let tcpCode: Promise<typeof import('./smtp/tcp.js')> | undefined;

function loadTcp(): Promise<typeof import('./smtp/tcp.js')> {
  tcpCode ??= import('./smtp/tcp.js');
  return tcpCode;
}

/**
 * Starts importing the code of Node's transport in the background (`createVerifier` does when `dns` and `smtp` are
 * on and no `transport` is given), so that the first connection does not wait for it within its budget.
 */
export function preloadNodeTransport(): void {
  loadTcp().catch(() => undefined);
}

/**
 * `tcpTransport()`, its code (node:net, node:tls, the line channel) imported on the first connection: every
 * verifier gets a transport, but one that never probes SMTP (`mailvet verify --no-dns`) does not load it.
 */
function deferredTcpTransport(): Transport {
  let transport: Promise<Transport> | undefined;
  return {
    async connect(target, options) {
      transport ??= loadTcp().then(({ tcpTransport }) => tcpTransport());
      return (await transport).connect(target, options);
    },
  };
}

/**
 * `cachedResolver(nodeResolver(options))`, its code (node:dns, the cache) imported on the first lookup: a verifier
 * that never looks a name up (`mailvet verify --no-dns`) does not load it. `peek` answers `undefined` until then
 * (nothing is cached before a lookup anyway). `options` are checked on the first lookup, which then rejects with
 * the `OptionsError`: callers that take servers from users (the CLI) validate them first.
 */
export function deferredNodeResolver(
  options: NodeResolverOptions = {},
): Resolver & { stats(): CachedResolverStats } {
  let resolver: (Resolver & { stats(): CachedResolverStats }) | undefined;
  let loading: Promise<Resolver> | undefined;
  let closed = false;
  const ready = (): Promise<Resolver> => {
    loading ??= Promise.all([import('./dns/cached.js'), import('./dns/node.js')]).then(
      ([{ cachedResolver }, { nodeResolver }]) => {
        const made = cachedResolver(nodeResolver(options));
        if (closed) made.close?.();
        resolver = made;
        return made;
      },
    );
    return loading;
  };
  return {
    mx: async (domain, lookup) => (await ready()).mx(domain, lookup),
    addresses: async (host, lookup) => (await ready()).addresses(host, lookup),
    ptr: async (address, lookup) => {
      const made = await ready();
      return made.ptr!(address, lookup);
    },
    txt: async (name, lookup) => {
      const made = await ready();
      return made.txt!(name, lookup);
    },
    peek: (kind, name) => resolver?.peek?.(kind, name),
    // The cache's counters (a verifier's observer reads them): none until the resolver's code is loaded.
    stats: () => resolver?.stats() ?? { hits: 0, misses: 0, coalesced: 0, size: 0 },
    close() {
      closed = true;
      resolver?.close?.();
    },
  };
}

/** Node's seams: a cached node:dns resolver, a node:net (TLS-capable) transport, the host's name for HELO. */
export const nodeDefaults: PlatformDefaults = Object.freeze({
  resolver: () => deferredNodeResolver(),
  transport: deferredTcpTransport,
  heloHost: () => defaultHeloHost(),
});
