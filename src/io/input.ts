/**
 * An address list as `mailvet bulk`, the HTTP list upload and the console read it: plain text (one address a line)
 * or CSV (the address column found by its header name or named by `--column`), read as a stream of records.
 * @module
 */

import { CsvReader, sniffDelimiter } from './csv-reader.js';
import { findEmailColumn } from './email-column.js';

export { findEmailColumn };

import { type Line, readLines } from './lines.js';

/**
 * A list whose shape cannot be read: `usage` when the caller's choice does not fit it (a `--column` that names
 * no column or two, a header without an address column), `unreadable` when its header row cannot be parsed.
 * Each adapter turns it into its own error (the CLI's exit codes, the API's 400).
 */
export class InputError extends Error {
  override name = 'InputError';
  readonly kind: 'usage' | 'unreadable';

  constructor(kind: 'usage' | 'unreadable', message: string) {
    super(message);
    this.kind = kind;
  }
}

/** A value quoted for a message, cut at 60 characters. */
function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
}

/** What the input looks like, decided from its first line. */
export interface InputShape {
  /** `text`: one address a line; `csv`: delimited columns. */
  readonly format: 'text' | 'csv';
  /** The CSV delimiter (`,` for text input). */
  readonly delimiter: string;
  /** The input's column names, as output columns (`email` for text, `column1`... for CSV without a header). */
  readonly columns: readonly string[];
  /** Index of the address in `columns`. */
  readonly emailIndex: number;
  /** The first line is a header row. */
  readonly hasHeader: boolean;
}

/** One record of input. */
export interface InputRecord {
  /** Line number where the record starts. */
  readonly line: number;
  /** The cells, one per column of the shape. For text input: the line. */
  readonly cells: readonly string[];
  /** The address to verify. */
  readonly email: string;
  /** Why the record could not be read, or `null`; such a record is reported as a result, not verified. */
  readonly error: string | null;
}

/** An input whose shape is known, with its records still to be read. */
export interface OpenedInput {
  readonly shape: InputShape;
  /** The records after the header, in order, read as they are pulled. */
  readonly records: AsyncGenerator<InputRecord>;
  /** Counts the records after the header without building them (instead of reading `records`). */
  count(): Promise<number>;
}

/** Options of {@link openInput}. */
export interface InputOptions {
  /** Name of the input in error lines (a path, or `standard input`). */
  readonly name: string;
  /** Header name of the address column; matched ignoring case and surrounding space. */
  readonly column?: string | undefined;
  /** Read as plain text whatever the first line looks like (for `.txt` files). @default false */
  readonly text?: boolean;
}

function listed(headers: readonly string[]): string {
  const shown = headers.slice(0, 8).map(quote).join(', ');
  return headers.length > 8 ? `${shown}, ...` : shown;
}

function shapeOf(first: Line, options: InputOptions): InputShape {
  const text: InputShape = {
    format: 'text',
    delimiter: ',',
    columns: ['email'],
    emailIndex: 0,
    hasHeader: false,
  };
  if (options.text && options.column === undefined) return text;
  const delimiter = sniffDelimiter(first.text);
  if (delimiter === undefined && options.column === undefined && findEmailColumn([first.text]) === -1)
    return text;
  const reader = new CsvReader(delimiter ?? ',');
  const [record] = reader.push(first);
  if (record?.kind !== 'row') {
    throw new InputError(
      'unreadable',
      `cannot read the header row of ${options.name} (line ${first.number})`,
    );
  }
  const headers = record.fields;
  if (options.column !== undefined) {
    const wanted = options.column.trim().toLowerCase();
    const matches = headers.flatMap((header, index) =>
      header.trim().toLowerCase() === wanted ? [index] : [],
    );
    if (matches.length === 0) {
      throw new InputError(
        'usage',
        `column ${quote(options.column)} is not in the header of ${options.name}: ${listed(headers)}`,
      );
    }
    if (matches.length > 1) {
      // Taking the first could verify the wrong addresses (a work and a home column both named "email").
      const positions = matches.map((index) => index + 1).join(', ');
      throw new InputError(
        'usage',
        `column ${quote(options.column)} names columns ${positions} of the header of ${options.name}; rename all but one`,
      );
    }
    const index = matches[0]!;
    return {
      format: 'csv',
      delimiter: delimiter ?? ',',
      columns: headers,
      emailIndex: index,
      hasHeader: true,
    };
  }
  const named = findEmailColumn(headers);
  if (named !== -1)
    return {
      format: 'csv',
      delimiter: delimiter ?? ',',
      columns: headers,
      emailIndex: named,
      hasHeader: true,
    };
  const holding = headers.findIndex((cell) => cell.includes('@'));
  if (holding === -1) {
    throw new InputError(
      'usage',
      `no email column in the header of ${options.name} (${listed(headers)}); name it with --column`,
    );
  }
  const columns = headers.map((_, index) => (index === holding ? 'email' : `column${index + 1}`));
  return { format: 'csv', delimiter: delimiter ?? ',', columns, emailIndex: holding, hasHeader: false };
}

function malformed(shape: InputShape, line: number, raw: string, reason: string): InputRecord {
  const cells = shape.columns.map((_, index) => (index === shape.emailIndex ? raw : ''));
  return { line, cells, email: raw, error: reason };
}

async function* textRecords(shape: InputShape, lines: AsyncIterable<Line[]>): AsyncGenerator<InputRecord> {
  for await (const batch of lines) {
    for (const line of batch) {
      if (line.tooLong) {
        yield malformed(shape, line.number, line.text, `line ${line.number} is longer than the limit`);
      } else if (line.text.trim() !== '') {
        const email = line.text.trim();
        yield { line: line.number, cells: [email], email, error: null };
      }
    }
  }
}

async function* csvRecords(shape: InputShape, lines: AsyncIterable<Line[]>): AsyncGenerator<InputRecord> {
  const reader = new CsvReader(shape.delimiter);
  const width = shape.columns.length;
  function* convert(records: ReturnType<CsvReader['push']>): Generator<InputRecord> {
    for (const record of records) {
      if (record.kind === 'malformed') {
        yield malformed(shape, record.line, record.raw, record.reason);
      } else if (record.fields.length > width) {
        const raw = record.fields.join(shape.delimiter);
        const reason = `malformed CSV row at line ${record.line}: ${record.fields.length} fields, the header has ${width}`;
        yield malformed(shape, record.line, raw, reason);
      } else {
        const cells = record.fields;
        while (cells.length < width) cells.push('');
        yield { line: record.line, cells, email: cells[shape.emailIndex] ?? '', error: null };
      }
    }
  }
  for await (const batch of lines) {
    for (const line of batch) yield* convert(reader.push(line));
  }
  yield* convert(reader.end());
}

async function* prepend(first: Line[], rest: AsyncGenerator<Line[]>): AsyncGenerator<Line[]> {
  if (first.length > 0) yield first;
  yield* rest;
}

/**
 * Reads the input's first non-blank line to decide its shape, and returns the shape with a lazy stream of
 * its records. Returns `undefined` for an input with no non-blank line. Throws a usage error when the
 * address column cannot be found, and an I/O error when the header cannot be read.
 */
export async function openInput(
  source: AsyncIterable<Buffer | string>,
  options: InputOptions,
): Promise<OpenedInput | undefined> {
  const lines = readLines(source);
  let pending: Line[] = [];
  let first: Line | undefined;
  while (first === undefined) {
    const next = await lines.next();
    if (next.done) return undefined;
    const index = next.value.findIndex((line) => line.tooLong || line.text.trim() !== '');
    if (index !== -1) {
      first = next.value[index];
      pending = next.value.slice(index);
    }
  }
  const shape = shapeOf(first, options);
  if (shape.hasHeader) pending = pending.slice(1);
  const all = prepend(pending, lines);
  return {
    shape,
    records: shape.format === 'text' ? textRecords(shape, all) : csvRecords(shape, all),
    count: () => countRecords(shape, all),
  };
}

async function countRecords(shape: InputShape, lines: AsyncIterable<Line[]>): Promise<number> {
  let count = 0;
  if (shape.format === 'text') {
    for await (const batch of lines) {
      for (const line of batch) if (line.tooLong || line.text.trim() !== '') count++;
    }
    return count;
  }
  const reader = new CsvReader(shape.delimiter);
  for await (const batch of lines) {
    for (const line of batch) count += reader.push(line).length;
  }
  return count + reader.end().length;
}
