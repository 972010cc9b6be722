/**
 * The Node runtime module: Node's defaults for the seams a verifier is not given. `createVerifier` wires them in;
 * the core (verifier-core.ts, runtime.ts, checks) never imports this module, so it runs on any platform.
 * @module
 */
import { cachedResolver } from './dns/cached.js';
import { nodeResolver } from './dns/node.js';
import type { PlatformDefaults } from './runtime.js';
import { defaultHeloHost } from './smtp/host.js';
import { tcpTransport } from './smtp/tcp.js';

/** Node's seams: a cached node:dns resolver, a node:net (TLS-capable) transport, the host's name for HELO. */
export const nodeDefaults: PlatformDefaults = Object.freeze({
  resolver: () => cachedResolver(nodeResolver()),
  transport: () => tcpTransport(),
  heloHost: () => defaultHeloHost(),
});
