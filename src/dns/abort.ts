/**
 * Per-lookup cancellation: a lookup's promise rejects as soon as its signal aborts, even when the underlying
 * query (shared with other callers, or not cancellable) keeps running.
 * @module
 */

import { watchAbort } from '../abort-watch.js';
import { DnsError } from '../errors.js';
import { requireLookupName } from '../net/name.js';

/** The {@link DnsError} a lookup rejects with when its signal aborts. */
export function abortedLookup(hostname: string, signal: AbortSignal): DnsError {
  return new DnsError('aborted', hostname, `lookup of ${hostname} was aborted`, { cause: signal.reason });
}

/**
 * Settles like `work`, unless `signal` aborts first: then rejects with a {@link DnsError} of reason `aborted`.
 * A signal that is already aborted rejects at once. Listeners are removed when the race ends.
 */
export function raceSignal<T>(
  work: Promise<T>,
  hostname: string,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal === undefined) return work;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(abortedLookup(hostname, signal));
  }
  return new Promise<T>((resolve, reject) => {
    const unwatch = watchAbort(signal, () => reject(abortedLookup(hostname, signal)));
    work.then(
      (value) => {
        unwatch();
        resolve(value);
      },
      (error: unknown) => {
        unwatch();
        reject(error);
      },
    );
  });
}

/**
 * Runs one lookup the way every Resolver here does: the name is validated first (a bad name rejects without
 * a query), then `run(name)` races the caller's signal.
 */
export function guardedLookup<T>(
  input: unknown,
  signal: AbortSignal | undefined,
  run: (name: string) => Promise<T>,
): Promise<T> {
  let name: string;
  try {
    name = requireLookupName(input);
  } catch (error) {
    return Promise.reject(error);
  }
  return raceSignal(run(name), name, signal);
}
