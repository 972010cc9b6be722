/**
 * Watching an abort signal without one listener per watcher. Many verifications share one signal (the CLI's
 * Ctrl-C signal, a caller's): an `addEventListener` per verification, per pooled command and per lookup put
 * hundreds of listeners on it and set off Node's `MaxListenersExceededWarning`. Here each signal gets a single
 * listener that calls the watchers registered at the time it fires.
 * @module
 */

const watchers = new WeakMap<AbortSignal, Set<() => void>>();

/**
 * Calls `callback` once when `signal` aborts (not when it has already: check `signal.aborted` first). Returns
 * the function that stops watching; call it when the work is done so that nothing is kept for it.
 * @example
 * const unwatch = watchAbort(signal, () => socket.destroy());
 * try { await work(); } finally { unwatch(); }
 */
export function watchAbort(signal: AbortSignal, callback: () => void): () => void {
  let callbacks = watchers.get(signal);
  if (callbacks === undefined) {
    const registered = new Set<() => void>();
    watchers.set(signal, registered);
    signal.addEventListener(
      'abort',
      () => {
        watchers.delete(signal);
        for (const watcher of [...registered]) watcher();
        registered.clear();
      },
      { once: true },
    );
    callbacks = registered;
  }
  const own = () => callback();
  callbacks.add(own);
  const registered = callbacks;
  return () => {
    registered.delete(own);
  };
}

/** {@link watchAbort} for an optional signal: nothing to watch gives a no-op. */
export function watchOptionalAbort(signal: AbortSignal | undefined, callback: () => void): () => void {
  return signal === undefined ? noop : watchAbort(signal, callback);
}

function noop(): void {}
