/**
 * PostgreSQL goes away mid-job (a private server of the test's own, stopped like a crash and started again on the
 * same port and data): the worker waits without acknowledging a chunk it could not store, the API node answers
 * 503 `service_unavailable`, and once the server is back the job completes with one result per position.
 */
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { storeFailureOf } from '../../src/bullmq/store-failure.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createHandler } from '../../src/http/handler.js';
import { postgresStore } from '../../src/postgres/pg.js';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { handlerCaller } from '../support/http-call.js';
import { BIN } from '../support/mailvet-bin.js';
import {
  HAS_POSTGRES_BINARIES,
  type PrivatePostgres,
  startPrivatePostgres,
} from '../support/private-postgres.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

if (!HAS_POSTGRES_BINARIES) {
  console.warn('no PostgreSQL binaries (/usr/lib/postgresql/*/bin): the PostgreSQL outage tests are skipped');
}
const enabled = HAS_POSTGRES_BINARIES && REDIS_URL !== undefined;
const COUNT = 1200;
const KEY = 'outage-key';

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let server: PrivatePostgres;
const emails = Array.from({ length: COUNT }, (_, i) =>
  i % 7 === 3 ? `nobody@d${i % 3}.outage.test` : `user${i}@d${i % 3}.outage.test`,
);

function verifier(): Verifier {
  return createVerifier({
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
  });
}

beforeAll(async () => {
  if (!enabled) return;
  const zone: Record<string, unknown> = {};
  for (let d = 0; d < 3; d++) {
    zone[`d${d}.outage.test`] = { mx: [{ priority: 10, exchange: 'mx.outage.test' }] };
  }
  zone['mx.outage.test'] = { a: ['127.0.0.30'] };
  dns = await startDnsServer(zone as Parameters<typeof startDnsServer>[0]);
  smtp = await startSmtpServer({ host: '127.0.0.30', mailboxes: { nobody: 'missing' } });
  server = await startPrivatePostgres();
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await smtp?.close();
  await dns?.close();
});

const call = handlerCaller(KEY);

describe.skipIf(!enabled)('PostgreSQL unreachable under a fleet job', () => {
  beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
  it('classifies what pg throws when the server is gone as unreachable, a refused statement as rejected', () => {
    expect(storeFailureOf(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(
      'unreachable',
    );
    expect(storeFailureOf(new Error('Connection terminated unexpectedly'))).toBe('unreachable');
    expect(storeFailureOf(Object.assign(new Error('terminating'), { code: '57P01' }))).toBe('unreachable');
    expect(storeFailureOf(Object.assign(new Error('check'), { code: '23514' }))).toBe('rejected');
    expect(storeFailureOf(Object.assign(new Error('no table'), { code: '42P01' }))).toBe('rejected');
    expect(storeFailureOf(new Error('something else'))).toBe('other');
    expect(storeFailureOf(undefined)).toBe('other');
    expect(storeFailureOf({ code: 42 })).toBe('other');
  });

  it('waits for the server without acknowledging unstored chunks; the API node answers 503, then recovers', async () => {
    const prefix = testPrefix();
    const schema = 'mv_outage';
    const store = await postgresStore({ connectionString: server.url, schema });
    const workerStore = await postgresStore({ connectionString: server.url, schema });
    const jobs = new BulkJobManager({
      store,
      runner: bullmqRunner({ connection: REDIS_URL!, prefix, chunkSize: 20, reconcileMs: 300 }),
    });
    const handler = createHandler({ jobs, apiKeys: [KEY], console: false, logger: { error: () => {} } });
    const v = verifier();
    const slow = {
      verify: async (email: string) => {
        await new Promise((resolve) => setTimeout(resolve, 15));
        return v.verify(email);
      },
    };
    const errors: unknown[] = [];
    const queue = new Queue('verify', { connection: { url: REDIS_URL! }, prefix });
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await createWorker({
        connection: REDIS_URL!,
        prefix,
        store: workerStore,
        verifier: slow,
        concurrency: 4,
        onError: (error) => errors.push(error),
      });
      const expected: VerificationResult[] = [];
      for (let at = 0; at < COUNT; at += 16) {
        expected.push(...(await Promise.all(emails.slice(at, at + 16).map((email) => v.verify(email)))));
      }
      const created = await call(handler, 'POST', '/v1/bulk', { name: 'outage', emails });
      expect(created.status).toBe(201);
      const job = { id: created.body.id as string };
      const progress = async () => (await call(handler, 'GET', `/v1/bulk/${job.id}`)).body;
      await expect
        .poll(async () => (await progress()).completed, { timeout: 30_000, interval: 50 })
        .toBeGreaterThan(100);
      expect((await progress()).completed).toBeLessThan(COUNT / 2); // mid-job

      await server.crash();
      const during = await call(handler, 'GET', `/v1/bulk/${job.id}`);
      expect(during).toMatchObject({
        status: 503,
        retryAfter: '5',
        body: {
          error: { code: 'service_unavailable', message: 'the job store does not answer; retry later' },
        },
      });
      expect((await call(handler, 'GET', '/healthz')).status).toBe(503);
      expect((await call(handler, 'POST', `/v1/bulk/${job.id}/start`)).status).toBe(503);
      // Chunks committed before the crash are acknowledged by now; from here on none may leave the queue.
      await new Promise((resolve) => setTimeout(resolve, 500));
      const pending = async () => {
        const counts = await queue.getJobCounts('active', 'waiting', 'delayed', 'prioritized');
        return Object.values(counts).reduce((a, b) => a + b, 0);
      };
      const before = await pending();
      expect(before).toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect(await pending()).toBe(before);
      expect((await queue.getJobCounts('active')).active).toBeGreaterThan(0); // held, not dropped
      expect(errors.length).toBeGreaterThan(0);
      expect(errors.every((error) => storeFailureOf(error) === 'unreachable')).toBe(true);

      await server.start();
      await expect
        .poll(async () => (await call(handler, 'GET', `/v1/bulk/${job.id}`)).body?.status, {
          timeout: 60_000,
          interval: 200,
        })
        .toBe('complete');
      expect((await call(handler, 'GET', '/healthz')).status).toBe(200);
      const done = await progress();
      expect(done).toMatchObject({ status: 'complete', total: COUNT, completed: COUNT });
      expect(Object.values(done.counts as Record<string, number>).reduce((a, b) => a + b, 0)).toBe(COUNT);
      const page = await call(handler, 'GET', `/v1/bulk/${job.id}/results?limit=${COUNT}`);
      const results = page.body.results as VerificationResult[];
      expect(results.map(({ email, status, sub_status }) => ({ email, status, sub_status }))).toEqual(
        expected.map(({ email, status, sub_status }) => ({ email, status, sub_status })),
      );
    } finally {
      await worker?.close();
      await handler.close();
      await jobs.close();
      await workerStore.close?.();
      await queue.close();
      await v.dispose();
      await deletePrefix(prefix);
    }
  }, 120_000);

  it('mailvet serve --redis --store answers 503 while PostgreSQL is down, without exiting, and recovers', async () => {
    const prefix = testPrefix();
    const store = new URL(server.url);
    store.searchParams.set('schema', 'mv_outage_serve');
    const child = spawn(
      process.execPath,
      [
        BIN,
        'serve',
        '--port',
        '0',
        '--no-console',
        '--store',
        store.toString(),
        '--redis',
        REDIS_URL!,
        '--prefix',
        prefix,
      ],
      { env: { PATH: process.env.PATH ?? '', MAILVET_API_KEYS: KEY }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const request = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', connection: 'close' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000), // a hang fails the test
      });
      return {
        status: response.status,
        retryAfter: response.headers.get('retry-after'),
        body: await response.json(),
      };
    };
    let base = '';
    try {
      for (let i = 0; i < 1500 && base === ''; i++) {
        base = /listening on (http:\/\/\S+?)\/?\s/.exec(output)?.[1] ?? '';
        if (child.exitCode !== null) throw new Error(`mailvet serve exited:\n${output}`);
        if (base === '') await sleep(20);
      }
      expect(base).not.toBe('');
      const created = await request('POST', '/v1/bulk', { emails: ['a@d0.outage.test', 'b@d1.outage.test'] });
      expect(created.status).toBe(201); // no worker runs: the job stays processing
      const id = created.body.id as string;
      await server.crash();
      for (const [method, path] of [
        ['GET', `/v1/bulk/${id}`],
        ['GET', '/v1/bulk'],
        ['POST', `/v1/bulk/${id}/start`],
      ] as const) {
        expect(await request(method, path)).toMatchObject({
          status: 503,
          retryAfter: '5',
          body: {
            error: { code: 'service_unavailable', message: 'the job store does not answer; retry later' },
          },
        });
      }
      expect((await request('POST', '/v1/bulk', { emails: ['c@d2.outage.test'] })).status).toBe(503);
      expect((await request('GET', '/healthz')).status).toBe(503);
      expect(child.exitCode).toBeNull();
      await server.start();
      await expect.poll(async () => (await request('GET', '/healthz')).status, { timeout: 20_000 }).toBe(200);
      expect(await request('GET', `/v1/bulk/${id}`)).toMatchObject({
        status: 200,
        body: { id, status: 'processing', total: 2 },
      });
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, sleep(10_000)]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      await deletePrefix(prefix);
    }
  }, 90_000);
});
