/**
 * Follows a job over `GET v1/bulk/{id}/events` (Server-Sent Events) read with `fetch`, so that the key stays
 * in the `Authorization` header (an `EventSource` could only put it in the URL).
 * @module
 */
import { call } from './api.js';
import type { Job } from './types.js';

/**
 * Calls `onJob` with every job state the stream sends until the final one; resolves when the stream ends,
 * rejects when it cannot be read (the caller then falls back to polling). `signal` stops it.
 */
export async function followJob(
  key: string,
  id: string,
  onJob: (job: Job) => void,
  signal: AbortSignal,
): Promise<void> {
  const response = await call(key, `v1/bulk/${encodeURIComponent(id)}/events`, {
    headers: { accept: 'text/event-stream' },
    signal,
  });
  if (response.body === null) throw new Error('the event stream has no body');
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += value;
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const data = buffer
        .slice(0, end)
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      buffer = buffer.slice(end + 2);
      if (data !== '') onJob(JSON.parse(data) as Job);
      end = buffer.indexOf('\n\n');
    }
  }
}
