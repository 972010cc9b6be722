/**
 * The logger of `serve` and `worker`: pino, one JSON object per line on standard output (or pino-pretty's text),
 * with the paths that could hold a secret redacted. Loaded only by those two commands.
 * @module
 */
import { type DestinationStream, type Logger, pino } from 'pino';
import { prettyFactory } from 'pino-pretty';
import { type MembersWriter, utf8Bytes, writeBytes, writeDigits } from '../io/json-bytes.js';
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

/** The pino logger, with a fast path for lines whose fields are written as bytes (see {@link CliLogger.log}). */
export type LineWriter = Logger & {
  /**
   * Writes an `info` line in the same format as pino's lines (`level`, `time`, `pid`, the members, `msg`), whose
   * members (`"a":1,"b":"x"`, at most `room` bytes) `members` writes as UTF-8 bytes, straight into the
   * destination's batch: no object is walked or redacted, so only fields that can hold no secret go this way (the
   * request line). Nothing when `info` is off.
   */
  infoBytes(room: number, members: MembersWriter, message: string): void;
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

/** `{"level":"info","time":"`: how an `info` line of pino's starts, with the time's opening quote. */
const INFO_HEAD = utf8Bytes('{"level":"info","time":"');
/** Bytes of an `info` line beside its members and message: the head, the time, the pid's member, the braces. */
const LINE_ROOM = 96;
/** Most bytes a message's member takes per UTF-16 unit of the message (`\uXXXX`). */
const MESSAGE_ROOM_PER_UNIT = 6;

/**
 * Writes the time as `toISOString()` writes it, with its date and seconds (`2026-11-27T11:05:54.`) made once a
 * second: the hot path's clock.
 */
function isoTimeWriter(): (buffer: Uint8Array, at: number) => number {
  let second = Number.NaN;
  let secondBytes: Uint8Array = new Uint8Array(0);
  return (buffer, at) => {
    const now = Date.now();
    const ms = now % 1000;
    if (now - ms !== second) {
      second = now - ms;
      secondBytes = utf8Bytes(new Date(second).toISOString().slice(0, 20));
    }
    let end = writeBytes(buffer, at, secondBytes);
    if (ms < 100) buffer[end++] = 0x30;
    if (ms < 10) buffer[end++] = 0x30;
    end = writeDigits(buffer, end, ms);
    buffer[end++] = 0x5a; // Z
    return end;
  };
}

/**
 * The fast path of {@link LineWriter}: writes `info` lines as bytes into `destination` (an {@link FdWriter}'s
 * batch), or, for any other destination, into a scratch buffer it hands over as text.
 */
function infoBytesOf(
  log: Logger,
  destination: DestinationStream,
): (room: number, members: MembersWriter, message: string) => void {
  const pid = utf8Bytes(`","pid":${process.pid},`);
  const writeTime = isoTimeWriter();
  // The message of the last line and its bytes: a request log writes the same message on every line.
  let lastMessage: string | undefined;
  let tail: Uint8Array = new Uint8Array(0);
  let current: MembersWriter = (_buffer, at) => at;
  const encode = (buffer: Uint8Array, at: number): number => {
    let end = writeBytes(buffer, at, INFO_HEAD);
    end = writeTime(buffer, end);
    end = writeBytes(buffer, end, pid);
    end = current(buffer, end);
    return writeBytes(buffer, end, tail);
  };
  const fd = destination instanceof FdWriter ? destination : undefined;
  let scratch = Buffer.allocUnsafe(1024);
  return (room, members, message) => {
    if (!log.isLevelEnabled('info')) return;
    if (message !== lastMessage) {
      lastMessage = message;
      tail = utf8Bytes(`,"msg":${JSON.stringify(message)}}\n`);
    }
    current = members;
    const lineRoom = LINE_ROOM + room + MESSAGE_ROOM_PER_UNIT * message.length;
    if (fd !== undefined) {
      fd.writeEncoded(lineRoom, encode);
      return;
    }
    if (scratch.length < lineRoom) scratch = Buffer.allocUnsafe(lineRoom);
    destination.write(scratch.toString('utf8', 0, encode(scratch, 0)));
  };
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
    log: Object.assign(log, { infoBytes: infoBytesOf(log, destination) }),
    addresses: settings.addresses,
    flush: async () => {
      await new Promise<void>((resolve) => log.flush(() => resolve()));
      await drained(target.stream);
    },
  };
}
