/**
 * Output of `mailvet bulk`: CSV (the input's columns, then the result's), JSON or NDJSON, written as
 * results arrive, and read back by `--resume` to find where to go on.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  copyFile,
  type FileHandle,
  open,
  realpath,
  rename,
  rm,
  stat,
  truncate,
} from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { Writable } from 'node:stream';
import { CsvReader } from '../io/csv-reader.js';
import type { InputRecord, InputShape } from '../io/input.js';
import { readLines } from '../io/lines.js';
import { csvField, type FormulaEscape, SOURCED_CSV_COLUMNS, sourcedResultColumns } from '../io/result-csv.js';
import { isStatus, STATUSES, type Status, type VerificationResult } from '../result.js';
import { CliError, EXIT, quote, usageError, write } from './io.js';

/** The output formats. */
export const OUTPUT_FORMATS = ['csv', 'json', 'ndjson'] as const;

/** An output format. */
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/**
 * The output format: `--format` when given, else the output file's extension (`.json`, `.ndjson` or
 * `.jsonl`), else CSV.
 */
export function formatOf(flag: string | undefined, path: string | undefined): OutputFormat {
  if (flag !== undefined) {
    const wanted = flag.trim().toLowerCase();
    if (!(OUTPUT_FORMATS as readonly string[]).includes(wanted)) {
      throw usageError(`--format must be csv, json or ndjson, got ${quote(flag)}`);
    }
    return wanted as OutputFormat;
  }
  const extension = path === undefined ? '' : extname(path).toLowerCase();
  if (extension === '.json') return 'json';
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  return 'csv';
}

/** One output row: an input record and its result (or why the record could not be verified). */
export interface OutputRow {
  readonly record: InputRecord;
  readonly result: VerificationResult;
  /** Why the row has no real verification (malformed row, failed verification), or `null`. */
  readonly error: string | null;
}

/** How rows are laid out. */
export interface OutputLayout {
  readonly format: OutputFormat;
  readonly shape: InputShape;
  /** CSV header: the input's columns, then the result's (prefixed `mailvet_` where a name is taken). */
  readonly header: readonly string[];
  /** The record key column of CSV output (the input's address column). */
  readonly keyIndex: number;
  /** The `status` column of CSV output. */
  readonly statusIndex: number;
  /** Add the SMTP transcript (`--trace`). */
  readonly trace: boolean;
  /** Which CSV cells get the anti-formula `'` (`--formula-escape`). */
  readonly formulaEscape: FormulaEscape;
}

/** Builds the layout of an output for an input of the given shape. */
export function layoutOf(
  format: OutputFormat,
  shape: InputShape,
  trace: boolean,
  formulaEscape: FormulaEscape,
): OutputLayout {
  // The HTTP API's rule for a job made from a CSV file: the input's columns, then the result columns (the address
  // not repeated), then the CLI's own `error` (and `smtp_transcript`).
  const extra = ['error', ...(trace ? ['smtp_transcript'] : [])];
  const header = [...shape.columns, ...sourcedResultColumns(shape.columns, extra)];
  return {
    format,
    shape,
    header,
    keyIndex: shape.emailIndex,
    statusIndex: shape.columns.length + SOURCED_CSV_COLUMNS.indexOf('status'),
    trace,
    formulaEscape,
  };
}

/** Where output text goes. */
export interface Sink {
  write(text: string): Promise<void>;
  /** Flushes and releases the destination (a file is closed; standard output is left open). */
  close(): Promise<void>;
}

function ioError(action: string, path: string, error: unknown): CliError {
  const code = (error as { code?: unknown } | null)?.code;
  const reason =
    code === 'ENOENT'
      ? 'no such file or directory'
      : code === 'EACCES' || code === 'EPERM'
        ? 'permission denied'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'ENOSPC'
            ? 'no space left on device'
            : String(code ?? (error instanceof Error ? error.message : error));
  return new CliError(EXIT.io, `cannot ${action} ${path}: ${reason}`, { cause: error });
}

/** A file name beside `path` for its next content: hidden, and unique to this run (`.out.csv.1234.9f2c.tmp`). */
export function temporaryPathBeside(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

/** Opens the temporary file for `path`: empty, or a copy of `path` to go on from (`append`). */
async function openTemporary(path: string, temporary: string, append: boolean): Promise<FileHandle> {
  const existing = await stat(path).catch(() => undefined);
  if (append && existing !== undefined) await copyFile(path, temporary);
  const handle = await open(temporary, append ? 'a' : 'wx');
  // The finished file takes the place of the old one: keep its permissions.
  if (existing !== undefined) await chmod(temporary, existing.mode & 0o7777);
  return handle;
}

/**
 * A sink that gives the file at `path` new content (`append: false`) or more of it (`append: true`). It writes a
 * temporary file beside `path` and renames it over `path` when closed, so `path` is never what is being
 * written: `cat list.txt | mailvet bulk - -o list.txt` reads the whole list (a pipe cannot be told apart from
 * its file), and a run that dies leaves the old file whole. A symbolic link is followed: the file it points to
 * gets the content, and the link stays.
 */
export async function fileSink(path: string, append: boolean): Promise<Sink> {
  const target = await realpath(path).catch(() => path);
  const temporary = temporaryPathBeside(target);
  let handle: FileHandle;
  try {
    handle = await openTemporary(target, temporary, append);
  } catch (error) {
    await rm(temporary, { force: true });
    throw ioError('write', path, error);
  }
  return {
    async write(text) {
      try {
        await handle.write(text);
      } catch (error) {
        throw ioError('write', path, error);
      }
    },
    async close() {
      await handle.close();
      try {
        await rename(temporary, target);
      } catch (error) {
        await rm(temporary, { force: true });
        throw ioError('write', path, error);
      }
    },
  };
}

/** A sink over a stream such as standard output, honouring back-pressure. */
export function streamSink(stream: Writable): Sink {
  return {
    write: (text) => write(stream, text),
    async close() {},
  };
}

/** Text is handed to the sink in pieces of about this many characters. */
const FLUSH_CHARS = 65_536;

function jsonRecord(row: OutputRow, layout: OutputLayout): Record<string, unknown> {
  const record: Record<string, unknown> = { ...row.result };
  if (layout.shape.format === 'csv') {
    record.input = Object.fromEntries(
      layout.shape.columns.map((column, index) => [column, row.record.cells[index] ?? '']),
    );
  }
  if (row.error !== null) record.error = row.error;
  return record;
}

function csvLine(row: OutputRow, layout: OutputLayout): string {
  const fields: (string | number | boolean | null)[] = [...row.record.cells];
  for (const field of SOURCED_CSV_COLUMNS) fields.push(row.result[field] ?? null);
  fields.push(row.error);
  if (layout.trace) fields.push(row.result.smtp_transcript?.join('\n') ?? null);
  return `${fields.map((field) => csvField(field, layout.formulaEscape)).join(',')}\r\n`;
}

/**
 * Writes rows in the layout's format, buffering into large writes. JSON output is an array with one
 * object a line, closed by {@link ResultWriter.finish}, so that an interrupted run still leaves valid JSON.
 */
export class ResultWriter {
  readonly #sink: Sink;
  readonly #layout: OutputLayout;
  #rows: number;
  #buffer = '';
  #pending: Promise<void> = Promise.resolve();
  #failure: { error: unknown } | undefined;

  /** `resumed` rows are already in the output: no header is written and JSON goes on after them. */
  constructor(sink: Sink, layout: OutputLayout, resumed: number | undefined) {
    this.#sink = sink;
    this.#layout = layout;
    this.#rows = resumed ?? 0;
    if (resumed === undefined) {
      if (layout.format === 'csv') {
        const cells = layout.header.map((name) => csvField(name, layout.formulaEscape));
        this.#buffer = `${cells.join(',')}\r\n`;
      }
      if (layout.format === 'json') this.#buffer = '[\n';
    }
  }

  /** Adds one row. */
  async add(row: OutputRow): Promise<void> {
    const layout = this.#layout;
    if (layout.format === 'csv') this.#buffer += csvLine(row, layout);
    else if (layout.format === 'ndjson') this.#buffer += `${JSON.stringify(jsonRecord(row, layout))}\n`;
    else this.#buffer += `${this.#rows > 0 ? ',\n' : ''}${JSON.stringify(jsonRecord(row, layout))}`;
    this.#rows++;
    if (this.#buffer.length >= FLUSH_CHARS) await this.#flush();
  }

  /** Writes what is buffered, closes a JSON array, and closes the sink. */
  async finish(): Promise<void> {
    if (this.#layout.format === 'json') this.#buffer += this.#rows > 0 ? '\n]\n' : ']\n';
    try {
      await this.#flush();
      await this.#pending;
      if (this.#failure !== undefined) throw this.#failure.error;
    } finally {
      await this.#sink.close();
    }
  }

  /** Hands the buffer to the sink; waits only for the write before it, so that writing overlaps verifying. */
  async #flush(): Promise<void> {
    const text = this.#buffer;
    this.#buffer = '';
    await this.#pending;
    if (this.#failure !== undefined) throw this.#failure.error;
    if (text === '') return;
    this.#pending = this.#sink.write(text).catch((error: unknown) => {
      this.#failure = { error };
    });
  }
}

/** What an earlier, interrupted run left in the output. */
export interface ResumePoint {
  /** Rows already written (complete ones). */
  readonly done: number;
  /** Their count per status. */
  readonly counts: Record<Status, number>;
  /** Key of the last row (its address cell), to check that the output belongs to this input. */
  readonly lastKey: string | null;
  /** {@link KeyDigest} of every row's key, in order: the whole written prefix must match the input's. */
  readonly keysDigest: string;
  /** Byte length to cut the output to: just after its last complete row. */
  readonly cutAt: number;
}

/**
 * A running SHA-256 over the keys of rows, in order, with the anti-formula `'` of a CSV cell taken off, so that
 * `--resume` checks that every row of an output (not only its last) was written for the same input row.
 */
export class KeyDigest {
  readonly #hash = createHash('sha256');

  /** Adds the key of the next row. */
  add(key: string): void {
    const plain = key.startsWith("'") && FORMULA_AFTER_QUOTE.test(key) ? key.slice(1) : key;
    this.#hash.update(plain);
    this.#hash.update('\n');
  }

  /** The digest so far, in hex. */
  digest(): string {
    return this.#hash.copy().digest('hex');
  }
}

const FORMULA_AFTER_QUOTE = /^'[=+\-@\t\r]/;

/** A zero count for every status. */
export function emptyCounts(): Record<Status, number> {
  return Object.fromEntries(STATUSES.map((status) => [status, 0])) as Record<Status, number>;
}

/** The key a record has in the output, compared by {@link sameKey}. */
export function keyOf(record: InputRecord, layout: OutputLayout): string {
  return layout.format === 'csv' ? (record.cells[layout.keyIndex] ?? '') : record.email.trim();
}

/** True when an output key read back matches a record's key (CSV cells may carry the anti-formula `'`). */
export function sameKey(written: string, key: string): boolean {
  return written === key || written === `'${key}`;
}

function sameHeader(written: readonly string[], header: readonly string[]): boolean {
  return (
    written.length === header.length && header.every((name, index) => sameKey(written[index] ?? '', name))
  );
}

async function scanCsv(path: string, layout: OutputLayout): Promise<ResumePoint> {
  const reader = new CsvReader(',');
  const counts = emptyCounts();
  let done = 0;
  let lastKey: string | null = null;
  const keys = new KeyDigest();
  let cutAt = 0;
  let header = true;
  scan: for await (const batch of readLines(createReadStream(path))) {
    for (const line of batch) {
      for (const record of reader.push(line)) {
        if (header) {
          if (record.kind !== 'row' || !sameHeader(record.fields, layout.header)) {
            throw new CliError(
              EXIT.io,
              `cannot resume: ${path} was written for other columns; remove it or pick another -o`,
            );
          }
          header = false;
          cutAt = record.last.end;
          continue;
        }
        const status = record.kind === 'row' ? record.fields[layout.statusIndex] : undefined;
        if (
          record.kind !== 'row' ||
          record.fields.length !== layout.header.length ||
          !isStatus(status) ||
          !record.last.terminated
        ) {
          break scan;
        }
        counts[status]++;
        done++;
        lastKey = record.fields[layout.keyIndex] ?? '';
        keys.add(lastKey);
        cutAt = record.last.end;
      }
    }
  }
  return { done, counts, lastKey, keysDigest: keys.digest(), cutAt };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function scanJson(path: string, format: 'json' | 'ndjson'): Promise<ResumePoint> {
  const counts = emptyCounts();
  let done = 0;
  let lastKey: string | null = null;
  const keys = new KeyDigest();
  let cutAt = 0;
  let opened = format === 'ndjson';
  scan: for await (const batch of readLines(createReadStream(path))) {
    for (const line of batch) {
      if (!opened) {
        if (line.text.trim() !== '[') {
          throw new CliError(EXIT.io, `cannot resume: ${path} is not a JSON array written by mailvet bulk`);
        }
        opened = true;
        cutAt = line.end;
        continue;
      }
      const text = format === 'json' && line.text.endsWith(',') ? line.text.slice(0, -1) : line.text;
      const object = parseObject(text);
      if (format === 'ndjson' && done === 0 && line.terminated && !isStatus(object?.status)) {
        throw new CliError(EXIT.io, `cannot resume: ${path} is not NDJSON written by mailvet bulk`);
      }
      if (object === undefined || !isStatus(object.status) || (format === 'ndjson' && !line.terminated)) {
        break scan;
      }
      counts[object.status]++;
      done++;
      lastKey = typeof object.email === 'string' ? object.email : '';
      keys.add(lastKey);
      cutAt = format === 'json' ? line.start + Buffer.byteLength(text) : line.end;
    }
  }
  if (!opened)
    throw new CliError(EXIT.io, `cannot resume: ${path} is not a JSON array written by mailvet bulk`);
  return { done, counts, lastKey, keysDigest: keys.digest(), cutAt };
}

/**
 * Reads an earlier run's output, finds its complete rows, and cuts off anything after the last one (a row
 * cut short, a closing `]`). Returns `undefined` when the file does not exist or is empty.
 */
export async function resumeFrom(path: string, layout: OutputLayout): Promise<ResumePoint | undefined> {
  let point: ResumePoint;
  try {
    if ((await stat(path)).size === 0) return undefined;
    point = layout.format === 'csv' ? await scanCsv(path, layout) : await scanJson(path, layout.format);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === 'ENOENT') return undefined;
    if (error instanceof CliError) throw error;
    throw ioError('read', path, error);
  }
  try {
    await truncate(path, point.cutAt);
  } catch (error) {
    throw ioError('write', path, error);
  }
  return point;
}
