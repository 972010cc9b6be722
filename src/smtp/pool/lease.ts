/**
 * A request's lease on the pool: its budget (a deadline by the pool's clock) and abort signal, and the helpers
 * that hold each wait of the request to them.
 * @module
 */

import { watchOptionalAbort } from '../../abort-watch.js';
import { SmtpError } from '../../errors.js';
import type { CommandOptions } from '../types.js';
import type { Lease, RcptRequest } from './types.js';

/** Whether the lease's budget is spent or its signal fired, at `now`. */
export function expired(lease: Lease, now: number): boolean {
  return lease.signal?.aborted === true || now >= lease.deadline;
}

/** The error of a request whose lease ended: `aborted` when its signal fired, else `timeout`. */
export function leaseError(lease: Lease): SmtpError {
  return lease.signal?.aborted === true
    ? new SmtpError('aborted', 'the verification was aborted')
    : new SmtpError('timeout', 'the verification time budget is spent');
}

/**
 * By when the reply to a command sent at `now` for `request` must come: the lease's deadline, and no later than the
 * request's own `replyTimeoutMs` (a reused session was opened with another request's settings, whose reply timeout
 * may be longer).
 */
export function replyDeadline(lease: Lease, request: RcptRequest, now: number): number {
  const replyMs = request.settings.replyTimeoutMs;
  return replyMs === undefined ? lease.deadline : Math.min(lease.deadline, now + replyMs);
}

/** The per-command options of a session command sent for `lease`, its reply due by `deadline`. */
export function commandOptions(lease: Lease, deadline = lease.deadline): CommandOptions {
  return lease.signal === undefined ? { deadline } : { deadline, signal: lease.signal };
}

/**
 * The error of a request whose budget ran out before it was tried: it waited `waitedMs` in the queue of its mail
 * host (`perMx`: for one of the host's `perMxConcurrency` sessions) or for one of the pool's `concurrency` slots,
 * and no command was sent for it. Kind `timeout` (`aborted` when its signal fired), with a message that says so.
 */
export function notTriedError(lease: Lease, waitedMs: number, perMx: boolean): SmtpError {
  if (lease.signal?.aborted === true) return leaseError(lease);
  const seconds = (Math.max(0, waitedMs) / 1000).toFixed(1);
  const limit = perMx ? 'perMxConcurrency' : 'concurrency';
  return new SmtpError(
    'timeout',
    `not tried: waited ${seconds} s for a free session (${limit} limit) and the time budget ran out`,
  );
}

/**
 * Settles with `promise`, or rejects when the lease's budget is spent (`graceMs` after its deadline) or its signal
 * fires first. A grace lets a wait that honours the deadline itself end with its own, more telling error.
 */
export function within<T>(promise: Promise<T>, lease: Lease, now: () => number, graceMs = 0): Promise<T> {
  promise.catch(() => undefined);
  if (expired(lease, now())) return Promise.reject(leaseError(lease));
  return new Promise<T>((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      unwatch();
    };
    const onAbort = () => {
      stop();
      reject(leaseError(lease));
    };
    const timer = setTimeout(onAbort, Math.max(0, lease.deadline + graceMs - now()));
    const unwatch = watchOptionalAbort(lease.signal, onAbort);
    promise.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}
