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

/** A stream a child process writes to (its stdout or stderr). */
interface Output {
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
}

/** A child process as {@link outputMatch} needs it. */
interface Child {
  readonly stdout: Output | null;
  readonly stderr: Output | null;
  once(event: 'exit', listener: () => void): unknown;
  off(event: 'exit', listener: () => void): unknown;
}

/**
 * Collects what `child` writes (stdout and stderr, interleaved) and resolves, on the `data` event that makes it
 * match `pattern`, with the match; rejects with the output so far when the child exits first or after
 * `options.timeoutMs`. `output()` keeps growing after the match.
 * @example
 * const { match } = await outputMatch(spawn(...), /listening on (\S+)/);
 */
export function outputMatch(
  child: Child,
  pattern: RegExp,
  options: Pick<WaitOptions, 'timeoutMs' | 'what'> = {},
): Promise<{ match: RegExpExecArray; output: () => string }> {
  const { timeoutMs = 30_000, what = String(pattern) } = options;
  let text = '';
  const output = () => text;
  const collect = (chunk: Buffer) => {
    text += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return new Promise((resolve, reject) => {
    const stop = () => {
      clearTimeout(timer);
      child.stdout?.off('data', check);
      child.stderr?.off('data', check);
      child.off('exit', exited);
    };
    const check = () => {
      const match = pattern.exec(text);
      if (match === null) return;
      stop();
      resolve({ match, output });
    };
    const exited = () => {
      stop();
      reject(new Error(`the process exited before ${what}:\n${text}`));
    };
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}:\n${text}`));
    }, timeoutMs);
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    child.once('exit', exited);
  });
}
