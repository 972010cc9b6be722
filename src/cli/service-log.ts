/**
 * What `serve` and `worker` share around their logger and their shutdown: the logger on standard output, the
 * warnings that used to be text lines, the wait for the stop signal and a bounded wait.
 * @module
 */
import type { CliIo } from './io.js';
import type { LogSettings } from './log-settings.js';
import { type CliLogger, createLogger } from './logger.js';

/** The logger of a long-running command: on standard output, pretty only if asked or on a terminal. */
export function serviceLogger(settings: LogSettings, io: CliIo): CliLogger {
  return createLogger(settings, { stream: io.stdout, isTTY: io.stdoutIsTTY === true });
}

/** Logs a warning that the CLI words as a line (`mailvet: warning: ...\n`) as a `warn` line of its text. */
export function logWarning(logger: CliLogger, line: string): void {
  logger.log.warn(line.replace(/^mailvet: (?:warning: )?/, '').trimEnd());
}

/** Resolves when `io.signal` aborts (Ctrl-C or SIGTERM); never without a signal. */
export function stopSignal(io: CliIo): Promise<void> {
  return new Promise<void>((resolve) => {
    if (io.signal === undefined) return;
    if (io.signal.aborted) resolve();
    else io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Waits for `work` at most `ms` milliseconds: true when it settled in time (its rejection is ignored). */
export async function within(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
