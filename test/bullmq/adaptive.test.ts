/**
 * Chunks sized by the work, and commits that share the job's row: a job of several inputs rows is queued a window
 * at a time, its later chunks cut larger once workers report a fast pace, and every position is written and counted
 * once, also when many commits of one job run at the same time and when a worker's chunks outlive it.
 */
import { describe, expect, it } from 'vitest';
import type { BulkVerifier, JobRecord } from '../../src/bulk/types.js';
import type { FleetWorker, WorkerJobEvent } from '../../src/bullmq/worker.js';
import { STATUSES, type VerificationResult } from '../../src/result.js';
import { resultFor } from '../bulk/support.js';
import { POSTGRES_URL } from '../support/databases.js';
import { ownFleet } from '../support/own-fleet.js';
import { REDIS_URL } from '../support/redis.js';
import { waitFor } from '../support/wait-for.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;

/** `count` addresses over 20 domains, every tenth one `invalid` (its local part starts with `bad`). */
function addresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${i % 10 === 0 ? 'bad' : 'u'}${i}@d${i % 20}.test`);
}

const fast: BulkVerifier = { verify: async (email) => resultFor(email) };

describe.skipIf(!enabled)('a fleet that sizes chunks by the work', () => {
  it('queues a large job a window at a time, cuts it larger once the pace is known, and writes each position once', async () => {
    const fleet = await ownFleet({ chunkSize: 20, maxChunkSize: 1500 });
    const events: WorkerJobEvent[] = [];
    let worker: FleetWorker | undefined;
    try {
      await fleet.jobs.opened();
      const emails = addresses(13_000); // 4 inputs rows of at most 4,096
      worker = await fleet.worker({ verifier: fast, id: 'w0', onJob: (event) => events.push(event) });
      const job = await fleet.jobs.create({ emails });
      await waitFor(async () => (await fleet.jobs.get(job.id))?.status === 'complete', { timeoutMs: 60_000 });
      const done = (await fleet.jobs.get(job.id))!;
      expect(done.completed).toBe(emails.length);
      expect(done.counts.invalid).toBe(1300);
      expect(done.counts.valid).toBe(emails.length - 1300);
      const results = await fleet.workerStore.getResults(job.id, 0, emails.length);
      expect(results.map((result) => result?.email)).toEqual(emails);
      // The worker tells of a chunk after its commit, so the job can be complete before the last chunks' events
      // have reached `onJob` (under load, by seconds): wait for them. Each position is written by one chunk only.
      const written = () =>
        events.reduce((sum, event) => sum + (event.event === 'chunk' ? event.written : 0), 0);
      await waitFor(() => written() >= emails.length, { what: "every chunk's event" });
      const chunks = events.filter((event) => event.event === 'chunk');
      expect(written()).toBe(emails.length);
      expect(events.filter((event) => event.event === 'complete')).toHaveLength(1);
      // The first row in chunks of the smallest size; later rows, cut by the reported pace, larger.
      expect(Math.max(...chunks.map((event) => event.addresses ?? 0))).toBeGreaterThan(20);
      expect(chunks.length).toBeLessThan(emails.length / 20);
      for (const event of chunks) {
        expect(event.verifyMs).toBeGreaterThanOrEqual(0);
        expect(event.storeMs).toBeGreaterThanOrEqual(0);
        expect(event.queueMs).toBeGreaterThanOrEqual(0);
      }
    } finally {
      await worker?.close();
      await fleet.close();
    }
  }, 90_000);

  it('cuts a job smaller for several live workers, so that each finds many chunks', async () => {
    const fleet = await ownFleet({ chunkSize: 100 });
    const events: WorkerJobEvent[] = [];
    const workers: FleetWorker[] = [];
    try {
      await fleet.jobs.opened();
      for (const id of ['w1', 'w2'])
        workers.push(await fleet.worker({ verifier: fast, id, onJob: (event) => events.push(event) }));
      const emails = addresses(1000); // one inputs row: 1,000 pending for 2 live workers, 64 chunks each at least
      const job = await fleet.jobs.create({ emails });
      await waitFor(async () => (await fleet.jobs.get(job.id))?.status === 'complete', { timeoutMs: 60_000 });
      const written = () =>
        events.reduce((sum, event) => sum + (event.event === 'chunk' ? event.written : 0), 0);
      await waitFor(() => written() >= emails.length, { what: "every chunk's event" });
      const chunks = events.filter((event) => event.event === 'chunk');
      expect(written()).toBe(emails.length);
      // ceil(1,000 / (2 workers x 64)) = 8 positions a chunk, where one worker would take chunks of 100.
      expect(Math.max(...chunks.map((event) => event.addresses ?? 0))).toBeLessThanOrEqual(8);
      expect(chunks.length).toBeGreaterThanOrEqual(125);
    } finally {
      for (const worker of workers) await worker.close();
      await fleet.close();
    }
  }, 90_000);

  it('counts each position once and completes the job once under many commits at a time, duplicates included', async () => {
    const fleet = await ownFleet();
    try {
      await fleet.jobs.opened();
      const emails = addresses(400);
      const job = await fleet.jobs.create({ emails, autoStart: false });
      await fleet.jobs.start(job.id);
      const store = fleet.workerStore;
      const commit = (from: number, to: number) => {
        const positions = Array.from({ length: to - from }, (_, i) => from + i);
        const results: VerificationResult[] = positions.map((position) => resultFor(emails[position]!));
        return store.fleetCommit(job.id, positions, results, [], Date.now());
      };
      // 40 chunks of 10, each committed twice (a chunk run again after its worker was presumed gone), at once.
      const commits = await Promise.all(
        Array.from({ length: 80 }, (_, k) => commit((k % 40) * 10, (k % 40) * 10 + 10)),
      );
      expect(commits.reduce((sum, committed) => sum + (committed?.written ?? 0), 0)).toBe(400);
      expect(commits.filter((committed) => committed?.completed)).toHaveLength(1);
      const record = (await store.getJob(job.id)) as JobRecord;
      expect(record.status).toBe('complete');
      expect(record.completed).toBe(400);
      expect(STATUSES.reduce((sum, status) => sum + (record.counts[status] ?? 0), 0)).toBe(400);
      expect(record.counts.invalid).toBe(40);
    } finally {
      await fleet.close();
    }
  }, 60_000);

  it('finishes a large chunk whose worker stopped under it (its lock expired) without a position counted twice', async () => {
    const fleet = await ownFleet({ chunkSize: 50, maxChunkSize: 2000 });
    let release = (): void => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let stuck = 0;
    // Verifies the first addresses, then hangs on the rest: its chunks never commit.
    const hanging: BulkVerifier = {
      verify: async (email) => {
        if (stuck++ >= 30) await held;
        return resultFor(email);
      },
    };
    let first: FleetWorker | undefined;
    let second: FleetWorker | undefined;
    try {
      await fleet.jobs.opened();
      const emails = addresses(3000);
      first = await fleet.worker({ verifier: hanging, id: 'w-gone', lockMs: 1000 });
      const job = await fleet.jobs.create({ emails });
      await waitFor(() => stuck > 60, { timeoutMs: 30_000 });
      const closing = first.close(); // waits `lockMs` for its chunks, then leaves them to the fleet
      second = await fleet.worker({ verifier: fast, id: 'w-next', lockMs: 1000 });
      await closing;
      // The first worker's hung verifications end now: their late commits find the positions they reach written,
      // or write them first, never both.
      release();
      await waitFor(async () => (await fleet.jobs.get(job.id))?.status === 'complete', { timeoutMs: 60_000 });
      const done = (await fleet.jobs.get(job.id))!;
      expect(done.completed).toBe(emails.length);
      expect(done.counts.invalid).toBe(300);
      const results = await fleet.workerStore.getResults(job.id, 0, emails.length);
      expect(results.map((result) => result?.email)).toEqual(emails);
    } finally {
      release();
      await first?.close();
      await second?.close();
      await fleet.close();
    }
  }, 120_000);
});
