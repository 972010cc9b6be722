/**
 * What the pool reads in a reply or a failure: pure predicates, no state.
 * @module
 */

import { limitsSession } from '../../classify/reply.js';
import { SmtpError } from '../../errors.js';
import type { SmtpReply } from '../types.js';

/** A `2xx` reply. */
export function positive(reply: SmtpReply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

/**
 * The reply that puts a mail host in backoff: a `421`, or a refusal about the session (Postfix's `421 4.7.0 Error:
 * too many errors`, a 4xx/5xx "too many invalid recipients", "too many connections", a rate limit; see
 * `limitsSession`), as opposed to `452 4.5.3` "too many recipients" (a full envelope).
 */
export function backoffReply(reply: SmtpReply | undefined): SmtpReply | undefined {
  if (reply === undefined || positive(reply)) return undefined;
  return reply.code === 421 || limitsSession(reply) ? reply : undefined;
}

/** `452 4.5.3` / "too many recipients": the envelope is full, not the mailbox. */
export function tooManyRecipients(reply: SmtpReply): boolean {
  return reply.code === 452 && (reply.enhanced === '4.5.3' || /too many recipients/i.test(reply.text));
}

/** The reply an `SmtpError` carries, if any. */
export function smtpReplyOf(error: unknown): SmtpReply | undefined {
  return error instanceof SmtpError ? error.smtpReply : undefined;
}

/** Errors about the request rather than the connection: the session stays usable. */
export function aboutRequest(error: unknown): boolean {
  return error instanceof SmtpError && (error.kind === 'smtputf8' || error.kind === 'unsafe_argument');
}

/** A promise's outcome as a value. */
export type Settled<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: unknown };

/** Settles with the outcome of `promise` as a value, never rejects. */
export function settled<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}
