/**
 * A list file read in the browser without holding it: slices of the `File` (never one `file.text()`) are decoded
 * into lines, CSV lines into rows by the CLI's own reader, so that a list of any size, past the API's 64 MiB
 * list-body limit, goes up in batches (`POST v1/bulk/{id}/emails`): a CSV file's rows as CSV, so that the server
 * keeps them for the CSV download. Pure: no DOM, only `Blob`, `TextDecoder` and streams, so it is tested in Node.
 * @module
 */

import { encodeRow } from '../bulk/source.js';
import { CsvReader, sniffDelimiter } from '../io/csv-reader.js';
import { findEmailColumn } from '../io/email-column.js';
import type { Line } from '../io/line-splitter.js';

/** Bytes read from the file per slice. @default 1 MiB */
export const SLICE_BYTES = 1024 * 1024;

/** Longest line kept whole, in characters; a longer one becomes a malformed row holding its first 200. */
export const MAX_LINE_CHARS = 65_536;

/** Longest address sent to the API: a longer cell is cut (it fails the syntax check either way). */
export const MAX_ADDRESS_CHARS = 1000;

/** What a list file looks like, decided from its first non-blank line (as `mailvet bulk` decides it). */
export interface ListShape {
  /** `text`: one address a line; `csv`: delimited columns. */
  readonly format: 'text' | 'csv';
  /** The CSV delimiter (`,` for text). */
  readonly delimiter: string;
  /** The file's column names (`email` for text; `column1`, ... around `email` for a CSV without a header). */
  readonly columns: readonly string[];
  /** Index of the address column in `columns`, or -1 when no column could be told (the user must pick). */
  readonly emailIndex: number;
  /** The first line is a header row (not a row to verify). */
  readonly hasHeader: boolean;
}

/** One row of a list file: its cells (one per column of the shape) and the address to verify. */
export interface ListRow {
  readonly cells: readonly string[];
  readonly email: string;
}

/** The first non-blank line of `text` (a BOM dropped), or `''`. */
export function firstLine(text: string): string {
  return (
    text
      .replace(/^\uFEFF/, '')
      .split(/\r?\n/)
      .find((line) => line.trim() !== '') ?? ''
  );
}

/** The cells of one CSV line (quotes honoured; `[]` when the line cannot be read as CSV). */
function cellsOf(line: string, delimiter: string): string[] {
  const [record] = new CsvReader(delimiter).push(lineOf(line, 1, 0));
  return record?.kind === 'row' ? record.fields : [];
}

/**
 * The shape of a list whose first non-blank line is `first`. `text: true` (a `.txt` file) reads one address a
 * line whatever the line looks like. Otherwise a line with no delimiter and no address header is text; a header
 * row names the columns (the address column found by its name, or `-1`); a first line without a header name but
 * with an `@` in a cell is a row, its columns named `column1`, ... and `email`.
 * @example
 * listShape('id,name,E-Mail'); // { format: 'csv', columns: ['id', 'name', 'E-Mail'], emailIndex: 2, hasHeader: true, ... }
 */
export function listShape(first: string, options: { readonly text?: boolean } = {}): ListShape {
  const text: ListShape = {
    format: 'text',
    delimiter: ',',
    columns: ['email'],
    emailIndex: 0,
    hasHeader: false,
  };
  const delimiter = sniffDelimiter(first);
  if (options.text === true || (delimiter === undefined && findEmailColumn([first]) === -1)) return text;
  const headers = cellsOf(first, delimiter ?? ',');
  if (headers.length === 0) return text;
  const csv = { format: 'csv', delimiter: delimiter ?? ',' } as const;
  const named = findEmailColumn(headers);
  if (named !== -1) return { ...csv, columns: headers, emailIndex: named, hasHeader: true };
  const holding = headers.findIndex((cell) => cell.includes('@'));
  if (holding === -1) return { ...csv, columns: headers, emailIndex: -1, hasHeader: true };
  const columns = headers.map((_, index) => (index === holding ? 'email' : `column${index + 1}`));
  return { ...csv, columns, emailIndex: holding, hasHeader: false };
}

function lineOf(text: string, number: number, start: number, tooLong = false, crlf = false): Line {
  return { text, number, start, end: start + text.length, terminated: true, crlf, tooLong };
}

/** The bytes of `blob`, one slice of at most `sliceBytes` at a time, each with the offset it ends at. */
async function* slices(blob: Blob, sliceBytes: number): AsyncGenerator<{ bytes: Uint8Array; end: number }> {
  for (let offset = 0; offset < blob.size; offset += sliceBytes) {
    const end = Math.min(blob.size, offset + sliceBytes);
    yield { bytes: new Uint8Array(await blob.slice(offset, end).arrayBuffer()), end };
  }
}

/**
 * UTF-8 chunks as lines (LF or CRLF, a leading BOM dropped), one batch per chunk, with the bytes read when the
 * batch was complete. A line over {@link MAX_LINE_CHARS} is not kept whole: it comes out once, `tooLong`, with
 * its first 200 characters.
 */
export async function* readLineBatches(
  chunks: AsyncIterable<{ bytes: Uint8Array; end: number }>,
): AsyncGenerator<{ lines: Line[]; bytesRead: number }> {
  const decoder = new TextDecoder('utf-8');
  let carry = '';
  let tooLong = false;
  let number = 0;
  let first = true;
  const take = (text: string, lines: Line[]) => {
    const crlf = text.endsWith('\r');
    let line = crlf ? text.slice(0, -1) : text;
    if (first) line = line.replace(/^\uFEFF/, '');
    first = false;
    number++;
    const long = tooLong || line.length > MAX_LINE_CHARS;
    lines.push(lineOf(long ? line.slice(0, 200) : line, number, 0, long, crlf));
    tooLong = false;
  };
  let bytesRead = 0;
  for await (const chunk of chunks) {
    bytesRead = chunk.end;
    const text = carry + decoder.decode(chunk.bytes, { stream: true });
    const lines: Line[] = [];
    let from = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', from)) {
      take(text.slice(from, newline), lines);
      from = newline + 1;
    }
    carry = text.slice(from);
    if (carry.length > MAX_LINE_CHARS) {
      // Keep only the start of an over-long line: a file that is one huge line is not held in memory.
      carry = carry.slice(0, 200);
      tooLong = true;
    }
    if (lines.length > 0) yield { lines, bytesRead };
  }
  const rest = carry + decoder.decode();
  const lines: Line[] = [];
  if (rest !== '' || tooLong) take(rest, lines);
  yield { lines, bytesRead };
}

/** A row for a line that cannot be read: the raw line as the address (it fails the syntax check). */
function malformedRow(shape: ListShape, raw: string): ListRow {
  return { cells: shape.columns.map((_, index) => (index === shape.emailIndex ? raw : '')), email: raw };
}

/**
 * The rows of a list of that shape, in order, one batch per line batch: blank lines skipped, the header row
 * left out, a CSV row that cannot be read (or with more cells than the header) kept as a row whose address is
 * its raw line, a short row padded with empty cells. The same rows the API and `mailvet bulk` read.
 */
export async function* readRows(
  lineBatches: AsyncIterable<{ lines: Line[]; bytesRead: number }>,
  shape: ListShape,
): AsyncGenerator<{ rows: ListRow[]; bytesRead: number }> {
  const csv = shape.format === 'csv' ? new CsvReader(shape.delimiter) : undefined;
  const width = shape.columns.length;
  let headerPending = shape.hasHeader;
  const convert = (records: ReturnType<CsvReader['push']>, rows: ListRow[]) => {
    for (const record of records) {
      if (headerPending) {
        headerPending = false;
        continue;
      }
      if (record.kind === 'malformed') rows.push(malformedRow(shape, record.raw));
      else if (record.fields.length > width)
        rows.push(malformedRow(shape, record.fields.join(shape.delimiter)));
      else {
        const cells = record.fields;
        while (cells.length < width) cells.push('');
        rows.push({ cells, email: cells[shape.emailIndex] ?? '' });
      }
    }
  };
  let read = 0;
  for await (const { lines, bytesRead } of lineBatches) {
    read = bytesRead;
    const rows: ListRow[] = [];
    for (const line of lines) {
      if (csv !== undefined) convert(csv.push(line), rows);
      else if (line.tooLong || line.text.trim() !== '')
        rows.push({ cells: [line.text], email: line.text.trim() });
    }
    yield { rows, bytesRead };
  }
  if (csv !== undefined) {
    const rows: ListRow[] = [];
    convert(csv.end(), rows);
    if (rows.length > 0) yield { rows, bytesRead: read };
  }
}

/** The rows of a list file, read one slice at a time. */
export function fileRows(
  file: Blob,
  shape: ListShape,
  sliceBytes: number = SLICE_BYTES,
): AsyncGenerator<{ rows: ListRow[]; bytesRead: number }> {
  return readRows(readLineBatches(slices(file, sliceBytes)), shape);
}

/** Limits of one batch of {@link listBatches}. */
export interface BatchLimits {
  /** Most rows per batch (the API takes at most `maxEmailsPerRequest`, 10,000 by default). @default 5000 */
  readonly maxEmails?: number;
  /** Most characters of addresses (or CSV rows) per batch, well under the API's body limits. @default 2000000 */
  readonly maxChars?: number;
  /** Bytes read from the file per slice. @default {@link SLICE_BYTES} */
  readonly sliceBytes?: number;
}

/** One batch of {@link listBatches}. */
export interface ListBatch {
  /** The addresses, in file order (each cut to {@link MAX_ADDRESS_CHARS}). */
  readonly emails: string[];
  /**
   * A CSV file's rows, one CSV line each (comma-separated, the address cell cut as in `emails`), for a
   * `text/csv` body after {@link headerLine}; `undefined` for a text file.
   */
  readonly rows: string[] | undefined;
  /** Bytes of the file read so far (for an upload progress). */
  readonly bytesRead: number;
}

/** The header line of the `text/csv` bodies of a CSV file: its columns, comma-separated. */
export function headerLine(shape: ListShape): string {
  return encodeRow(shape.columns);
}

/**
 * The rows of a list file in batches for `POST v1/bulk/{id}/emails`, in file order, each with the bytes of the
 * file read so far: the file is read one slice at a time, so memory holds one slice and one batch whatever the
 * file's size.
 * @example
 * for await (const { emails, rows, bytesRead } of listBatches(file, shape)) {
 *   await send(rows === undefined ? emails : rows);
 *   progress(bytesRead / file.size);
 * }
 */
export async function* listBatches(
  file: Blob,
  shape: ListShape,
  limits: BatchLimits = {},
): AsyncGenerator<ListBatch> {
  const maxEmails = limits.maxEmails ?? 5000;
  const maxChars = limits.maxChars ?? 2_000_000;
  const csv = shape.format === 'csv';
  let emails: string[] = [];
  let rows: string[] = [];
  let chars = 0;
  let read = 0;
  for await (const batch of fileRows(file, shape, limits.sliceBytes)) {
    read = batch.bytesRead;
    for (const row of batch.rows) {
      const email = row.email.slice(0, MAX_ADDRESS_CHARS);
      let line = '';
      if (csv) {
        const cells = [...row.cells];
        cells[shape.emailIndex] = (cells[shape.emailIndex] ?? '').slice(0, MAX_ADDRESS_CHARS);
        line = encodeRow(cells);
      }
      const size = csv ? line.length + 2 : email.length;
      if (emails.length === maxEmails || (chars + size > maxChars && emails.length > 0)) {
        yield { emails, rows: csv ? rows : undefined, bytesRead: read };
        emails = [];
        rows = [];
        chars = 0;
      }
      emails.push(email);
      if (csv) rows.push(line);
      chars += size;
    }
  }
  yield { emails, rows: csv ? rows : undefined, bytesRead: file.size };
}
