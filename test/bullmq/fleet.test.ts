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
import { startDnsServer } from '../support/dns-server.js';
import { inProcessResults } from '../support/in-process-results.js';
import { type MailDomains, startMailDomains } from '../support/mail-domains.js';
import { ownFleet } from '../support/own-fleet.js';
import { HAS_REDIS_SERVER, startPrivateRedis } from '../support/private-redis.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { startSmtpServer } from '../support/smtp-server.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
const COUNT = 3000;
const DOMAINS = 6;

let mail: MailDomains;
let emails: string[] = [];
let expected: Pick<VerificationResult, 'email' | 'status' | 'sub_status'>[] = [];

function verifier(): Verifier {
  return createVerifier(mail.verifierOptions());
}

function brief(results: readonly VerificationResult[]) {
  return results.map(({ email, status, sub_status }) => ({ email, status, sub_status }));
}

beforeAll(async () => {
  if (!enabled) return;
  mail = await startMailDomains('fleet.test', DOMAINS);
  emails = mail.addresses(COUNT, 2000);
  const inProcess = verifier();
  expected = brief(await inProcessResults(inProcess, emails));
  await inProcess.dispose();
}, 120_000);

afterAll(async () => {
  await mail?.close();
});

/**
 * A greylisting mail domain `<name>.test` with the mailboxes `<name>0` to `<name><count - 1>`, all existing,
 * behind one MX host on `host` that greylists each client address for 200 ms; and a verifier of it per
 * address of `egress`, sending from that address. `close` disposes of the verifiers and stops the servers.
 */
async function greylistingDomain(name: string, host: string, count: number, egress: readonly string[]) {
  const locals = Array.from({ length: count }, (_, i) => `${name}${i}`);
  const mailboxes = Object.fromEntries(locals.map((local) => [local, 'ok' as const]));
  const smtp = await startSmtpServer({ host, mailboxes, greylistClientMs: 200 });
  const dns = await startDnsServer({
    [`${name}.test`]: { mx: [{ priority: 10, exchange: `mx.${name}.test` }] },
    [`mx.${name}.test`]: { a: [host] },
  });
  const verifiers = egress.map((localAddress) =>
    createVerifier({
      resolver: nodeResolver({ servers: [dns.address] }),
      smtpPort: smtp.port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      catchAll: false,
      transport: tcpTransport({ localAddress }),
    }),
  );
  return {
    smtp,
    verifiers,
    addresses: locals.map((local) => `${local}@${name}.test`),
    async close(): Promise<void> {
      for (const v of verifiers) await v.dispose();
      await smtp.close();
      await dns.close();
    },
  };
}

describe.skipIf(!enabled)('the bullmq runner with in-process workers', () => {
  it('tells its complete listeners even when the job cannot be read at first (the database briefly out of reach)', async () => {
    // The manager's reads of the job fail three times after the job is created: the reads that follow the
    // complete event are the only ones until the listener has heard it.
    let failures = 0;
    let failing = false;
    const fleet = await ownFleet(
      {},
      {
        managerStore: (store) =>
          new Proxy(store, {
            get(target, key) {
              const value = Reflect.get(target, key, target);
              if (key !== 'getJob') return typeof value === 'function' ? value.bind(target) : value;
              return async (id: string) => {
                if (failing && failures < 3) {
                  failures += 1;
                  throw new Error('connect ECONNREFUSED 127.0.0.1:5432 (the test says so)');
                }
                return target.getJob(id);
              };
            },
          }),
      },
    );
    const v = verifier();
    let worker: FleetWorker | undefined;
    try {
      await fleet.jobs.opened();
      const completes: Job[] = [];
      fleet.jobs.on('complete', (job) => completes.push(job));
      const job = await fleet.jobs.create({ emails: emails.slice(0, 50) });
      failing = true;
      worker = await fleet.worker({ verifier: v, id: 'w0' });
      await expect.poll(() => completes.length, { timeout: 20_000, interval: 100 }).toBe(1);
      expect(failures).toBe(3);
      expect(completes[0]).toMatchObject({ id: job.id, status: 'complete', completed: 50 });
    } finally {
      await worker?.close();
      await v.dispose();
      await fleet.close();
    }
  }, 60_000);

  it('tells its listeners of endings whose events never arrived (committed by a worker that died before publishing)', async () => {
    let listings = 0;
    const fleet = await ownFleet(
      { reconcileMs: 200 },
      {
        managerStore: (store) =>
          new Proxy(store, {
            get(target, key) {
              const value = Reflect.get(target, key, target);
              if (key !== 'listJobs') return typeof value === 'function' ? value.bind(target) : value;
              return () => {
                listings += 1;
                return target.listJobs();
              };
            },
          }),
      },
    );
    const v = verifier();
    try {
      await fleet.jobs.opened();
      const heard: string[] = [];
      fleet.jobs.on('complete', (job) => heard.push(`complete ${job.id} ${job.completed}`));
      fleet.jobs.on('failed', (job) => heard.push(`failed ${job.id}`));
      const done = await fleet.jobs.create({ emails: emails.slice(0, 2) });
      const broken = await fleet.jobs.create({ emails: emails.slice(2, 4) });
      const results = await Promise.all(emails.slice(0, 2).map((email) => v.verify(email)));
      // What a worker writes, and no event after it: no worker runs, the test commits as one would.
      const committed = await fleet.workerStore.fleetCommit(done.id, [0, 1], results, [], Date.now());
      expect(committed?.completed).toBe(true);
      const error = { code: 'store_error' as const, message: 'the test says so' };
      expect(await fleet.workerStore.fleetFail(broken.id, error, Date.now())).toBeDefined();
      await expect
        .poll(() => [...heard].sort(), { timeout: 20_000, interval: 50 })
        .toEqual([`complete ${done.id} 2`, `failed ${broken.id}`].sort());
      // Told once: the reconcile passes that follow tell nobody again.
      const seen = listings;
      await expect.poll(() => listings, { timeout: 20_000, interval: 50 }).toBeGreaterThanOrEqual(seen + 3);
      expect(heard).toHaveLength(2);
    } finally {
      await v.dispose();
      await fleet.close();
    }
  }, 60_000);

  it('verifies every position exactly once, as the in-process runner does', async () => {
    const fleet = await ownFleet();
    const { prefix, jobs } = fleet;
    const verifiers = [verifier(), verifier()];
    const workers: FleetWorker[] = [];
    try {
      await jobs.opened();
      for (const [i, v] of verifiers.entries()) {
        workers.push(await fleet.worker({ verifier: v, id: `w${i}` }));
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
      await fleet.close();
      for (const v of verifiers) await v.dispose();
    }
  }, 120_000);

  it('keeps the source rows of a fleet job (written through the fleet statements) and refuses another header', async () => {
    const fleet = await ownFleet();
    const { jobs } = fleet;
    const v = verifier();
    const workers: FleetWorker[] = [];
    try {
      await jobs.opened();
      workers.push(await fleet.worker({ verifier: v, id: 'w0' }));
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
      await fleet.close();
      await v.dispose();
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
    const egress = ['127.0.0.21', '127.0.0.22'];
    const grey = await greylistingDomain('grey', '127.0.0.20', 40, egress);
    const fleet = await ownFleet({ chunkSize: 2 });
    const { jobs } = fleet;
    const workers: FleetWorker[] = [];
    try {
      await jobs.opened();
      for (const [i, v] of grey.verifiers.entries()) {
        workers.push(await fleet.worker({ verifier: v, id: `egress${i}`, concurrency: 2 }));
      }
      const { addresses } = grey;
      const job = await jobs.create({ emails: addresses, greylistRetry: { delaysMs: [400, 400] } });
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map((result) => result.sub_status === 'greylisted')).toEqual(addresses.map(() => false));
      expect(results.every((result) => result.status === 'valid')).toBe(true);
      // Each address was greylisted once, then accepted from the same client address.
      const clients = new Map<string, string[]>();
      for (const { recipient, client } of grey.smtp.rcptClients()) {
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
      await fleet.close();
      await grey.close();
    }
  }, 120_000);

  it('hands a greylisting retry to any worker once the greylisted one is gone past the deadline', async () => {
    const grey = await greylistingDomain('late', '127.0.0.23', 10, ['127.0.0.24', '127.0.0.25']);
    const fleet = await ownFleet({ reconcileMs: 200, retryFallbackMs: 300 });
    const { prefix, jobs } = fleet;
    const start = (i: number) => fleet.worker({ verifier: grey.verifiers[i]!, id: `late${i}` });
    let second: FleetWorker | undefined;
    try {
      await jobs.opened();
      const first = await start(0);
      const { addresses } = grey;
      const job = await jobs.create({ emails: addresses, greylistRetry: { delaysMs: [500, 500] } });
      await expect.poll(async () => (await jobs.get(job.id))?.retries.waiting, { timeout: 10_000 }).toBe(10);
      await first.close(); // gone, with its retries on its own queue
      second = await start(1);
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map((result) => result.status)).toEqual(addresses.map(() => 'valid'));
      const late = grey.smtp.rcptClients().filter(({ client }) => client === '127.0.0.25');
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
      await fleet.close();
      await grey.close();
    }
  }, 120_000);

  it('waits out a store that fails (PostgreSQL unreachable) and still writes each position once', async () => {
    const fleet = await ownFleet();
    const { jobs, workerStore: real } = fleet;
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
    const v = verifier();
    const errors: unknown[] = [];
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await fleet.worker({ store: flaky, verifier: v, onError: (error) => errors.push(error) });
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
      await fleet.close();
      await v.dispose();
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
    const fleet = await ownFleet({ chunkSize: 10 });
    const { prefix, jobs } = fleet;
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
      await fleet.close();
    }
  }, 60_000);

  it('bounds a verification that never answers (verificationTimeoutMs)', async () => {
    const fleet = await ownFleet();
    const { jobs } = fleet;
    const v = verifier();
    const hanging = {
      verify: (email: string) => (email.startsWith('hang@') ? new Promise<never>(() => {}) : v.verify(email)),
    };
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await fleet.worker({ verifier: hanging, verificationTimeoutMs: 2000 });
      const job = await jobs.create({ emails: ['hang@d0.fleet.test', emails[0]!] });
      const results: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) results.push(result);
      expect(results.map(({ status, sub_status }) => ({ status, sub_status }))).toEqual([
        { status: 'unknown', sub_status: 'timeout_exceeded' },
        { status: expected[0]!.status, sub_status: expected[0]!.sub_status },
      ]);
    } finally {
      await worker?.close();
      await fleet.close();
      await v.dispose();
    }
  }, 60_000);
});
