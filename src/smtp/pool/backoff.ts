/**
 * Per-MX backoff: a mail host that answered `421` or "too many errors" gets no new session for `mxBackoffMs`.
 * Which requests may wait for the end is a pure decision ({@link mayWait}); the book of hosts backing off owns
 * its timers.
 * @module
 */

import { printable } from '../../classify/printable.js';
import { SmtpError } from '../../errors.js';
import type { SmtpReply } from '../types.js';
import type { Lease, RcptRequest } from './types.js';

/** A mail host that answered `421` or "too many errors": no new session until `until`. */
export interface Backoff {
  readonly until: number;
  /** The reply that started it, for the error of the requests it turns away. */
  readonly reply: SmtpReply;
  readonly timer: ReturnType<typeof setTimeout>;
}

/** The mail hosts backing off, by `ip:port` key. */
export interface BackoffBook {
  /**
   * Puts `key` in backoff after `reply`: `started` when the host was not backing off, `extended` when it was (the
   * backoff now ends later), `off` when backoff is turned off (nothing happens).
   */
  start(key: string, reply: SmtpReply): 'started' | 'extended' | 'off';
  /** The backoff of `key`, while it lasts. */
  of(key: string): Backoff | undefined;
  /** Stops every timer and forgets every backoff. */
  clear(): void;
}

/** Options of {@link createBackoffBook}. */
export interface BackoffBookOptions {
  /** Length of a backoff, in milliseconds; `0` turns backoff off. */
  readonly ms: number;
  /** The pool's clock. */
  readonly now: () => number;
  /** Called when the backoff of `key` ends (by its timer), to hand out the slots it held back. */
  readonly onEnd: (key: string) => void;
}

/** Creates the book of mail hosts backing off. */
export function createBackoffBook(options: BackoffBookOptions): BackoffBook {
  const backoffs = new Map<string, Backoff>();
  const { ms, now, onEnd } = options;
  return {
    start(key, reply) {
      if (ms === 0) return 'off';
      const previous = backoffs.get(key);
      if (previous !== undefined) clearTimeout(previous.timer);
      const timer = setTimeout(() => {
        if (backoffs.get(key)?.timer === timer) backoffs.delete(key);
        onEnd(key);
      }, ms);
      (timer as { unref?: () => void }).unref?.();
      backoffs.set(key, { until: now() + ms, reply, timer });
      return previous === undefined ? 'started' : 'extended';
    },
    of(key) {
      const backoff = backoffs.get(key);
      return backoff !== undefined && backoff.until > now() ? backoff : undefined;
    },
    clear() {
      for (const backoff of backoffs.values()) clearTimeout(backoff.timer);
      backoffs.clear();
    },
  };
}

/**
 * Whether a request may wait out `backoff`: it has nowhere else to go (no `fallback`), and its budget outlasts
 * the backoff.
 */
export function mayWait(request: RcptRequest, lease: Lease, backoff: Pick<Backoff, 'until'>): boolean {
  return request.fallback !== true && lease.deadline > backoff.until;
}

/** The error (kind `backoff`) of a request turned away while `key` backs off. */
export function backoffError(key: string, backoff: Pick<Backoff, 'until' | 'reply'>, now: number): SmtpError {
  const { code, text } = backoff.reply;
  const seconds = Math.ceil((backoff.until - now) / 1000);
  return new SmtpError(
    'backoff',
    `${key} is left alone for ${seconds} s more: it answered ${code} ${printable(text).slice(0, 200)}`,
  );
}
