/**
 * The source rows of a job made from a CSV file: the file's header on the job, and each address's row, kept as
 * one string (the row's cells re-encoded as an RFC 4180 line) so that a row costs one string and a job without
 * a header costs nothing.
 * @module
 */
import type { VerificationResult } from '../result.js';
import type { JobSource, SourcedResults, SourceRowsInput } from './job-types.js';
import { unstorableCell } from './storable.js';

/** Most columns in a source header (and so cells in a row). */
export const MAX_SOURCE_COLUMNS = 1000;

/** Longest source row (or header), in UTF-16 code units, once re-encoded as a CSV line. */
export const MAX_SOURCE_ROW_CHARS = 65_536;

const NEEDS_QUOTES = /[",\r\n]/;

/**
 * The cells as one CSV line (comma-separated, a cell with `"`, `,`, CR or LF quoted with inner quotes doubled,
 * no line end). Cells are kept exactly: no formula escape (that is the writer's business).
 * @example
 * encodeRow(['a,b', 'say "hi"', '']); // '"a,b","say ""hi""",'
 */
export function encodeRow(cells: readonly string[]): string {
  let line = '';
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    if (i > 0) line += ',';
    line += NEEDS_QUOTES.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell;
  }
  return line;
}

/**
 * The length of {@link encodeRow}'s line for `cells`, in UTF-16 code units, without building it: a check of a row's
 * size that keeps no string (an upload checks every row before the manager encodes it).
 * @example
 * encodedRowLength(['a,b', 'say "hi"', '']); // 19, as encodeRow(...).length
 */
export function encodedRowLength(cells: readonly string[]): number {
  let length = cells.length === 0 ? 0 : cells.length - 1; // the commas
  for (let i = 0; i < cells.length; i++) {
    const cell = cells[i]!;
    length += cell.length;
    if (NEEDS_QUOTES.test(cell)) length += 2 + countQuotes(cell);
  }
  return length;
}

/** How many `"` are in `text`. */
function countQuotes(text: string): number {
  let count = 0;
  for (let at = text.indexOf('"'); at !== -1; at = text.indexOf('"', at + 1)) count++;
  return count;
}

/** The cells of a line written by {@link encodeRow}. */
export function decodeRow(line: string): string[] {
  const cells: string[] = [];
  let at = 0;
  for (;;) {
    if (line.charCodeAt(at) === 34) {
      let cell = '';
      let from = at + 1;
      for (;;) {
        const quote = line.indexOf('"', from);
        if (quote === -1) throw new RangeError('unterminated quoted cell in a stored row');
        cell += line.slice(from, quote);
        if (line.charCodeAt(quote + 1) === 34) {
          cell += '"';
          from = quote + 2;
        } else {
          at = quote + 1;
          break;
        }
      }
      cells.push(cell);
    } else {
      const comma = line.indexOf(',', at);
      const end = comma === -1 ? line.length : comma;
      cells.push(line.slice(at, end));
      at = end;
    }
    if (at >= line.length) return cells;
    at++; // the comma
    if (at === line.length) {
      cells.push('');
      return cells;
    }
  }
}

/** Why `columns` cannot be a job's header, or `undefined` when it can. */
export function sourceColumnsProblem(columns: unknown): string | undefined {
  if (!Array.isArray(columns) || columns.length === 0) return 'must be a non-empty array of strings';
  if (columns.length > MAX_SOURCE_COLUMNS) {
    return `has ${columns.length} columns, at most ${MAX_SOURCE_COLUMNS}`;
  }
  if (!columns.every((name) => typeof name === 'string')) return 'must be a non-empty array of strings';
  return lengthProblem(columns) ?? unstorableCell(columns);
}

/** Why `cells`, as a CSV line, are too long to keep, or `undefined`. */
function lengthProblem(cells: readonly string[]): string | undefined {
  const length = encodedRowLength(cells);
  if (length > MAX_SOURCE_ROW_CHARS) {
    return `is ${length} characters as a CSV line, at most ${MAX_SOURCE_ROW_CHARS}`;
  }
  return undefined;
}

/**
 * Why `cells` cannot be a stored row of a header of `width` columns, or `undefined` when they can: it must have
 * exactly `width` string cells, none with a NUL character or a lone surrogate, and be at most
 * {@link MAX_SOURCE_ROW_CHARS} characters as a CSV line. Builds no
 * string: what an upload checks row by row before handing the rows to the manager, which encodes them.
 */
export function sourceRowProblem(cells: unknown, width: number): string | undefined {
  if (!Array.isArray(cells) || !cells.every((cell) => typeof cell === 'string')) {
    return 'must be an array of strings';
  }
  if (cells.length !== width) return `has ${cells.length} cells, the header has ${width}`;
  return lengthProblem(cells) ?? unstorableCell(cells);
}

/**
 * How header `columns` differs from the job's `source`, or `undefined` when they are the same (same names in
 * the same order; the address column may differ).
 */
export function sourceMismatch(source: JobSource, columns: readonly string[]): string | undefined {
  const quoted = (name: string) => JSON.stringify(name.length > 64 ? `${name.slice(0, 64)}...` : name);
  for (let i = 0; i < Math.max(source.columns.length, columns.length); i++) {
    const theirs = source.columns[i];
    const ours = columns[i];
    if (theirs === ours) continue;
    if (ours === undefined) return `lacks column ${i + 1} of the job's header (${quoted(theirs!)})`;
    if (theirs === undefined) return `has a column ${i + 1} (${quoted(ours)}) that the job's header lacks`;
    return `has ${quoted(ours)} as column ${i + 1}, the job's header has ${quoted(theirs)}`;
  }
  return undefined;
}

/** The source of the job's rows checked and encoded, as the manager stores them. */
export interface EncodedSource {
  readonly source: JobSource;
  readonly rows: string[];
}

/**
 * Checks the `source` of a create or add of `count` addresses and encodes its rows; returns the offending
 * `field` and its problem instead when it is malformed (the caller throws its own typed error).
 */
export function encodeSource(
  input: SourceRowsInput,
  count: number,
): EncodedSource | { readonly field: string; readonly problem: string } {
  if (typeof input !== 'object' || input === null) return { field: 'source', problem: 'must be an object' };
  const problem = sourceColumnsProblem(input.columns);
  if (problem !== undefined) return { field: 'source.columns', problem };
  const width = input.columns.length;
  if (!Number.isInteger(input.emailColumn) || input.emailColumn < 0 || input.emailColumn >= width) {
    return { field: 'source.emailColumn', problem: `must be an integer 0-${width - 1}` };
  }
  if (!Array.isArray(input.rows) || input.rows.length !== count) {
    return { field: 'source.rows', problem: `must be an array with one row per address (${count})` };
  }
  const rows: string[] = new Array(count);
  for (let i = 0; i < count; i++) {
    const problem = sourceRowProblem(input.rows[i], width);
    if (problem !== undefined) return { field: `source.rows[${i}]`, problem };
    rows[i] = encodeRow(input.rows[i] as string[]);
  }
  return { source: { columns: [...input.columns], emailColumn: input.emailColumn }, rows };
}

/** The cells of a position: its stored row, or (added without one) empty cells but the address. */
export function sourceCells(source: JobSource, row: string | undefined, email: string): string[] {
  if (row !== undefined) return decodeRow(row);
  const cells = new Array<string>(source.columns.length).fill('');
  cells[source.emailColumn] = email;
  return cells;
}

/**
 * A page of {@link SourcedResults}: the final results of `page` (positions read from the store, `undefined` where a
 * partial read has none) with the cells of their rows, `rows[i]` being the stored row of `page[i]`'s position.
 */
export function sourcedPage(
  source: JobSource | null,
  page: readonly (VerificationResult | undefined)[],
  rows: ReadonlyArray<string | undefined>,
): SourcedResults {
  const results: VerificationResult[] = [];
  const cells: string[][] = [];
  page.forEach((result, i) => {
    if (result === undefined) return;
    results.push(result);
    if (source !== null) cells.push(sourceCells(source, rows[i], result.email));
  });
  return { source, results, rows: cells };
}
