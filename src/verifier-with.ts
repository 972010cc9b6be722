/**
 * The verifier on any platform: the core's verifier (verifier-core.ts) with mailvet's SMTP prober (the per-MX
 * session pool of smtp/, wired in here so that the core imports no seam module). Runtime-free, like the core:
 * `createVerifier` (verifier.ts) is this with Node's defaults.
 * @module
 */
import type { VerifyOptions } from './options.js';
import type { PlatformDefaults } from './runtime.js';
import { smtpProbing } from './smtp/probing.js';
import { createCoreVerifier, type Verifier } from './verifier-core.js';

/**
 * Creates a verifier on a platform: `platform` gives the seams that `defaults` leave unset (a resolver, a
 * transport, a HELO name). `createVerifier` is this with Node's defaults; other runtimes (and tests) pass their
 * own, and a verifier given every seam never calls `platform`. `defaults` are validated now (an `OptionsError`
 * names a bad one) and apply to every call; each call may override them, except the options that shape shared
 * resources (`resolver`, `transport`, `concurrency`, `perMxConcurrency`, `maxRcptPerSession`,
 * `maxRejectsPerSession`, `idleSessionMs`, `mxBackoffMs`, `catchAllTtlMs`).
 * @example
 * const verifier = createVerifierWith(
 *   { resolver: () => myResolver, transport: () => myTransport, heloHost: () => 'mx-check.example.net' },
 *   { allowTlds: ['test'] },
 * );
 */
export function createVerifierWith(platform: PlatformDefaults, defaults: VerifyOptions = {}): Verifier {
  return createCoreVerifier(platform, smtpProbing, defaults);
}
