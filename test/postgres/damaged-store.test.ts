/**
 * A damaged PGlite data directory (its results relation cut to half, as a disk that filled or a copy taken mid-write
 * leaves it) does not open as healthy: the store reports the damaged job at open, `/healthz` answers 503 and
 * `mailvet serve` names the job; a download of the job fails part-way over the socket instead of ending cleanly.
 */
import { createHash } from 'node:crypto';
import { stat, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { createServer } from '../../src/http/node.js';
import { pgliteStore } from '../../src/postgres/index.js';
import { instantVerifier } from '../bulk/support.js';
import { tempDir } from '../cli/support.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { start } from '../support/mailvet-bin.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);

const KEY = 'damage-key';
const COUNT = 4000;

let dir: Awaited<ReturnType<typeof tempDir>>;
let dataDir = '';
let jobId = '';

beforeAll(async () => {
  dir = await tempDir('mailvet-damage-');
  dataDir = dir.file('data');
  const store = await pgliteStore({ dataDir });
  const jobs = new BulkJobManager({ store, verifier: instantVerifier() });
  const owner = createHash('sha256').update(KEY).digest('hex'); // the tenant of KEY over HTTP
  const emails = Array.from({ length: COUNT }, (_, i) => `user${i}@d${i % 9}.example`);
  const completed = new Promise<string>((resolve) => jobs.on('complete', (job) => resolve(job.id)));
  jobId = (await jobs.create({ emails, owner })).id;
  expect(await completed).toBe(jobId);
  await jobs.close();
  const db = await PGlite.create(dataDir);
  const [row] = (await db.query<{ path: string }>(`SELECT pg_relation_filepath('mailvet.results') AS path`))
    .rows;
  await db.close();
  const file = join(dataDir, row!.path);
  const size = (await stat(file)).size;
  await truncate(file, Math.floor(size / 2 / 8192) * 8192);
}, 120_000);
afterAll(async () => {
  await dir.remove();
});

describe('a data directory whose results relation was truncated', () => {
  it('is reported as damaged at open, by storeHealth and /healthz; the download fails part-way', async () => {
    const store = await pgliteStore({ dataDir });
    expect(store.damage).toEqual([
      {
        jobId,
        problem: expect.stringMatching(/^complete(, its results cannot be read: .*| with 4000 results, .*)$/),
      },
    ]);
    const jobs = new BulkJobManager({ store, verifier: instantVerifier() });
    const server = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY],
      jobs,
      logger: { error: () => {} },
    });
    try {
      expect(await jobs.storeHealth()).toBe('damaged');
      const health = await fetch(`${server.url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({
        error: { code: 'service_unavailable', message: expect.stringContaining('the job store is damaged') },
      });
      for (const accept of ['text/csv', 'application/x-ndjson', 'application/json']) {
        const download = await fetch(`${server.url}/v1/bulk/${jobId}/results`, {
          headers: { authorization: `Bearer ${KEY}`, accept },
        });
        expect(download.status, accept).toBe(200); // the first pages went out before the damaged part
        await expect(download.text(), accept).rejects.toThrow(); // never a clean, short end
      }
    } finally {
      await server.close();
      await jobs.close();
    }
  }, 60_000);

  it('mailvet serve --data names the damaged job at start and answers /healthz 503', async () => {
    const served = start(['serve', '--port', '0', '--no-dns', '--no-console', '--data', dataDir], {
      env: { MAILVET_API_KEYS: KEY },
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        served.child.stdout.on('data', () => {
          const found = /listening on (http:\/\/\S+)/.exec(served.stdout())?.[1];
          if (found !== undefined) resolve(found);
        });
        served.exited.then((exit) => reject(new Error(`serve exited ${exit.code}: ${exit.stderr}`)));
      });
      expect((await fetch(`${url}/healthz`)).status).toBe(503);
    } finally {
      served.child.kill('SIGTERM');
    }
    const exit = await served.exited;
    const warning = exit.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; msg: string })
      .find((line) => line.msg.startsWith('the job store is damaged'));
    expect(warning?.level).toBe('warn');
    expect(warning?.msg).toMatch(
      new RegExp(`^the job store is damaged: job ${jobId} is complete.*; its downloads fail part-way`),
    );
  }, 60_000);
});
