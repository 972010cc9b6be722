/**
 * The one polling helper of the test suite: asks `probe` again until it answers, for the waits that have no event
 * to listen to (a job's state read over HTTP, a file another process writes, a lease that expires in real time).
 * Where an event exists, a test awaits the event instead.
 * @module
 */
import { setTimeout as sleep, setImmediate as turn } from 'node:timers/promises';

/** How long and how often {@link waitFor} asks. */
export interface WaitOptions {
  /** What is awaited, for the error when it does not come. @default 'the condition' */
  readonly what?: string;
  /** Gives up after this long. @default 10_000 */
  readonly timeoutMs?: number;
  /**
   * Pause between two probes. `0` probes again after one event-loop turn (for state that changes without I/O
   * timers: pending promises, in-process stores). @default 10
   */
  readonly intervalMs?: number;
}

/** A probe's answer that means "not yet". */
type NotYet = false | undefined | null;

/**
 * Calls `probe` until it returns something other than `false`, `undefined` or `null`, and resolves with that value.
 * Rejects, naming `options.what` and the last answer, after `options.timeoutMs`; a probe that throws rejects at
 * once (a failing request is a failure, not a "not yet").
 * @example
 * const job = await waitFor(async () => { const job = await get(id); return job.status === 'complete' && job; });
 */
export async function waitFor<T>(
  probe: () => T | Promise<T>,
  options: WaitOptions = {},
): Promise<Exclude<T, NotYet>> {
  const { what = 'the condition', timeoutMs = 10_000, intervalMs = 10 } = options;
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const answer = await probe();
    if (answer !== false && answer !== undefined && answer !== null) return answer as Exclude<T, NotYet>;
    if (performance.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last answer: ${String(answer)})`);
    }
    if (intervalMs === 0) await turn();
    else await sleep(intervalMs);
  }
}
