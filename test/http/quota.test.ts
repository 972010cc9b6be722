import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultMaxAddressesPerKey } from '../../src/http/index.js'; // exported by mailvet/http
import { createServer } from '../../src/http/node.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { BIN } from '../support/mailvet-bin.js';
import { addresses, fakeVerifier, KEY_A, KEY_B } from './support.js';

/** `mailvet serve` (built) with a 96 MB heap and KEY_A, as a child process; `base` resolves with its URL. */
function smallHeapServe() {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=96', BIN, 'serve', '--port', '0', '--no-dns'],
    {
      env: { PATH: process.env.PATH ?? '', MAILVET_API_KEYS: KEY_A },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const base = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) resolve(url);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  return { child, base, stderr: () => stderr };
}

async function post(url: string, key: string, body: unknown): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
describe('addresses held per API key', () => {
  it('refuses adds past maxAddressesPerKey with 429, per key, and a delete makes room', async () => {
    const server = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY_A, KEY_B],
      verifier: fakeVerifier(),
      limits: { maxAddressesPerKey: 25_000, requestsPerSecond: 10_000, burst: 10_000 },
    });
    try {
      const base = server.url.replace(/\/$/, '');
      const first = (await (await post(`${base}/v1/bulk`, KEY_A, { auto_start: false })).json()) as {
        id: string;
      };
      const second = (await (await post(`${base}/v1/bulk`, KEY_A, { auto_start: false })).json()) as {
        id: string;
      };
      expect(
        (await post(`${base}/v1/bulk/${first.id}/emails`, KEY_A, { emails: addresses(10_000) })).status,
      ).toBe(200);
      expect(
        (await post(`${base}/v1/bulk/${second.id}/emails`, KEY_A, { emails: addresses(10_000) })).status,
      ).toBe(200);
      const refused = await post(`${base}/v1/bulk/${second.id}/emails`, KEY_A, { emails: addresses(10_000) });
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'limit_exceeded',
        message: expect.stringContaining('at most 25000 addresses held per API key (its jobs hold 20000'),
      });
      expect((await post(`${base}/v1/bulk`, KEY_A, { emails: addresses(6_000) })).status).toBe(429);
      // Another key has its own quota.
      expect((await post(`${base}/v1/bulk`, KEY_B, { emails: addresses(10_000) })).status).toBe(201);
      await fetch(`${base}/v1/bulk/${first.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${KEY_A}` },
      });
      expect(
        (await post(`${base}/v1/bulk/${second.id}/emails`, KEY_A, { emails: addresses(10_000) })).status,
      ).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('derives its default from the heap limit', () => {
    expect(defaultMaxAddressesPerKey(4 * 2 ** 30)).toBe(4_194_304);
    expect(defaultMaxAddressesPerKey(2 ** 20)).toBe(10_000);
  });

  it('keeps a mailvet serve with a 96 MB heap alive against one key filling jobs it never starts', async () => {
    const serve = smallHeapServe();
    try {
      const base = await serve.base;
      let refusedAt = -1;
      for (let round = 0; round < 60 && refusedAt === -1; round++) {
        const created = await post(`${base}/v1/bulk`, KEY_A, { auto_start: false });
        if (created.status === 429) {
          refusedAt = round;
          break;
        }
        const { id } = (await created.json()) as { id: string };
        const added = await post(`${base}/v1/bulk/${id}/emails`, KEY_A, { emails: addresses(10_000) });
        if (added.status === 429) refusedAt = round;
        else expect(added.status).toBe(200);
      }
      expect(refusedAt).toBeGreaterThan(0);
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(serve.stderr()).not.toContain('heap out of memory');
    } finally {
      serve.child.kill('SIGTERM');
    }
  }, 60_000);

  it('keeps a mailvet serve with a 96 MB heap alive against one key uploading wide CSV rows', async () => {
    // The loop of issue 28: uploads of rows of 60,000 characters (each under the row limit), well within the
    // address quota; before the byte budget the server died of a full heap.
    const serve = smallHeapServe();
    try {
      const base = await serve.base;
      const wide = 'x'.repeat(60_000);
      const csv = `email,notes\n${Array.from({ length: 100 }, (_, i) => `user${i}@d.example,${wide}`).join('\n')}\n`;
      let refused: Response | undefined;
      let accepted = 0;
      for (let round = 0; round < 49 && refused === undefined; round++) {
        const upload = await fetch(`${base}/v1/bulk?auto_start=false`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'text/csv' },
          body: csv,
        });
        if (upload.status === 429) refused = upload;
        else {
          expect(upload.status).toBe(201);
          await upload.arrayBuffer();
          accepted++;
        }
      }
      expect(accepted).toBeGreaterThan(0);
      if (refused === undefined) throw new Error(`all ${accepted} uploads of wide rows were accepted`);
      expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'limit_exceeded',
        message: expect.stringMatching(
          /^at most \d+ bytes held per API key \(maxBytesPerKey; its jobs hold \d+, this request adds 12\d{6}\)/,
        ),
      });
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      expect(serve.stderr()).not.toContain('heap out of memory');
    } finally {
      serve.child.kill('SIGTERM');
    }
  }, 120_000);
});
