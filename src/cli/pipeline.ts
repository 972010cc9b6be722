/**
 * An ordered map over an async source with a bounded window: the streaming core of `mailvet bulk`.
 * @module
 */

/** Options of {@link orderedMap}. */
export interface OrderedMapOptions {
  /** Most items taken from the source and not yet yielded (running, or done and waiting for an earlier one). */
  readonly window: number;
  /** Stops taking items; results that settled before the abort are still yielded, in order, up to the first gap. */
  readonly signal?: AbortSignal | undefined;
}

interface Slot<R> {
  state: 'pending' | 'ok' | 'error';
  value: R | undefined;
  error: unknown;
  /** Settled before the abort, so its value is a real answer rather than the abort's. */
  beforeAbort: boolean;
  promise: Promise<void>;
}

/**
 * Runs `fn` on the items of `source`, several at a time, and yields the results in source order. At most
 * `window` items are held at once, so memory does not grow with the source. Reading the source, running
 * `fn` and yielding overlap: a result is yielded as soon as it and every earlier one are done.
 *
 * On abort it stops reading, yields the results that settled before the abort up to the first one that had
 * not, waits for the calls still running (they should watch the same signal) and returns.
 * A rejection of `fn` or of the source is thrown at its place in the order.
 * @example
 * for await (const result of orderedMap(addresses, (email) => verifier.verify(email), { window: 256 })) {
 *   write(result);
 * }
 */
export async function* orderedMap<T, R>(
  source: AsyncIterable<T>,
  fn: (item: T) => Promise<R>,
  options: OrderedMapOptions,
): AsyncGenerator<R> {
  const window = Math.max(1, Math.floor(options.window));
  const signal = options.signal;
  const iterator = source[Symbol.asyncIterator]();
  const queue: Slot<R>[] = [];
  let exhausted = false;
  let reading = false;
  let readError: { error: unknown } | undefined;
  let aborted = signal?.aborted ?? false;
  let woken = false;
  /** 1 while a result is with the consumer: it still counts against the window. */
  let handed = 0;
  let resume: (() => void) | undefined;

  const wake = (): void => {
    woken = true;
    resume?.();
  };
  const onAbort = (): void => {
    aborted = true;
    wake();
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const start = (item: T): Slot<R> => {
    const slot: Slot<R> = {
      state: 'pending',
      value: undefined,
      error: undefined,
      beforeAbort: false,
      promise: Promise.resolve(),
    };
    slot.promise = fn(item).then(
      (value) => {
        slot.state = 'ok';
        slot.value = value;
        slot.beforeAbort = !aborted;
        wake();
      },
      (error: unknown) => {
        slot.state = 'error';
        slot.error = error;
        slot.beforeAbort = !aborted;
        wake();
      },
    );
    return slot;
  };

  const pull = (): void => {
    if (reading || exhausted || aborted || readError !== undefined || queue.length + handed >= window) return;
    reading = true;
    iterator.next().then(
      (next) => {
        reading = false;
        if (next.done) exhausted = true;
        else queue.push(start(next.value));
        wake();
        pull();
      },
      (error: unknown) => {
        reading = false;
        readError = { error };
        wake();
      },
    );
  };

  try {
    pull();
    for (;;) {
      const head = queue[0];
      if (head !== undefined && head.state !== 'pending' && (!aborted || head.beforeAbort)) {
        queue.shift();
        if (head.state === 'error') throw head.error;
        handed = 1;
        yield head.value as R;
        handed = 0;
        pull();
        continue;
      }
      if (readError !== undefined && (head === undefined || aborted)) throw readError.error;
      if (aborted || (exhausted && queue.length === 0)) return;
      if (!woken) {
        await new Promise<void>((resolve) => {
          resume = resolve;
        });
      }
      resume = undefined;
      woken = false;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    aborted = true;
    await Promise.all(queue.map((slot) => slot.promise));
    if (!reading) await iterator.return?.();
    else void iterator.return?.()?.catch(() => undefined);
  }
}
