/**
 * Address lists uploaded as files: `text/plain` (one address a line) or `text/csv` (the address column named by
 * `?column=` or found by its header, as `mailvet bulk` does, each row kept for the CSV download), read as a
 * stream within a byte and a count limit.
 * @module
 */

import { sourceColumnsProblem, sourceRowProblem } from '../bulk/source.js';
import { unstorableText } from '../bulk/storable.js';
import type { SourceRowsInput } from '../bulk/types.js';
import { InputError, openInput } from '../io/input.js';
import { SLICE_CHECK_EVERY, TurnBudget } from '../turn.js';
import { HttpError } from './errors.js';

/**
 * The longest stretch of work on a list body without an event-loop turn, in milliseconds: a list of a million
 * addresses is read in slices, so that other requests are served while it is read.
 */
export const LIST_SLICE_MS = 5;

/** The list formats a bulk request body may have, besides JSON. */
export type ListFormat = 'text' | 'csv';

/** Limits of {@link readAddressList}. */
export interface ListLimits {
  /** Largest body, in bytes. */
  readonly maxBytes: number;
  /** Most addresses. */
  readonly maxEmails: number;
}

/**
 * The list format of a `Content-Type` (`text/plain` or `text/csv`, UTF-8 if a charset is given), or
 * `undefined` for any other type.
 */
export function listFormatOf(contentType: string | null): ListFormat | undefined {
  if (contentType === null) return undefined;
  const [type, ...params] = contentType.split(';');
  const name = type?.trim().toLowerCase();
  const format = name === 'text/plain' ? 'text' : name === 'text/csv' ? 'csv' : undefined;
  if (format === undefined) return undefined;
  const utf8 = params.every((param) => {
    const [key, raw] = param.split('=');
    return key?.trim().toLowerCase() !== 'charset' || /^"?utf-?8"?$/i.test(raw?.trim() ?? '');
  });
  if (!utf8) throw new HttpError('unsupported_media_type', 'a list body must be UTF-8');
  return format;
}

/** The body's chunks, failing with `payload_too_large` as soon as more than `maxBytes` arrived. */
async function* bounded(body: ReadableStream<Uint8Array>, maxBytes: number): AsyncGenerator<Buffer> {
  const reader = body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      size += value.byteLength;
      if (size > maxBytes) throw new HttpError('payload_too_large', `the list exceeds ${maxBytes} bytes`);
      yield Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A list body as read: its addresses and, for a CSV body, its header and the cells of each address's row. */
export interface AddressList {
  readonly emails: string[];
  /** The CSV's columns and rows (`rows[i]` holds `emails[i]`); `undefined` for a text list or an empty body. */
  readonly source: SourceRowsInput | undefined;
}

/**
 * Reads the addresses of a list body, in order, and for CSV the rows they came from. Blank lines are skipped;
 * a CSV row that cannot be read, a line over 64 KiB, or an address or cell with a NUL character, is a 400
 * naming its line, as is a header or row past
 * the limits of kept rows (1,000 columns, 65,536 characters); more than `maxEmails` addresses or `maxBytes`
 * bytes is a 413.
 * @example
 * const { emails, source } = await readAddressList(request, 'csv', 'work email', { maxBytes: 1e8, maxEmails: 1e6 });
 */
export async function readAddressList(
  request: Request,
  format: ListFormat,
  column: string | undefined,
  limits: ListLimits,
): Promise<AddressList> {
  if (request.body === null) return { emails: [], source: undefined };
  const length = request.headers.get('content-length');
  if (length !== null && Number(length) > limits.maxBytes) {
    throw new HttpError('payload_too_large', `the list exceeds ${limits.maxBytes} bytes`);
  }
  const emails: string[] = [];
  const rows: string[][] = [];
  try {
    const opened = await openInput(bounded(request.body, limits.maxBytes), {
      name: 'the request body',
      column,
      text: format === 'text',
    });
    if (opened === undefined) return { emails, source: undefined };
    const { shape } = opened;
    const csv = shape.format === 'csv';
    if (csv) {
      const problem = sourceColumnsProblem(shape.columns);
      if (problem !== undefined) throw new HttpError('invalid_request', `the CSV header ${problem}`);
    }
    const budget = new TurnBudget(LIST_SLICE_MS);
    let read = 0;
    for await (const record of opened.records) {
      if (++read % SLICE_CHECK_EVERY === 0 && budget.spent()) await budget.turn();
      if (record.error !== null) throw new HttpError('invalid_request', record.error);
      if (emails.length === limits.maxEmails) {
        throw new HttpError('payload_too_large', `at most ${limits.maxEmails} addresses per list`);
      }
      const unstorable = unstorableText(record.email);
      if (unstorable !== undefined) {
        throw new HttpError('invalid_request', `the address at line ${record.line} ${unstorable}`);
      }
      if (csv) {
        // Checked here for the line number in the error; the manager encodes the row when it adds it.
        const problem = sourceRowProblem(record.cells, shape.columns.length);
        if (problem !== undefined) {
          throw new HttpError('invalid_request', `the CSV row at line ${record.line} ${problem}`);
        }
        rows.push(record.cells as string[]);
      }
      emails.push(record.email);
    }
    return {
      emails,
      source:
        csv && emails.length > 0
          ? { columns: shape.columns, emailColumn: shape.emailIndex, rows }
          : undefined,
    };
  } catch (error) {
    if (error instanceof InputError) {
      throw new HttpError('invalid_request', error.message.replace('--column', 'the column parameter'));
    }
    throw error;
  }
}
