/**
 * Progress of `mailvet bulk`: a bar on a terminal, a plain line now and then otherwise, and the summary
 * table at the end. Everything goes to standard error, so that results can go to standard output.
 * @module
 */
import type { Writable } from 'node:stream';
import cliProgress from 'cli-progress';
import { STATUSES, type Status } from '../result.js';
import type { WaitingRetries } from './greylist.js';
import { clockTime, DEFAULT_COLUMNS, fitProgressLine, type RetryWait, retryNote } from './progress-line.js';
import type { Style } from './style.js';

/** Options of {@link createProgress}. */
export interface ProgressOptions {
  /** Where progress is written (standard error). */
  readonly stream: Writable;
  /** Draw a bar (the stream is a terminal) rather than plain lines. */
  readonly tty: boolean;
  readonly style: Style;
  /** Rows in all, when known (a file); `undefined` for standard input. */
  readonly total: number | undefined;
  /** Rows done before this run (`--resume`). @default 0 */
  readonly done?: number;
  readonly counts: Readonly<Record<Status, number>>;
  /** Clock in milliseconds. */
  readonly now: () => number;
  /** The rows waiting for a greylisting retry now (read at each redraw); none when absent. */
  readonly retries?: () => WaitingRetries | undefined;
  /** Least time between two plain progress lines, in milliseconds. @default 5000 */
  readonly intervalMs?: number;
}

/** A running progress display. */
export interface Progress {
  /** Reports the rows done so far (resumed ones included) and their counts per status. */
  update(done: number, counts: Readonly<Record<Status, number>>): void;
  /** Stops the display (the bar's last state stays on screen). */
  stop(): void;
}

/** `1 row`, `2 rows`. */
export function rows(count: number): string {
  return `${count} row${count === 1 ? '' : 's'}`;
}

/** Formats a duration: `850ms`, `3.2s`, `4m05s`, `2h07m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.round(seconds);
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

/** Formats a rate per second: `312/s`, `4.5/s`. */
export function formatRate(rows: number, ms: number): string {
  if (ms <= 0 || rows <= 0) return '0/s';
  const rate = (rows * 1000) / ms;
  return `${rate >= 100 ? Math.round(rate) : rate.toFixed(1)}/s`;
}

/** What the display knows at one moment. */
export interface Snapshot {
  readonly done: number;
  readonly counts: Readonly<Record<Status, number>>;
  readonly elapsedMs: number;
  /** Rows waiting for a greylisting retry, and the clock when the snapshot was taken. */
  readonly retries?: { readonly waiting: WaitingRetries; readonly nowMs: number } | undefined;
}

/**
 * Time left: the pace of this run over the rows not yet done, and never less than the wait for the last
 * greylisting retry (the run cannot end before it).
 */
function eta(snapshot: Snapshot, total: number | undefined, startDone: number): string | undefined {
  if (total === undefined) return undefined;
  const processed = snapshot.done - startDone;
  const paced = processed > 0 ? ((total - snapshot.done) * snapshot.elapsedMs) / processed : undefined;
  const retries = snapshot.retries;
  const waited = retries === undefined ? undefined : Math.max(0, retries.waiting.lastDueMs - retries.nowMs);
  if (paced === undefined && waited === undefined) return undefined;
  return formatDuration(Math.max(paced ?? 0, waited ?? 0));
}

/** The retry part of a progress view, its time as local `HH:MM`. */
function retryWait(snapshot: Snapshot): RetryWait | undefined {
  const waiting = snapshot.retries?.waiting;
  return waiting === undefined ? undefined : { count: waiting.count, at: clockTime(waiting.nextDueMs) };
}

/**
 * One plain progress line: `1200/5000 rows (24.0%), 400/s, ETA 9.0s | valid 1000, invalid 200, ...`, then
 * `| 3 addresses retry at 14:05 (greylisting)` while greylisting retries wait.
 */
export function progressLine(snapshot: Snapshot, total: number | undefined, startDone: number): string {
  const processed = snapshot.done - startDone;
  const head =
    total === undefined
      ? `${snapshot.done} rows`
      : `${snapshot.done}/${total} rows (${total === 0 ? '100.0' : ((snapshot.done / total) * 100).toFixed(1)}%)`;
  const left = eta(snapshot, total, startDone);
  const counts = STATUSES.map((status) => `${status} ${snapshot.counts[status]}`).join(', ');
  const retries = retryWait(snapshot);
  const note = retries === undefined ? '' : ` | ${retryNote(retries)}`;
  return `${head}, ${formatRate(processed, snapshot.elapsedMs)}${left === undefined ? '' : `, ETA ${left}`} | ${counts}${note}`;
}

/** Starts a progress display: a cli-progress bar on a terminal, plain lines every `intervalMs` otherwise. */
export function createProgress(options: ProgressOptions): Progress {
  const started = options.now();
  const startDone = options.done ?? 0;
  const interval = options.intervalMs ?? 5000;
  let snapshot: Snapshot = { done: startDone, counts: options.counts, elapsedMs: 0 };
  const take = (done: number, counts: Readonly<Record<Status, number>>): void => {
    const nowMs = options.now();
    const waiting = options.retries?.();
    snapshot = {
      done,
      counts,
      elapsedMs: nowMs - started,
      retries: waiting === undefined ? undefined : { waiting, nowMs },
    };
  };

  if (options.tty) {
    const { style, total } = options;
    const bar = new cliProgress.SingleBar({
      stream: options.stream,
      hideCursor: true,
      fps: 8,
      // Each frame takes a fresh snapshot, so the rate, the ETA and the waiting retries move on while no row
      // finishes; the width is read at each frame too, so a resized terminal gets a fitting line.
      format: () => {
        take(snapshot.done, snapshot.counts);
        const view = {
          done: snapshot.done,
          total,
          rate: formatRate(snapshot.done - startDone, snapshot.elapsedMs),
          eta: eta(snapshot, total, startDone),
          counts: snapshot.counts,
          retries: retryWait(snapshot),
        };
        const columns = (options.stream as { columns?: number }).columns ?? DEFAULT_COLUMNS;
        return fitProgressLine(view, columns, style);
      },
    });
    bar.start(total ?? 0, startDone);
    return {
      update(done, counts) {
        take(done, counts);
        bar.update(done);
      },
      stop() {
        take(snapshot.done, snapshot.counts);
        bar.update(snapshot.done);
        bar.stop();
        options.stream.write('\n');
      },
    };
  }

  let printed = started;
  const print = (): void => {
    printed = options.now();
    options.stream.write(`mailvet: ${progressLine(snapshot, options.total, startDone)}\n`);
  };
  const heartbeat = setInterval(() => {
    if (options.now() - printed >= interval) {
      take(snapshot.done, snapshot.counts);
      print();
    }
  }, interval);
  heartbeat.unref();
  return {
    update(done, counts) {
      take(done, counts);
      if (snapshot.elapsedMs + started - printed >= interval) print();
    },
    stop() {
      clearInterval(heartbeat);
    },
  };
}

/** The summary table: rows and share per status, the total, and the pace of this run. */
export function summaryTable(
  counts: Readonly<Record<Status, number>>,
  run: { readonly processed: number; readonly elapsedMs: number },
  style: Style,
): string {
  const total = STATUSES.reduce((sum, status) => sum + counts[status], 0);
  const share = (count: number): string => `${total === 0 ? '0.0' : ((count / total) * 100).toFixed(1)}%`;
  const width = Math.max(5, String(total).length);
  const lines = [style.bold(`  ${'status'.padEnd(12)} ${'rows'.padStart(width)}   share`)];
  for (const status of STATUSES) {
    const count = counts[status];
    lines.push(
      `  ${style.status(status, status.padEnd(12))} ${String(count).padStart(width)}  ${share(count).padStart(6)}`,
    );
  }
  lines.push(`  ${'total'.padEnd(12)} ${String(total).padStart(width)}  ${share(total).padStart(6)}`);
  lines.push(
    `${rows(run.processed)} verified in ${formatDuration(run.elapsedMs)} (${formatRate(run.processed, run.elapsedMs)})`,
  );
  return `${lines.join('\n')}\n`;
}
