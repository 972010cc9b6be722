/**
 * Address lists uploaded as files: `text/plain` (one address a line) or `text/csv` (the address column named by
 * `?column=` or found by its header, as `mailvet bulk` does), read as a stream within a byte and a count limit.
 * @module
 */

import { openInput } from '../cli/input.js';
import { CliError } from '../cli/io.js';
import { HttpError } from './errors.js';

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

/**
 * Reads the addresses of a list body, in order. Blank lines are skipped; a CSV row that cannot be read, or a
 * line over 64 KiB, is a 400 naming its line; more than `maxEmails` addresses or `maxBytes` bytes is a 413.
 * @example
 * const emails = await readAddressList(request, 'csv', 'work email', { maxBytes: 1e8, maxEmails: 1e6 });
 */
export async function readAddressList(
  request: Request,
  format: ListFormat,
  column: string | undefined,
  limits: ListLimits,
): Promise<string[]> {
  if (request.body === null) return [];
  const length = request.headers.get('content-length');
  if (length !== null && Number(length) > limits.maxBytes) {
    throw new HttpError('payload_too_large', `the list exceeds ${limits.maxBytes} bytes`);
  }
  const emails: string[] = [];
  try {
    const opened = await openInput(bounded(request.body, limits.maxBytes), {
      name: 'the request body',
      column,
      text: format === 'text',
    });
    if (opened === undefined) return emails;
    for await (const record of opened.records) {
      if (record.error !== null) throw new HttpError('invalid_request', record.error);
      if (emails.length === limits.maxEmails) {
        throw new HttpError('payload_too_large', `at most ${limits.maxEmails} addresses per list`);
      }
      emails.push(record.email);
    }
  } catch (error) {
    if (error instanceof CliError) {
      throw new HttpError('invalid_request', error.message.replace('--column', 'the column parameter'));
    }
    throw error;
  }
  return emails;
}
