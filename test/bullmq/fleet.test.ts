/**
 * The fleet as a library: a manager with the bullmq runner and two in-process workers verify a job against
 * loopback DNS and SMTP servers; every position has exactly one result, equal to the in-process runner's.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { postgresStore } from '../../src/postgres/pg.js';
import type { VerificationResult } from '../../src/result.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { HAS_REDIS_SERVER, startPrivateRedis } from '../support/private-redis.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
const COUNT = 3000;
const DOMAINS = 6;

let dns: DnsTestServer;
const smtp: SmtpServerHarness[] = [];
let emails: string[] = [];
let expected: Pick<VerificationResult, 'email' | 'status' | 'sub_status'>[] = [];

function verifier(): Verifier {
  return createVerifier({
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp[0]!.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
  });
}

function brief(results: readonly VerificationResult[]) {
  return results.map(({ email, status, sub_status }) => ({ email, status, sub_status }));
}

beforeAll(async () => {
  if (!enabled) return;
  const zone: Record<string, unknown> = {};
  for (let d = 0; d < DOMAINS; d++) {
    zone[`d${d}.fleet.test`] = { mx: [{ priority: 10, exchange: `mx${d}.fleet.test` }] };
    zone[`mx${d}.fleet.test`] = { a: [`127.0.0.${d + 2}`] };
  }
  dns = await startDnsServer(zone as Parameters<typeof startDnsServer>[0]);
  const first = await startSmtpServer({ host: '127.0.0.2', mailboxes: { nobody: 'missing' } });
  smtp.push(first);
  for (let d = 1; d < DOMAINS; d++) {
    smtp.push(
      await startSmtpServer({ host: `127.0.0.${d + 2}`, port: first.port, mailboxes: { nobody: 'missing' } }),
    );
  }
  emails = Array.from({ length: COUNT }, (_, i) =>
    i % 10 === 3 ? `nobody@d${i % DOMAINS}.fleet.test` : `user${i % 2000}@d${i % DOMAINS}.fleet.test`,
  );
  const inProcess = verifier();
  const jobs = new BulkJobManager({ verifier: inProcess });
  const job = await jobs.create({ emails });
  const results: VerificationResult[] = [];
  for await (const result of jobs.stream(job.id)) results.push(result);
  expected = brief(results);
  await jobs.close();
  await inProcess.dispose();
}, 120_000);

afterAll(async () => {
  for (const server of smtp) await server.close();
  await dns?.close();
});

describe.skipIf(!enabled)('the bullmq runner with in-process workers', () => {
  it('verifies every position exactly once, as the in-process runner does', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const verifiers = [verifier(), verifier()];
    const workers: FleetWorker[] = [];
    const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
    try {
      await jobs.opened();
      for (const [i, v] of verifiers.entries()) {
        workers.push(
          await createWorker({
            connection: REDIS_URL!,
            prefix,
            store: workerStore,
            verifier: v,
            id: `w${i}`,
          }),
        );
      }
      expect(await jobs.fleetHealth()).toEqual({ queue: 'up', workers: 2 });
      const completes: Job[] = [];
      jobs.on('complete', (job) => completes.push(job));
      const job = await jobs.create({ name: 'fleet', emails: emails.slice(0, 2000) });
      await jobs.add(job.id, emails.slice(2000));
      const streamed: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) streamed.push(result);
      expect(brief(streamed)).toEqual(expected);
      const done = await jobs.get(job.id);
      expect(done).toMatchObject({ status: 'complete', total: COUNT, completed: COUNT });
      expect(Object.values(done!.counts).reduce((a, b) => a + b, 0)).toBe(COUNT);
      expect(brief(await jobs.results(job.id))).toEqual(expected);
      await expect.poll(() => completes.length, { timeout: 10_000 }).toBe(1);
      expect(completes[0]).toMatchObject({ id: job.id, status: 'complete' });
      for (const worker of workers.splice(0)) await worker.close();
      expect(await jobs.fleetHealth()).toEqual({ queue: 'up', workers: 0 });
      // A stopped worker with no retry waiting leaves no queue of its own behind.
      const redis = new Redis(REDIS_URL!);
      expect(await redis.keys(`${prefix}:verify-retry-*`)).toEqual([]);
      redis.disconnect();
    } finally {
      for (const worker of workers) await worker.close();
      await jobs.close();
      await workerStore.close?.();
      for (const v of verifiers) await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);

  it('keeps the source rows of a fleet job (written through the fleet statements) and refuses another header', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const v = verifier();
    const workers: FleetWorker[] = [];
    const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
    try {
      await jobs.opened();
      workers.push(
        await createWorker({ connection: REDIS_URL!, prefix, store: workerStore, verifier: v, id: 'w0' }),
      );
      const columns = ['id', 'email', 'note'];
      const rows = emails
        .slice(0, 3)
        .map((email, i) => [String(i), email, i === 0 ? '=cmd() "q", <b>🎉\n' : '']);
      const job = await jobs.create({
        emails: emails.slice(0, 3),
        source: { columns, emailColumn: 1, rows },
      });
      await expect(
        jobs.add(job.id, [emails[3]!], {
          source: { columns: ['id', 'mail', 'note'], emailColumn: 1, rows: [['3', emails[3]!, '']] },
        }),
      ).rejects.toMatchObject({ code: 'invalid_request' });
      await jobs.add(job.id, [emails[4]!]);
      const more = [['5', emails[5]!, 'last']];
      await jobs.add(job.id, [emails[5]!], { source: { columns, emailColumn: 1, rows: more } });
      for await (const _ of jobs.stream(job.id));
      const page = await jobs.sourceResults(job.id);
      expect(page.source).toEqual({ columns, emailColumn: 1 });
      expect(page.rows).toEqual([...rows, ['', emails[4]!, ''], ...more]);
      expect(page.results.map((result) => result.email)).toEqual([0, 1, 2, 4, 5].map((i) => emails[i]));
    } finally {
      for (const worker of workers) await worker.close();
      await jobs.close();
      await workerStore.close?.();
      await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 60_000);

  it('serves a job from two API nodes: created on one, read, extended and streamed on the other', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const stores = await Promise.all(
      [0, 1, 2].map(() => postgresStore({ connectionString: POSTGRES_URL!, schema })),
    );
    const [one, two] = stores
      .slice(0, 2)
      .map(
        (store) => new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) }),
      );
    const v = verifier();
    let worker: FleetWorker | undefined;
    try {
      await one!.opened();
      await two!.opened();
      const completes: string[] = [];
      one!.on('complete', (job) => completes.push(`one ${job.id}`));
      two!.on('complete', (job) => completes.push(`two ${job.id}`));
      const job = await one!.create({ name: 'shared', emails: emails.slice(0, 500), autoStart: false });
      expect(await two!.get(job.id)).toMatchObject({
        id: job.id,
        name: 'shared',
        status: 'queued',
        total: 500,
      });
      expect((await two!.list()).jobs.map((listed) => listed.id)).toEqual([job.id]);
      await two!.add(job.id, emails.slice(500, 1000));
      await two!.start(job.id);
      worker = await createWorker({ connection: REDIS_URL!, prefix, store: stores[2]!, verifier: v });
      const streamed: VerificationResult[] = [];
      for await (const result of two!.stream(job.id)) streamed.push(result);
      expect(brief(streamed)).toEqual(expected.slice(0, 1000));
      expect(await one!.get(job.id)).toMatchObject({ status: 'complete', completed: 1000 });
      await expect
        .poll(() => completes.sort(), { timeout: 10_000 })
        .toEqual([`one ${job.id}`, `two ${job.id}`]);
    } finally {
      await worker?.close();
      await one!.close();
      await two!.close();
      await stores[2]!.close?.();
      await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);

  it('retries a greylisted address from the worker (egress address) that was greylisted', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const mailboxes = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`grey${i}`, 'ok' as const]));
    const grey = await startSmtpServer({ host: '127.0.0.20', mailboxes, greylistClientMs: 200 });
    const greyDns = await startDnsServer({
      'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
      'mx.grey.test': { a: ['127.0.0.20'] },
    } as Parameters<typeof startDnsServer>[0]);
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const jobs = new BulkJobManager({
      store,
      runner: bullmqRunner({ connection: REDIS_URL!, prefix, chunkSize: 2 }),
    });
    const egress = ['127.0.0.21', '127.0.0.22'];
    const verifiers = egress.map((localAddress) =>
      createVerifier({
        resolver: nodeResolver({ servers: [greyDns.address] }),
        smtpPort: grey.port,
        allowAddresses: ['127.0.0.0/8'],
        allowTlds: ['test'],
        catchAll: false,
        transport: tcpTransport({ localAddress }),
      }),
    );
    const workers: FleetWorker[] = [];
    try {
      await jobs.opened();
      for (const [i, v] of verifiers.entries()) {
        workers.push(
          await createWorker({
            connection: REDIS_URL!,
            prefix,
            store: workerStore,
            verifier: v,
            id: `egress${i}`,
            concurrency: 2,
          }),
        );
      }
      const addresses = Object.keys(mailboxes).map((local) => `${local}@grey.test`);
      const job = await jobs.create({ emails: addresses, greylistRetry: { delaysMs: [400, 400] } });
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map((result) => result.sub_status === 'greylisted')).toEqual(addresses.map(() => false));
      expect(results.every((result) => result.status === 'valid')).toBe(true);
      // Each address was greylisted once, then accepted from the same client address.
      const clients = new Map<string, string[]>();
      for (const { recipient, client } of grey.rcptClients()) {
        clients.set(recipient, [...(clients.get(recipient) ?? []), client]);
      }
      for (const address of addresses) {
        const seen = clients.get(address) ?? [];
        expect(seen.length).toBeGreaterThanOrEqual(2);
        expect(new Set(seen).size).toBe(1);
        expect(egress).toContain(seen[0]);
      }
      // Both workers took part, so a retry from the other one would have been noticed.
      expect(new Set([...clients.values()].map((seen) => seen[0])).size).toBe(2);
    } finally {
      for (const worker of workers) await worker.close();
      await jobs.close();
      await workerStore.close?.();
      for (const v of verifiers) await v.dispose();
      await grey.close();
      await greyDns.close();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);

  it('hands a greylisting retry to any worker once the greylisted one is gone past the deadline', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const mailboxes = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`late${i}`, 'ok' as const]));
    const grey = await startSmtpServer({ host: '127.0.0.23', mailboxes, greylistClientMs: 200 });
    const greyDns = await startDnsServer({
      'late.test': { mx: [{ priority: 10, exchange: 'mx.late.test' }] },
      'mx.late.test': { a: ['127.0.0.23'] },
    } as Parameters<typeof startDnsServer>[0]);
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const runner = bullmqRunner({ connection: REDIS_URL!, prefix, reconcileMs: 200, retryFallbackMs: 300 });
    const jobs = new BulkJobManager({ store, runner });
    const verifiers = ['127.0.0.24', '127.0.0.25'].map((localAddress) =>
      createVerifier({
        resolver: nodeResolver({ servers: [greyDns.address] }),
        smtpPort: grey.port,
        allowAddresses: ['127.0.0.0/8'],
        allowTlds: ['test'],
        catchAll: false,
        transport: tcpTransport({ localAddress }),
      }),
    );
    const start = (i: number) =>
      createWorker({
        connection: REDIS_URL!,
        prefix,
        store: workerStore,
        verifier: verifiers[i]!,
        id: `late${i}`,
      });
    let second: FleetWorker | undefined;
    try {
      await jobs.opened();
      const first = await start(0);
      const addresses = Object.keys(mailboxes).map((local) => `${local}@late.test`);
      const job = await jobs.create({ emails: addresses, greylistRetry: { delaysMs: [500, 500] } });
      await expect.poll(async () => (await jobs.get(job.id))?.retries.waiting, { timeout: 10_000 }).toBe(10);
      await first.close(); // gone, with its retries on its own queue
      second = await start(1);
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map((result) => result.status)).toEqual(addresses.map(() => 'valid'));
      const late = grey.rcptClients().filter(({ client }) => client === '127.0.0.25');
      expect(new Set(late.map(({ recipient }) => recipient)).size).toBe(10);
      // Completion removed the job's chunks left on the gone worker's retry queue, and that queue itself.
      const redis = new Redis(REDIS_URL!);
      try {
        const own = () => redis.keys(`${prefix}:*${job.id}*`);
        await expect.poll(own, { timeout: 10_000 }).toEqual([]);
        expect(await redis.keys(`${prefix}:verify-retry-late0*`)).toEqual([]);
        await jobs.delete(job.id);
        expect(await own()).toEqual([]);
      } finally {
        redis.disconnect();
      }
    } finally {
      await second?.close();
      await jobs.close();
      await workerStore.close?.();
      for (const v of verifiers) await v.dispose();
      await grey.close();
      await greyDns.close();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);

  it('waits out a store that fails (PostgreSQL unreachable) and still writes each position once', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const real = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    let failures = 6;
    const unreachable = () => new Error('connect ECONNREFUSED 127.0.0.1:5432');
    const flaky: typeof real = {
      ...real,
      async fleetState(id, positions) {
        if (failures-- > 0) throw unreachable();
        return real.fleetState(id, positions);
      },
      async fleetCommit(id, positions, results, retries, now) {
        if (failures-- > 0) throw unreachable();
        return real.fleetCommit(id, positions, results, retries, now);
      },
    };
    const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
    const v = verifier();
    const errors: unknown[] = [];
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await createWorker({
        connection: REDIS_URL!,
        prefix,
        store: flaky,
        verifier: v,
        onError: (error) => errors.push(error),
      });
      const job = await jobs.create({ emails: emails.slice(0, 600) });
      const streamed: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) streamed.push(result);
      expect(brief(streamed)).toEqual(expected.slice(0, 600));
      const done = await jobs.get(job.id);
      expect(done).toMatchObject({ status: 'complete', completed: 600 });
      expect(Object.values(done!.counts).reduce((a, b) => a + b, 0)).toBe(600);
      expect(errors.filter((error) => String(error).includes('ECONNREFUSED'))).toHaveLength(6);
    } finally {
      await worker?.close();
      await jobs.close();
      await real.close?.();
      await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);

  it.skipIf(!HAS_REDIS_SERVER)(
    'rebuilds the queue from PostgreSQL when Redis restarts empty mid-job, and completes each position once',
    async () => {
      const redis = await startPrivateRedis(); // a server of its own: killing the shared one would hurt others
      const schema = testSchema();
      const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
      const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
      const jobs = new BulkJobManager({
        store,
        runner: bullmqRunner({ connection: redis.url, reconcileMs: 200 }),
      });
      const v = verifier();
      const slow = {
        verify: async (email: string) => {
          await new Promise((resolve) => setTimeout(resolve, 40));
          return v.verify(email);
        },
      };
      const completes: Job[] = [];
      let worker: FleetWorker | undefined;
      try {
        await jobs.opened();
        worker = await createWorker({
          connection: redis.url,
          store: workerStore,
          verifier: slow,
          lockMs: 2000,
          onError: () => {}, // the lost connection and the chunks Redis forgot are reported here
        });
        jobs.on('complete', (job) => completes.push(job));
        const job = await jobs.create({ emails: emails.slice(0, 1500) });
        await expect
          .poll(async () => (await jobs.get(job.id))?.completed, { timeout: 30_000 })
          .toBeGreaterThan(200);
        await redis.restartEmpty();
        expect((await jobs.get(job.id))?.completed).toBeLessThan(1500); // it was mid-job
        await expect
          .poll(async () => (await jobs.get(job.id))?.status, { timeout: 60_000, interval: 200 })
          .toBe('complete');
        const done = await jobs.get(job.id);
        expect(done).toMatchObject({ total: 1500, completed: 1500 });
        expect(Object.values(done!.counts).reduce((a, b) => a + b, 0)).toBe(1500);
        expect(brief(await jobs.results(job.id))).toEqual(expected.slice(0, 1500));
        expect(completes.length).toBeLessThanOrEqual(1); // never twice (it may be lost with the connection)
      } finally {
        await worker?.close();
        await jobs.close();
        await workerStore.close?.();
        await v.dispose();
        await redis.stop();
        await dropPostgresSchema(schema);
      }
    },
    120_000,
  );

  it('removes the chunks of a deleted job from the queue', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const jobs = new BulkJobManager({
      store,
      runner: bullmqRunner({ connection: REDIS_URL!, prefix, chunkSize: 10 }),
    });
    const redis = new Redis(REDIS_URL!);
    try {
      await jobs.opened();
      const job = await jobs.create({ emails: emails.slice(0, 200) }); // no worker: its chunks wait
      const other = await jobs.create({ emails: emails.slice(0, 20) });
      const own = (id: string) => redis.keys(`${prefix}:*${id}*`);
      expect((await own(job.id)).length).toBeGreaterThanOrEqual(20);
      await jobs.delete(job.id);
      expect(await own(job.id)).toEqual([]);
      expect((await own(other.id)).length).toBeGreaterThanOrEqual(2); // another job's chunks stay
      expect(await jobs.get(other.id)).toMatchObject({ status: 'processing', total: 20 });
    } finally {
      redis.disconnect();
      await jobs.close();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 60_000);

  it('bounds a verification that never answers (verificationTimeoutMs)', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
    const v = verifier();
    const hanging = {
      verify: (email: string) => (email.startsWith('hang@') ? new Promise<never>(() => {}) : v.verify(email)),
    };
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await createWorker({
        connection: REDIS_URL!,
        prefix,
        store: workerStore,
        verifier: hanging,
        verificationTimeoutMs: 2000,
      });
      const job = await jobs.create({ emails: ['hang@d0.fleet.test', emails[0]!] });
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map(({ status, sub_status }) => ({ status, sub_status }))).toEqual([
        { status: 'unknown', sub_status: 'timeout_exceeded' },
        { status: expected[0]!.status, sub_status: expected[0]!.sub_status },
      ]);
    } finally {
      await worker?.close();
      await jobs.close();
      await workerStore.close?.();
      await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 60_000);
});
