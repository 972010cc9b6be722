/**
 * Finish now on a worker fleet: a job whose addresses wait for greylisting retries (delayed BullMQ chunks) is
 * finished from the API node: it completes at once, the waiting positions keep their last greylisted result with a
 * reason saying no retry was made, the delayed chunks leave the queues, and no worker retries them.
 */
import { Queue } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { zeroCounts } from '../../src/bulk/job.js';
import type { Job, JobRecord } from '../../src/bulk/types.js';
import type { FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { isMailvetError } from '../../src/errors.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { verdictOf } from '../../src/result.js';
import { verdictOnlyResult } from '../../src/score.js';
import { createVerifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { startDnsServer } from '../support/dns-server.js';
import { ownFleet } from '../support/own-fleet.js';
import { REDIS_URL } from '../support/redis.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { waitFor } from '../support/wait-for.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
if (!enabled) {
  console.warn(
    'test/bullmq/finish.test.ts skipped: set MAILVET_TEST_POSTGRES_URL and MAILVET_TEST_REDIS_URL',
  );
}

/** An hour: no retry is due while the test runs. */
const HOUR = 3_600_000;

describe.skipIf(!enabled)('finish now on the bullmq runner', () => {
  it('completes a job waiting for delayed retry chunks at once; no worker retries them', async () => {
    const locals = ['grey0', 'grey1', 'grey2'];
    const smtp = await startSmtpServer({
      host: '127.0.0.30',
      mailboxes: Object.fromEntries(locals.map((local) => [local, 'ok' as const])),
      greylistClientMs: HOUR, // 451 greylisting for the whole test
    });
    const dns = await startDnsServer({
      'fin.test': { mx: [{ priority: 10, exchange: 'mx.fin.test' }] },
      'mx.fin.test': { a: ['127.0.0.30'] },
    });
    const verifier = createVerifier({
      resolver: nodeResolver({ servers: [dns.address] }),
      smtpPort: smtp.port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      catchAll: false,
    });
    const fleet = await ownFleet({ chunkSize: 2 });
    const { jobs } = fleet;
    let worker: FleetWorker | undefined;
    try {
      await jobs.opened();
      worker = await fleet.worker({ verifier, id: 'fin0' });
      const completes: Job[] = [];
      jobs.on('complete', (job) => completes.push(job));
      const addresses = locals.map((local) => `${local}@fin.test`);
      const job = await jobs.create({ emails: addresses, greylistRetry: { delaysMs: [HOUR, HOUR] } });
      await waitFor(async () => (await jobs.get(job.id))?.retries.waiting === 3, { timeoutMs: 30_000 });
      const retryQueue = new Queue('verify-retry-fin0', {
        connection: { url: REDIS_URL! },
        prefix: fleet.prefix,
      });
      try {
        expect(await retryQueue.getDelayedCount()).toBeGreaterThan(0);
        const rcpts = smtp.rcptClients().length;
        expect(rcpts).toBe(3);

        const finished = await jobs.finish(job.id);
        expect(finished).toMatchObject({
          status: 'complete',
          completed: 3,
          counts: { unknown: 3 },
          retries: { waiting: 0, next_retry_at: null, delays_ms: [] },
        });
        const results = await jobs.results(job.id);
        expect(results.map((result) => [result.status, result.sub_status])).toEqual(
          addresses.map(() => ['unknown', 'greylisted']),
        );
        for (const result of results) {
          expect(result.reason).toMatch(
            /; not retried: the job was finished before the retry due at \d\d:\d\d UTC$/,
          );
        }
        await waitFor(() => completes.some((done) => done.id === job.id), { timeoutMs: 10_000 });
        await waitFor(async () => (await retryQueue.getDelayedCount()) === 0, { timeoutMs: 10_000 });
        expect(smtp.rcptClients()).toHaveLength(rcpts);
        // Idempotent, and the store keeps it: another read answers the same job.
        expect(await jobs.finish(job.id)).toEqual(finished);
        expect(await jobs.get(job.id)).toEqual(finished);
        // Not this tenant's: not found.
        const missing = await jobs.finish(job.id, { owner: 'someone-else' }).catch((error: unknown) => error);
        expect(isMailvetError(missing) && missing.code).toBe('job_not_found');
        // A job not started is refused under its row lock, and stays as it was.
        const queued = await jobs.create({ emails: ['grey0@fin.test'], autoStart: false });
        const refused = await jobs.finish(queued.id).catch((error: unknown) => error);
        expect(isMailvetError(refused) && refused.code).toBe('job_not_processing');
        expect(await jobs.get(queued.id)).toMatchObject({
          status: 'queued',
          retries: { delays_ms: [60_000, 300_000, 900_000] },
        });
      } finally {
        await retryQueue.close();
      }
    } finally {
      await worker?.close();
      await fleet.close();
      await verifier.dispose();
      await smtp.close();
      await dns.close();
    }
  }, 90_000);

  it('the store: fleetFinish ends the waiting positions; a commit of retries racing it makes them final', async () => {
    const schema = testSchema();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    try {
      const record: JobRecord = {
        id: 'job-1',
        owner: 'alice',
        name: null,
        status: 'processing',
        total: 3,
        completed: 0,
        counts: zeroCounts(),
        createdAt: 1000,
        startedAt: 1000,
        completedAt: null,
        error: null,
        greylistDelaysMs: [HOUR],
        armed: true,
      };
      await store.fleetCreate(record, ['a@x.test', 'b@x.test', 'c@x.test'], () => {});
      const grey = (email: string) => verdictOnlyResult(email, verdictOf('greylisted'));
      const due = Date.UTC(2026, 10, 27, 14, 45);
      await store.fleetCommit(
        'job-1',
        [],
        [],
        [{ position: 0, attempt: 1, dueAt: due, result: grey('a@x.test') }],
        2000,
      );
      // Refused by the check: nothing changes.
      const refused = await store
        .fleetFinish('job-1', 3000, () => {
          throw new Error('not yours');
        })
        .catch((error: unknown) => (error as Error).message);
      expect(refused).toBe('not yours');
      expect(await store.fleetWaiting('job-1')).toEqual({ count: 1, nextDueAt: due });

      const finished = await store.fleetFinish('job-1', 3000, () => true);
      expect(finished).toMatchObject({
        ended: 1,
        completed: false,
        record: { status: 'processing', completed: 1 },
      });
      expect(finished!.record.greylistDelaysMs).toEqual([]);
      expect(await store.fleetWaiting('job-1')).toEqual({ count: 0, nextDueAt: null });
      const [first] = await store.getResults('job-1', 0, 1);
      expect(first).toEqual({
        ...grey('a@x.test'),
        reason: 'greylisted; not retried: the job was finished before the retry due at 14:45 UTC',
      });

      // A worker that read the delays before the finish commits a retry after it: the position is final instead.
      const late = await store.fleetCommit(
        'job-1',
        [2],
        [verdictOnlyResult('c@x.test', verdictOf('mailbox_not_found'))],
        [{ position: 1, attempt: 1, dueAt: due, result: grey('b@x.test') }],
        4000,
      );
      expect(late).toMatchObject({
        written: 2,
        completed: true,
        record: { status: 'complete', completedAt: 4000 },
      });
      expect(await store.fleetWaiting('job-1')).toEqual({ count: 0, nextDueAt: null });
      expect((await store.getResults('job-1', 1, 1))[0]?.reason).toMatch(/not retried/);
      // Nothing to do on a complete job; an unknown one is undefined.
      expect(await store.fleetFinish('job-1', 5000, () => false)).toMatchObject({
        ended: 0,
        completed: false,
      });
      expect(await store.fleetFinish('nope', 5000, () => true)).toBeUndefined();
    } finally {
      await store.close?.();
      await dropPostgresSchema(schema);
    }
  }, 30_000);
});
