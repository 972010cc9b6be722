/**
 * The destination of the logs on a file descriptor (standard output): lines are encoded into a byte batch as they
 * come and written in one system call per batch, off the request's path. A log line then costs its UTF-8 encoding
 * into memory outside the JavaScript heap, not a write: the line's text dies young, so it costs the garbage
 * collector nothing (text kept until the write, as one long appended string, was copied by every scavenge and was
 * most of a line's cost).
 * @module
 */
import { write as writeFd, writeSync } from 'node:fs';

/** Options of {@link FdWriter}. */
export interface FdWriterOptions {
  /** Bytes gathered before a write starts (a longer line is written on its own). @default 65536 */
  readonly batchBytes?: number;
  /** Longest a line waits on a quiet server before it is written, in milliseconds. @default 250 */
  readonly intervalMs?: number;
}

/** How long to wait before trying again when the descriptor is full (a pipe whose reader is slow), in ms. */
const RETRY_MS = 10;

/** Most UTF-8 bytes one UTF-16 unit of a string takes (a surrogate pair's two units take 4). */
const MAX_BYTES_PER_UNIT = 3;

/** Bytes waiting to be written: part of a batch (given back once written), or a line longer than a batch. */
interface Pending {
  readonly data: Buffer;
  readonly batch: Buffer | undefined;
}

/**
 * Writes text to a file descriptor in batches: one write in flight at a time; what comes meanwhile waits for the
 * next. `flush(cb)` calls back once everything given so far is written; at the process's exit what is left is
 * written synchronously. A descriptor that fails for good (EPIPE: the reader is gone) drops further lines.
 */
export class FdWriter {
  readonly #fd: number;
  /** The batch being filled: `#used` bytes of it hold lines. */
  #batch: Buffer;
  #used = 0;
  /** Bytes filled and waiting for the write in flight, oldest first. */
  #ready: Pending[] = [];
  /** A batch whose write ended, reused by the next (no new memory per batch). */
  #spare: Buffer | undefined;
  #writing = false;
  #failed = false;
  #waiters: (() => void)[] = [];

  constructor(fd: number, options: FdWriterOptions = {}) {
    this.#fd = fd;
    this.#batch = Buffer.allocUnsafeSlow(options.batchBytes ?? 65_536);
    setInterval(() => this.#drain(), options.intervalMs ?? 250).unref();
    process.once('exit', () => this.flushSync());
  }

  /**
   * Encodes `text` into the batch; once a line does not fit, the batch is full: its write starts and the line opens
   * the next. Always true (no backpressure: lines are small).
   */
  write(text: string): boolean {
    this.writeEncoded(text.length * MAX_BYTES_PER_UNIT, (buffer, at) => at + buffer.write(text, at));
    return true;
  }

  /**
   * Has `encode` write a line of at most `room` bytes straight into the batch at the index it is given, answering
   * the index after the line (nothing is written past it): a line made of bytes, with no string in between.
   */
  writeEncoded(room: number, encode: (buffer: Buffer, at: number) => number): void {
    if (this.#failed) return;
    if (room <= this.#batch.length - this.#used) this.#used = encode(this.#batch, this.#used);
    else this.#placeFull(room, encode);
  }

  /**
   * Places a line that does not fit in the batch: the batch is full, its write starts, and the line opens the next
   * one, or, longer than a batch, is a batch of its own.
   */
  #placeFull(room: number, encode: (buffer: Buffer, at: number) => number): void {
    this.#seal();
    if (room <= this.#batch.length) this.#used = encode(this.#batch, 0);
    else {
      const own = Buffer.allocUnsafe(room);
      this.#ready.push({ data: own.subarray(0, encode(own, 0)), batch: undefined });
    }
    this.#drain();
  }

  /** Calls `callback` once every line given so far is written (or dropped by a failed descriptor). */
  flush(callback?: (error?: Error) => void): void {
    this.#waiters.push(() => callback?.());
    this.#drain();
  }

  /** Writes what is gathered and not yet in flight, synchronously (at the exit). */
  flushSync(): void {
    if (this.#failed) return;
    this.#seal();
    const batches = this.#ready;
    this.#ready = [];
    try {
      for (const { data } of batches) {
        let offset = 0;
        while (offset < data.length) offset += writeSync(this.#fd, data, offset, data.length - offset);
      }
    } catch {
      // The reader is gone or the descriptor is full at the exit: nothing more can be done.
    }
  }

  /** Moves the batch being filled, if it holds anything, to the ready ones, and starts a new one. */
  #seal(): void {
    if (this.#used === 0) return;
    this.#ready.push({ data: this.#batch.subarray(0, this.#used), batch: this.#batch });
    this.#batch = this.#spare ?? Buffer.allocUnsafeSlow(this.#batch.length);
    this.#spare = undefined;
    this.#used = 0;
  }

  #drain(): void {
    if (this.#writing) return;
    if (this.#ready.length === 0) this.#seal();
    const pending = this.#ready.shift();
    if (pending === undefined) {
      this.#settle();
      return;
    }
    this.#writing = true;
    this.#send(pending, 0);
  }

  #send(pending: Pending, offset: number): void {
    const { data } = pending;
    writeFd(this.#fd, data, offset, data.length - offset, null, (error, written) => {
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.#send(pending, offset), RETRY_MS);
          return;
        }
        this.#failed = true;
        this.#ready = [];
        this.#used = 0;
        this.#writing = false;
        this.#settle();
        return;
      }
      if (offset + written < data.length) {
        this.#send(pending, offset + written);
        return;
      }
      this.#writing = false;
      if (pending.batch !== undefined) this.#spare = pending.batch;
      if (this.#ready.length > 0 || (this.#waiters.length > 0 && this.#used > 0)) this.#drain();
      else this.#settle();
    });
  }

  #settle(): void {
    if (this.#writing || this.#used > 0 || this.#ready.length > 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}
