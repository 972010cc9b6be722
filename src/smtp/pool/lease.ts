/**
 * A request's lease on the pool: its budget (a deadline by the pool's clock) and abort signal, and the helpers
 * that hold each wait of the request to them.
 * @module
 */

import { watchOptionalAbort } from '../../abort-watch.js';
import { SmtpError } from '../../errors.js';
import type { CommandOptions } from '../types.js';
import type { Lease } from './types.js';

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

/** The per-command options of a session command sent for `lease`. */
export function commandOptions(lease: Lease): CommandOptions {
  return lease.signal === undefined
    ? { deadline: lease.deadline }
    : { deadline: lease.deadline, signal: lease.signal };
}

/** Settles with `promise`, or rejects when the lease's budget is spent or its signal fires first. */
export function within<T>(promise: Promise<T>, lease: Lease, now: () => number): Promise<T> {
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
    const timer = setTimeout(onAbort, Math.max(0, lease.deadline - now()));
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
