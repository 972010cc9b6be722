/**
 * The public verifier: {@link createVerifierWith} (mailvet's SMTP prober) on Node's defaults (node:dns through a cache, node:net,
 * the host's name for HELO), and `verify()` for one address.
 * @module
 */
import { nodeDefaults, preloadNodeTransport } from './node-runtime.js';
import type { VerifyOptions } from './options.js';
import type { VerificationResult } from './result.js';
import type { Verifier } from './verifier-core.js';
import { createVerifierWith } from './verifier-with.js';

export { trimInput, type Verifier } from './verifier-core.js';

/**
 * Creates a verifier. `defaults` are validated now (an `OptionsError` names a bad one) and apply to every
 * call; each call may override them, except the options that shape shared resources (`resolver`,
 * `transport`, `concurrency`, `perMxConcurrency`, `maxRcptPerSession`, `maxRejectsPerSession`, `idleSessionMs`,
 * `mxBackoffMs`, `catchAllTtlMs`). The seams left unset are Node's: a cached node:dns resolver, a node:net
 * transport, the host's name for HELO.
 * @example
 * const verifier = createVerifier({ smtp: false });
 * const result = await verifier.verify('someone@example.com');
 * await verifier.dispose();
 */
export function createVerifier(defaults: VerifyOptions = {}): Verifier {
  const verifier = createVerifierWith(nodeDefaults, defaults);
  // A verifier that will connect loads the transport's code now, in the background (see node-runtime.ts).
  if (defaults.dns !== false && defaults.smtp !== false && defaults.transport === undefined)
    preloadNodeTransport();
  return verifier;
}

let shared: Verifier | undefined;

/**
 * Verifies one address. Without options it uses one shared verifier (so caches and pools are reused across
 * calls); with options it makes a verifier for this call and disposes of it after. For many addresses, use
 * {@link createVerifier}.
 * @example
 * const result = await verify('someone@example.com', { smtp: false });
 * result.status; // 'unknown'
 */
export async function verify(email: string, options?: VerifyOptions): Promise<VerificationResult> {
  if (options === undefined) {
    shared ??= createVerifier();
    return shared.verify(email);
  }
  const verifier = createVerifier(options);
  try {
    return await verifier.verify(email);
  } finally {
    await verifier.dispose();
  }
}
