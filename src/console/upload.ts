/**
 * Uploads a list file as a job, in batches: `POST v1/bulk` makes the job (not started), the file's addresses go
 * up through `POST v1/bulk/{id}/emails` as the file is read one slice at a time (so a file of any size, past the
 * API's 64 MiB list-body limit, is never held whole), then `POST v1/bulk/{id}/start`. A CSV file goes up as
 * `text/csv` (its header line, then the rows of the batch), so that the server keeps its rows and the job's CSV
 * download has the file's columns for every client; a text file as JSON. A failure deletes the job, so that no
 * half-filled job is left behind.
 * @module
 */
import { ApiError, call, json } from './api.js';
import { headerLine, type ListShape, listBatches } from './list-file.js';
import type { Job } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a batch goes: the job's path, and for a CSV file the header line and address column. */
interface Target {
  readonly path: string;
  readonly csv: { readonly header: string; readonly column: string } | undefined;
}

/** The request that adds a batch: JSON addresses, or the CSV rows after the file's header line. */
function addRequest(target: Target, emails: readonly string[], rows: readonly string[] | undefined) {
  if (target.csv === undefined || rows === undefined) {
    return {
      url: `${target.path}/emails`,
      init: {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails }),
      },
    };
  }
  return {
    url: `${target.path}/emails?column=${encodeURIComponent(target.csv.column)}`,
    init: {
      method: 'POST',
      headers: { 'content-type': 'text/csv; charset=utf-8' },
      body: `${[target.csv.header, ...rows].join('\r\n')}\r\n`,
    },
  };
}

/**
 * Adds a batch to the job: waits out a `rate_limited` answer (its `Retry-After`), and splits a batch the server
 * finds too large (a server with a lower `maxEmailsPerRequest` or body limit) in two.
 */
async function addBatch(
  key: string,
  target: Target,
  emails: readonly string[],
  rows: readonly string[] | undefined,
): Promise<void> {
  for (;;) {
    try {
      const { url, init } = addRequest(target, emails, rows);
      await call(key, url, init);
      return;
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      if (failure.code === 'rate_limited') {
        await sleep(Math.max(1, failure.retryAfterSeconds ?? 1) * 1000);
      } else if (failure.code === 'payload_too_large' && emails.length > 1) {
        const half = Math.ceil(emails.length / 2);
        await addBatch(key, target, emails.slice(0, half), rows?.slice(0, half));
        await addBatch(key, target, emails.slice(half), rows?.slice(half));
        return;
      } else {
        throw failure;
      }
    }
  }
}

/**
 * Creates a job named after `file`, fills it with the file's addresses (read as `shape` says; a CSV file's rows
 * kept by the server), and starts it. `onProgress` gets the share of the file sent so far (0-1).
 */
export async function uploadList(
  key: string,
  file: File,
  shape: ListShape,
  onProgress: (share: number) => void,
): Promise<Job> {
  const created = await json<Job>(key, 'v1/bulk', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: file.name, auto_start: false }),
  });
  const path = `v1/bulk/${encodeURIComponent(created.id)}`;
  const target: Target = {
    path,
    csv:
      shape.format === 'csv'
        ? { header: headerLine(shape), column: shape.columns[shape.emailIndex] ?? '' }
        : undefined,
  };
  try {
    let sent = 0;
    for await (const { emails, rows, bytesRead } of listBatches(file, shape)) {
      if (emails.length > 0) await addBatch(key, target, emails, rows);
      sent += emails.length;
      onProgress(file.size === 0 ? 1 : bytesRead / file.size);
    }
    if (sent === 0) throw new Error('the file holds no addresses');
    return await json<Job>(key, `${path}/start`, { method: 'POST' });
  } catch (failure) {
    await call(key, path, { method: 'DELETE' }).catch(() => undefined);
    throw failure;
  }
}
