/**
 * The destination of the logs on a file descriptor (standard output): lines are gathered in memory and written
 * in one system call per batch, off the request's path. A log line then costs a string append, not a write.
 * @module
 */
import { write as writeFd, writeSync } from 'node:fs';

/** Options of {@link FdWriter}. */
export interface FdWriterOptions {
  /** Bytes (UTF-16 units) gathered before a write starts. @default 65536 */
  readonly batchBytes?: number;
  /** Longest a line waits on a quiet server before it is written, in milliseconds. @default 250 */
  readonly intervalMs?: number;
}

/** How long to wait before trying again when the descriptor is full (a pipe whose reader is slow), in ms. */
const RETRY_MS = 10;

/**
 * Writes text to a file descriptor in batches: one write in flight at a time; what comes meanwhile waits for the
 * next. `flush(cb)` calls back once everything given so far is written; at the process's exit what is left is
 * written synchronously. A descriptor that fails for good (EPIPE: the reader is gone) drops further lines.
 */
export class FdWriter {
  readonly #fd: number;
  readonly #batchBytes: number;
  /** The text gathered (one string, appended to: cheaper than an array joined at each write). */
  #pending = '';
  #writing = false;
  #failed = false;
  #waiters: (() => void)[] = [];

  constructor(fd: number, options: FdWriterOptions = {}) {
    this.#fd = fd;
    this.#batchBytes = options.batchBytes ?? 65_536;
    setInterval(() => this.#drain(), options.intervalMs ?? 250).unref();
    process.once('exit', () => this.flushSync());
  }

  /** Gathers `text`; starts a write once a batch is full. Always true (no backpressure: lines are small). */
  write(text: string): boolean {
    if (this.#failed) return true;
    this.#pending += text;
    if (this.#pending.length >= this.#batchBytes) this.#drain();
    return true;
  }

  /** Calls `callback` once every line given so far is written (or dropped by a failed descriptor). */
  flush(callback?: (error?: Error) => void): void {
    this.#waiters.push(() => callback?.());
    this.#drain();
  }

  /** Writes what is gathered and not yet in flight, synchronously (at the exit). */
  flushSync(): void {
    if (this.#failed || this.#pending.length === 0) return;
    const data = Buffer.from(this.#pending);
    this.#pending = '';
    let offset = 0;
    try {
      while (offset < data.length) offset += writeSync(this.#fd, data, offset, data.length - offset);
    } catch {
      // The reader is gone or the descriptor is full at the exit: nothing more can be done.
    }
  }

  #drain(): void {
    if (this.#writing) return;
    if (this.#pending.length === 0) {
      this.#settle();
      return;
    }
    const data = Buffer.from(this.#pending);
    this.#pending = '';
    this.#writing = true;
    this.#send(data, 0);
  }

  #send(data: Buffer, offset: number): void {
    writeFd(this.#fd, data, offset, data.length - offset, null, (error, written) => {
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.#send(data, offset), RETRY_MS);
          return;
        }
        this.#failed = true;
        this.#pending = '';
        this.#writing = false;
        this.#settle();
        return;
      }
      if (offset + written < data.length) {
        this.#send(data, offset + written);
        return;
      }
      this.#writing = false;
      if (this.#pending.length >= this.#batchBytes || (this.#waiters.length > 0 && this.#pending.length > 0))
        this.#drain();
      else this.#settle();
    });
  }

  #settle(): void {
    if (this.#writing || this.#pending.length > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
