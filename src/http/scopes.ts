/**
 * Scope checks: a route names the scope it needs (routes.ts), and a key without it gets 403 `forbidden`.
 * @module
 */
import { HttpError } from './errors.js';
import type { Principal, Scope } from './principal.js';

/**
 * Throws 403 `forbidden`, naming `scope`, when `principal` holds scopes and `scope` is not among them. A
 * principal without `scopes` (a key of `MAILVET_API_KEYS`, a bare tenant) holds them all.
 */
export function requireScope(principal: Principal | undefined, scope: Scope): void {
  const held = principal?.scopes;
  if (held === undefined || held.includes(scope)) return;
  const has = held.length === 0 ? 'none' : held.join(', ');
  throw new HttpError('forbidden', `this API key lacks the scope ${scope} (it has: ${has})`);
}
