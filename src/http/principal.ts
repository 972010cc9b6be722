/**
 * Who a request acts for: the tenant, and what the API key behind it may do.
 * @module
 */

import type { Scope } from '../io/api-key.js';

export { SCOPES, type Scope } from '../io/api-key.js';

/** Who a request acts for, as an {@link Authenticate} may answer it instead of a bare tenant string. */
export interface Principal {
  /** The tenant (non-empty): jobs are visible only to it, and usage is counted per tenant. */
  readonly tenant: string;
  /** The API key's public id (never the key), for logs and usage. @default none */
  readonly keyId?: string;
  /** The key's name, as its owner gave it. @default none */
  readonly name?: string;
  /** What the key may do. @default every scope in {@link SCOPES} */
  readonly scopes?: readonly Scope[];
  /** The key's own request rate, requests per second, instead of the handler's `limits.requestsPerSecond`. */
  readonly requestsPerSecond?: number;
  /** Addresses the key may verify per UTC day (single verifications plus bulk addresses). @default unlimited */
  readonly addressesPerDay?: number;
}

/** The {@link Principal} of an authentication's answer: a bare tenant string holds every scope. */
export function principalOf(answer: string | Principal): Principal {
  return typeof answer === 'string' ? { tenant: answer } : answer;
}
