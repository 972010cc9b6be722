/**
 * The logger of `serve` and `worker`: pino, one JSON object per line on standard output (or pino-pretty's text),
 * with the paths that could hold a secret redacted. Loaded only by those two commands.
 * @module
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { FdWriter } from './fd-writer.js';
import type { LogSettings } from './log-settings.js';

/**
 * Fields censored in every line, should a caller ever pass them: keys, secrets, passwords, authorization. Top-level
 * paths only: a wildcard path would walk every field of every line (the request line is on the hot path).
 */
export const REDACTED_PATHS: readonly string[] = Object.freeze([
  'key',
  'apiKey',
  'api_key',
  'authorization',
  'secret',
  'secrets',
  'password',
  'connectionString',
]);

/** The pino logger, with a fast path for lines whose fields are ready JSON (see {@link CliLogger.log}). */
export type LineWriter = Logger & {
  /**
   * Writes an `info` line whose fields come as JSON members (`"a":1`), in the same format as pino's lines
   * (`level`, `time`, `pid`, the members, `msg`), straight to the destination: no object is walked or redacted, so
   * only fields that can hold no secret go this way (the request line). Nothing when `info` is off.
   */
  infoLine(members: string, message: string): void;
};

/** A logger with what its owner needs at the end: a flush that waits for the lines to be written. */
export interface CliLogger {
  /** The pino logger, and its fast path for ready JSON fields. */
  readonly log: LineWriter;
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

/**
 * The stream pino writes to: on a file descriptor, an {@link FdWriter} (lines batched in memory, written off the
 * request's path, one system call for many lines, at least every 250 ms); else the stream itself (pretty text, or a
 * test's in-memory stream).
 */
function destinationOf(settings: LogSettings, target: LogTarget): DestinationStream {
  if (settings.format === 'pretty') {
    const prettify = prettyFactory({ colorize: target.isTTY === true, translateTime: 'SYS:standard' });
    return { write: (line: string) => void target.stream.write(prettify(line)) };
  }
  const fd = fdOf(target.stream);
  if (fd === undefined) return target.stream as DestinationStream;
  return new FdWriter(fd);
}

let second = Number.NaN;
let secondText = '';

/** The time as `toISOString()` writes it, with the date and seconds made once a second (the hot path's clock). */
function isoNow(): string {
  const now = Date.now();
  const ms = now % 1000;
  if (now - ms !== second) {
    second = now - ms;
    secondText = new Date(second).toISOString().slice(0, 20); // 2026-11-27T11:05:54.
  }
  return `${secondText}${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
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
  const head = `,"pid":${process.pid},`;
  // The message of the last line and its JSON: a request log writes the same message on every line.
  let lastMessage = '';
  let lastTail = ',"msg":""}\n';
  const infoLine = (members: string, message: string): void => {
    if (!log.isLevelEnabled('info')) return;
    if (message !== lastMessage) {
      lastMessage = message;
      lastTail = `,"msg":${JSON.stringify(message)}}\n`;
    }
    destination.write(`{"level":"info","time":"${isoNow()}"${head}${members}${lastTail}`);
  };
  return {
    log: Object.assign(log, { infoLine }),
    addresses: settings.addresses,
    flush: async () => {
      await new Promise<void>((resolve) => log.flush(() => resolve()));
      await drained(target.stream);
    },
  };
}
