/**
 * Fleet jobs that fail: a chunk whose results the database refuses (a CHECK constraint on the real server) or
 * whose worker's verifier is disposed fails its job once its BullMQ attempts are spent; the failure is decided in
 * the database once and every API node hears `failed`.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroCounts } from '../../src/bulk/job.js';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job, JobRecord } from '../../src/bulk/types.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { isMailvetError } from '../../src/errors.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { type VerificationResult, verdictOf } from '../../src/result.js';
import { verdictOnlyResult } from '../../src/score.js';
import { createVerifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { ownFleet } from '../support/own-fleet.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
let dns: DnsTestServer;

beforeAll(async () => {
  if (enabled) dns = await startDnsServer({});
});
afterAll(async () => {
  await dns?.close();
});

function verifier() {
  return createVerifier({ resolver: nodeResolver({ servers: [dns.address] }), allowTlds: ['test'] });
}

async function sql(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(!enabled)('fleet jobs that fail', () => {
  it('fails a job whose chunk the database keeps refusing, once, and tells every API node', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const stores = await Promise.all(
      [0, 1, 2].map(() => postgresStore({ connectionString: POSTGRES_URL!, schema })),
    );
    await sql(`ALTER TABLE ${schema}.results ADD CONSTRAINT no_poison CHECK (result NOT LIKE '%poison%')`);
    const runner = () => bullmqRunner({ connection: REDIS_URL!, prefix, chunkSize: 10, chunkAttempts: 2 });
    const nodes = [0, 1].map((i) => new BulkJobManager({ store: stores[i]!, runner: runner() }));
    const v = verifier();
    const errors: unknown[] = [];
    let worker: FleetWorker | undefined;
    try {
      for (const node of nodes) await node.opened();
      const failed: string[] = [];
      const completed: string[] = [];
      nodes.forEach((node, i) => {
        node.on('failed', (job) => failed.push(`${i} ${job.id} ${job.status} ${job.error?.code}`));
        node.on('complete', (job) => completed.push(job.id));
      });
      worker = await createWorker({
        connection: REDIS_URL!,
        prefix,
        store: stores[2]!,
        verifier: v,
        onError: (error) => errors.push(error),
      });
      const emails = Array.from({ length: 60 }, (_, i) => `user${i}@d${i % 3}.fail.test`);
      emails[17] = 'poison@d2.fail.test';
      const job = await nodes[0]!.create({ emails });
      await expect
        .poll(async () => (await nodes[1]!.get(job.id))?.status, { timeout: 30_000, interval: 100 })
        .toBe('failed');
      const done = (await nodes[1]!.get(job.id))!;
      expect(done.error).toMatchObject({ code: 'store_error' });
      expect(done.error!.message).toContain('no_poison');
      expect(done.completed_at).not.toBeNull();
      await expect
        .poll(() => failed.sort(), { timeout: 10_000 }) // the event reaches each node over Redis pub/sub
        .toEqual([`0 ${job.id} failed store_error`, `1 ${job.id} failed store_error`]);
      expect(completed).toEqual([]);
      // The poisoned chunk ran exactly chunkAttempts times.
      const refused = errors.filter((error) => isMailvetError(error) && error.code === 'store_error');
      expect(refused).toHaveLength(2);
      // What was stored stays readable; a failed job takes no more addresses and its stream ends in job_failed.
      const partial = await nodes[0]!.results(job.id, { partial: true });
      expect(partial.length).toBe(done.completed);
      expect(partial.length).toBeLessThan(60);
      expect(partial.map((result: VerificationResult) => result.email)).not.toContain('poison@d2.fail.test');
      await expect(nodes[0]!.results(job.id)).rejects.toMatchObject({ code: 'job_failed' });
      await expect(nodes[1]!.add(job.id, ['late@d0.fail.test'])).rejects.toMatchObject({
        code: 'job_finished',
      });
      await expect(nodes[1]!.start(job.id)).rejects.toMatchObject({ code: 'job_finished' });
      const streamed: VerificationResult[] = [];
      await expect(
        (async () => {
          for await (const result of nodes[1]!.stream(job.id)) streamed.push(result);
        })(),
      ).rejects.toMatchObject({ code: 'job_failed' });
      expect(streamed).toHaveLength(partial.length);
      // Still failed (never complete) once the other chunks are done.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect((await nodes[0]!.get(job.id))?.status).toBe('failed');
      expect(failed).toHaveLength(2);
    } finally {
      await worker?.close();
      for (const node of nodes) await node.close();
      await stores[2]!.close?.();
      await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 60_000);

  it("fails a job when the worker's verifier is disposed, as the in-process runner does", async () => {
    const fleet = await ownFleet({ chunkAttempts: 1 });
    const { jobs } = fleet;
    const v = verifier();
    await v.dispose();
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      const failures: Job[] = [];
      jobs.on('failed', (job) => failures.push(job));
      worker = await fleet.worker({ verifier: v });
      const job = await jobs.create({ emails: ['a@d0.fail.test', 'b@d1.fail.test'] });
      await expect.poll(() => failures.length, { timeout: 30_000 }).toBe(1);
      expect(failures[0]).toMatchObject({ id: job.id, status: 'failed', error: { code: 'disposed' } });
      expect(await jobs.get(job.id)).toMatchObject({ status: 'failed', completed: 0 });
    } finally {
      await worker?.close();
      await fleet.close();
    }
  }, 60_000);

  it('fails a job in the database once, keeping the last greylisted result of each waiting position', async () => {
    const schema = testSchema();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    try {
      const record: JobRecord = {
        id: 'job-1',
        owner: null,
        name: null,
        status: 'processing',
        total: 3,
        completed: 0,
        counts: zeroCounts(),
        createdAt: 1000,
        startedAt: 1000,
        completedAt: null,
        error: null,
        greylistDelaysMs: [60_000],
        armed: true,
      };
      await store.fleetCreate(record, ['a@x.test', 'b@x.test', 'c@x.test'], () => {});
      const missing = verdictOnlyResult('a@x.test', verdictOf('mailbox_not_found'));
      const grey = verdictOnlyResult('b@x.test', verdictOf('greylisted'));
      await store.fleetCommit(
        'job-1',
        [0],
        [missing],
        [{ position: 1, attempt: 1, dueAt: 70_000, result: grey }],
        2000,
      );
      expect(await store.fleetWaiting('job-1')).toEqual({ count: 1, nextDueAt: 70_000 });
      const error = { code: 'store_error', message: 'refused' } as const;
      const failed = await store.fleetFail('job-1', error, 3000);
      expect(failed).toMatchObject({ status: 'failed', completed: 2, completedAt: 3000, error });
      expect(failed!.counts).toEqual({ ...zeroCounts(), invalid: 1, unknown: 1 });
      expect(await store.getResults('job-1', 0, 3)).toEqual([missing, grey, undefined]);
      expect(await store.fleetWaiting('job-1')).toEqual({ count: 0, nextDueAt: null });
      // Decided once: a second failure, or a later commit, changes nothing.
      expect(await store.fleetFail('job-1', { code: 'disposed', message: 'again' }, 4000)).toBeUndefined();
      const late = verdictOnlyResult('c@x.test', verdictOf('mailbox_not_found'));
      expect(await store.fleetCommit('job-1', [2], [late], [], 5000)).toBeUndefined();
      expect(await store.getJob('job-1')).toMatchObject({ status: 'failed', completed: 2, error });
      expect(await store.fleetFail('nope', error, 1)).toBeUndefined();
    } finally {
      await store.close?.();
      await dropPostgresSchema(schema);
    }
  });
});
