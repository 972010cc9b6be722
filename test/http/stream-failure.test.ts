/**
 * A download whose store read fails after the headers went out must not end cleanly: over a real socket, with
 * mailvet's node:http listener, every streamed format (CSV, NDJSON, JSON) ends in an error the client sees (the
 * connection is cut: no chunked terminator), never a short but well-formed body.
 */

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { JobStore } from '../../src/bulk/types.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { createServer } from '../../src/http/node.js';
import { instantVerifier, until } from '../bulk/support.js';
import { KEY_A } from './support.js';

const COUNT = 5000;
/** Reads of results from this position on fail, once `failing` is set. */
const BREAKS_AT = 2000;

let failing = false;
let jobs: BulkJobManager;
let handler: Handler;
let jobId: string;

beforeAll(async () => {
  const inner = memoryJobStore();
  const store: JobStore = {
    ...inner,
    saveJob: (record) => inner.saveJob(record),
    putResults: (...args) => inner.putResults(...args),
    getResults: (id, offset, limit) => {
      if (failing && offset + limit > BREAKS_AT)
        throw new Error('could not read block 1234 of relation 16385');
      return inner.getResults(id, offset, limit);
    },
  };
  jobs = new BulkJobManager({ store, verifier: instantVerifier() });
  handler = createHandler({ apiKeys: [KEY_A], jobs, logger: { error: () => undefined } });
  const emails = Array.from({ length: COUNT }, (_, i) => `user${i}@d${i % 9}.example`);
  const created = await handler(
    new Request('http://127.0.0.1/v1/bulk', {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'text/plain' },
      body: emails.join('\n'),
    }),
  );
  jobId = ((await created.json()) as { id: string }).id;
  const status = async () => {
    const answer = await handler(
      new Request(`http://127.0.0.1/v1/bulk/${jobId}`, { headers: { authorization: `Bearer ${KEY_A}` } }),
    );
    return ((await answer.json()) as { status: string }).status;
  };
  await until(async () => (await status()) === 'complete');
  failing = true;
});
afterAll(async () => {
  await jobs.close();
});

/** A raw GET over its own socket: the status line and whether the chunked body was terminated. */
function rawGet(
  base: string,
  path: string,
  accept: string,
): Promise<{ head: string; terminated: boolean; bytes: number }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${KEY_A}\r\nAccept: ${accept}\r\nConnection: close\r\n\r\n`,
      ),
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.slice(0, text.indexOf('\r\n'));
      resolve({ head, terminated: text.endsWith('\r\n0\r\n\r\n'), bytes: text.length });
    };
    socket.on('close', done);
    socket.on('error', () => undefined);
  });
}

const FORMATS: [string, string][] = [
  ['text/csv', 'csv'],
  ['application/x-ndjson', 'ndjson'],
  ['application/json', 'json'],
];

describe('a results download whose store read fails mid-stream (node:http, as mailvet serve)', () => {
  let base = '';
  let close: () => Promise<void> = () => Promise.resolve();
  beforeAll(async () => {
    const running = await createServer({ port: 0, host: '127.0.0.1', handler });
    base = running.url;
    close = () => running.close();
  });
  afterAll(async () => {
    await close();
  });

  it.each(FORMATS)('%s: fetch sees the body fail, and the chunked body has no terminator', async (accept) => {
    const response = await fetch(`${base}/v1/bulk/${jobId}/results`, {
      headers: { authorization: `Bearer ${KEY_A}`, accept },
    });
    expect(response.status).toBe(200); // the headers went out before the failing read
    await expect(response.text()).rejects.toThrow();
    const raw = await rawGet(base, `/v1/bulk/${jobId}/results`, accept);
    expect(raw.head).toBe('HTTP/1.1 200 OK');
    expect(raw.bytes).toBeGreaterThan(1000); // the first pages arrived
    expect(raw.terminated).toBe(false);
  });
});
