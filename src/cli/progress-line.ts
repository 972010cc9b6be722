/**
 * The line of `mailvet bulk`'s progress bar, fitted to the terminal's width: a pure function of what is known.
 * @module
 */
import { STATUSES, type Status } from '../result.js';
import { plain, type Style } from './style.js';

/** Width assumed when the stream does not say (not a terminal, or a terminal that reports no size). */
export const DEFAULT_COLUMNS = 80;

/** Cells of the drawn bar. */
const BAR_WIDTH = 20;

/** Short labels of the statuses, for narrow terminals (docs/cli.md lists them). */
export const STATUS_ABBREVIATIONS: Readonly<Record<Status, string>> = {
  valid: 'val',
  invalid: 'inv',
  catch_all: 'catch',
  unknown: 'unk',
  do_not_mail: 'dnm',
};

/** Addresses waiting for a greylisting retry. */
export interface RetryWait {
  /** How many addresses wait. */
  readonly count: number;
  /** The earliest retry, as local `HH:MM` ({@link clockTime}). */
  readonly at: string;
}

/** What the progress line shows. */
export interface ProgressView {
  /** Rows done, resumed ones included. */
  readonly done: number;
  /** Rows in all; `undefined` when not known (standard input). */
  readonly total: number | undefined;
  /** The pace, formatted (`400/s`). */
  readonly rate: string;
  /** Time left, formatted (`9.5s`); `undefined` when it cannot be estimated. */
  readonly eta: string | undefined;
  readonly counts: Readonly<Record<Status, number>>;
  /** Greylisting retries that wait; `undefined` or a count of 0 when none. */
  readonly retries?: RetryWait | undefined;
}

/** Local wall-clock `HH:MM` of a time in epoch milliseconds. */
export function clockTime(epochMs: number): string {
  const date = new Date(epochMs);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

/** `1 address retries at 14:05 (greylisting)`, `3 addresses retry at 14:05 (greylisting)`. */
export function retryNote(retries: RetryWait): string {
  return retries.count === 1
    ? `1 address retries at ${retries.at} (greylisting)`
    : `${retries.count} addresses retry at ${retries.at} (greylisting)`;
}

function share(view: ProgressView, digits: number): string {
  if (view.total === undefined) return '';
  return `${view.total === 0 ? (100).toFixed(digits) : ((view.done / view.total) * 100).toFixed(digits)}%`;
}

/** `1200/5000 rows (24.0%), 400/s, ETA 9.5s`, or `1200 rows, 400/s` without a total. */
function fullHead(view: ProgressView): string {
  const rows = view.total === undefined ? `${view.done} rows` : `${done(view)} rows (${share(view, 1)})`;
  return `${rows}, ${view.rate}${view.eta === undefined ? '' : `, ETA ${view.eta}`}`;
}

/** `1200/5000 24% ETA 9.5s`. */
function shortHead(view: ProgressView): string {
  const rows = view.total === undefined ? done(view) : `${done(view)} ${share(view, 0)}`;
  return `${rows}${view.eta === undefined ? '' : ` ETA ${view.eta}`}`;
}

/** `1200/5000`, or `1200` without a total. */
function done(view: ProgressView): string {
  return view.total === undefined ? `${view.done}` : `${view.done}/${view.total}`;
}

function bar(view: ProgressView): string {
  if (view.total === undefined) return '';
  const filled = view.total === 0 ? BAR_WIDTH : Math.round(Math.min(1, view.done / view.total) * BAR_WIDTH);
  return `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} `;
}

function counted(
  view: ProgressView,
  style: Style,
  statuses: readonly Status[],
  label: (status: Status) => string,
): string {
  return statuses.map((status) => style.status(status, `${label(status)} ${view.counts[status]}`)).join(' ');
}

/**
 * The progress line for a terminal `columns` wide, always shorter than `columns` (the cursor keeps the last
 * cell). The counts per status matter most, so a narrower terminal first loses the bar, then the statuses still
 * at zero, then gets short status labels (`val inv catch unk dnm`), a shorter head, a shorter retry note, only
 * done/total, no head at all. Only when the short counts alone do not fit is the line cut, as plain text, so that no colour
 * code is left open.
 * @example
 * fitProgressLine(view, 60, style); // '1200/5000 24% ETA 9.5s | val 1000 inv 150 catch 30 unk 15 dnm 5'
 */
export function fitProgressLine(view: ProgressView, columns: number, style: Style): string {
  const width = Number.isFinite(columns) && columns > 0 ? Math.floor(columns) : DEFAULT_COLUMNS;
  const counting = STATUSES.filter((status) => view.counts[status] > 0);
  const nonZero = counting.length > 0 ? counting : STATUSES;
  const all = counted(view, style, STATUSES, (status) => status);
  const someFull = counted(view, style, nonZero, (status) => status);
  const someShort = counted(view, style, nonZero, (status) => STATUS_ABBREVIATIONS[status]);
  const waiting = view.retries !== undefined && view.retries.count > 0 ? view.retries : undefined;
  const longNote = waiting === undefined ? '' : ` | ${retryNote(waiting)}`;
  const shortNote = waiting === undefined ? '' : ` | ${waiting.count} retry ${waiting.at}`;
  const head = fullHead(view);
  const short = shortHead(view);
  const candidates = [
    `${bar(view)}${head} | ${all}${longNote}`,
    `${head} | ${all}${longNote}`,
    `${head} | ${someFull}${longNote}`,
    `${head} | ${someShort}${longNote}`,
    `${short} | ${someShort}${longNote}`,
    `${short} | ${someShort}${shortNote}`,
    `${done(view)} | ${someShort}${shortNote}`,
    // A waiting retry is worth more than done/total: the counts show how far the run got.
    ...(waiting === undefined
      ? [`${done(view)} | ${someShort}`]
      : [`${someShort}${shortNote}`, `${done(view)} | ${someShort}`]),
    someShort,
  ];
  return candidates.find((line) => plain(line).length < width) ?? plain(someShort).slice(0, width - 1);
}
