/**
 * Uploads a list file as a job, in batches: `POST v1/bulk` makes the job (not started), the file's addresses go
 * up through `POST v1/bulk/{id}/emails` as the file is read one slice at a time (so a file of any size, past the
 * API's 64 MiB list-body limit, is never held whole), then `POST v1/bulk/{id}/start`. A failure deletes the job,
 * so that no half-filled job is left behind.
 * @module
 */
import { ApiError, call, json } from './api.js';
import { emailBatches, type ListShape } from './list-file.js';
import type { Job } from './types.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Adds `emails` to the job at `path`: waits out a `rate_limited` answer (its `Retry-After`), and splits a batch
 * the server finds too large (a server with a lower `maxEmailsPerRequest` or body limit) in two.
 */
async function addEmails(key: string, path: string, emails: readonly string[]): Promise<void> {
  for (;;) {
    try {
      await call(key, `${path}/emails`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ emails }),
      });
      return;
    } catch (failure) {
      if (!(failure instanceof ApiError)) throw failure;
      if (failure.code === 'rate_limited') {
        await sleep(Math.max(1, failure.retryAfterSeconds ?? 1) * 1000);
      } else if (failure.code === 'payload_too_large' && emails.length > 1) {
        const half = Math.ceil(emails.length / 2);
        await addEmails(key, path, emails.slice(0, half));
        await addEmails(key, path, emails.slice(half));
        return;
      } else {
        throw failure;
      }
    }
  }
}

/**
 * Creates a job named after `file`, fills it with the file's addresses (read as `shape` says), and starts it.
 * `onProgress` gets the share of the file sent so far (0-1).
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
  try {
    let sent = 0;
    for await (const { emails, bytesRead } of emailBatches(file, shape)) {
      if (emails.length > 0) await addEmails(key, path, emails);
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
