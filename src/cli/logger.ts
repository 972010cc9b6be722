/**
 * The logger of `serve` and `worker`: pino, one JSON object per line on standard output (or pino-pretty's text),
 * with the paths that could hold a secret redacted. Loaded only by those two commands.
 * @module
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { LogSettings } from './log-settings.js';

/** Paths censored in every line, should a value ever carry them: keys, secrets, passwords, authorization. */
export const REDACTED_PATHS: readonly string[] = Object.freeze([
  'key',
  'apiKey',
  'api_key',
  'authorization',
  'secret',
  'secrets',
  'password',
  'connectionString',
  '*.key',
  '*.apiKey',
  '*.api_key',
  '*.authorization',
  '*.secret',
  '*.secrets',
  '*.password',
  '*.connectionString',
]);

/** A logger with what its owner needs at the end: a flush that waits for the lines to be written. */
export interface CliLogger {
  /** The pino logger. */
  readonly log: Logger;
  /** Whether lines may carry email addresses (`--log-addresses`). */
  readonly addresses: boolean;
  /** Resolves once every line logged so far is written. */
  flush(): Promise<void>;
}

/** Where a logger writes: a writable stream, and the file descriptor behind it when there is one. */
export interface LogTarget {
  /** The stream lines go to (standard output). */
  readonly stream: NodeJS.WritableStream;
  /** Standard output is a terminal (colours for `pretty`). @default false */
  readonly isTTY?: boolean;
}

/** The file descriptor behind `stream`, when it is one of the process's own (not a test's in-memory stream). */
function fdOf(stream: NodeJS.WritableStream): number | undefined {
  const fd = (stream as { fd?: unknown }).fd;
  return typeof fd === 'number' ? fd : undefined;
}

/** The stream pino writes to: SonicBoom on a file descriptor (asynchronous, batched), else the stream itself. */
function destinationOf(settings: LogSettings, target: LogTarget): DestinationStream {
  if (settings.format === 'pretty') {
    const prettify = prettyFactory({ colorize: target.isTTY === true, translateTime: 'SYS:standard' });
    return { write: (line: string) => void target.stream.write(prettify(line)) };
  }
  const fd = fdOf(target.stream);
  if (fd !== undefined) return pino.destination({ dest: fd, sync: false });
  return target.stream as DestinationStream;
}

/** Waits until `stream` has written what it holds (a no-op for a stream without a buffer). */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  const pending = (stream as { writableLength?: unknown }).writableLength;
  if (typeof pending !== 'number' || pending === 0) return Promise.resolve();
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/**
 * Makes the logger of `settings` writing to `target`. Lines carry `time` (ISO 8601), `level` (a label), `msg`
 * and their fields; the paths of {@link REDACTED_PATHS} are censored. Callers still never put a key, a secret or
 * a password in a line: the redaction is a second line of defence.
 */
export function createLogger(settings: LogSettings, target: LogTarget): CliLogger {
  const destination = destinationOf(settings, target);
  const log = pino(
    {
      level: settings.level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
    },
    destination,
  );
  return {
    log,
    addresses: settings.addresses,
    flush: async () => {
      await new Promise<void>((resolve) => log.flush(() => resolve()));
      await drained(target.stream);
    },
  };
}
