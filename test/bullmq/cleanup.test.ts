/**
 * Cleaning up after a fleet job: its chunks are found through the job's chunk index, not by walking the keyspace.
 * A Redis user that may not SCAN or KEYS cleans up among 20,000 other keys of the prefix; a Redis of the test's own
 * shows (INFO commandstats) the same commands whether those keys are there or not; the `below` semantics, a chunk
 * a worker holds and entries of chunks that are gone; the one-off indexing of chunks an earlier version queued.
 */
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { addIndexed, indexEntry } from '../../src/bullmq/chunk-index.js';
import type { ChunkData } from '../../src/bullmq/chunks.js';
import { forgetJobChunks } from '../../src/bullmq/cleanup.js';
import { type FleetKeys, fleetKeys, loadQueue } from '../../src/bullmq/connection.js';
import { indexEarlierChunks } from '../../src/bullmq/earlier-chunks.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { FakeClock } from '../bulk/support.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { ownFleet } from '../support/own-fleet.js';
import { HAS_REDIS_SERVER } from '../support/private-redis.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import {
  commandsOf,
  otherKeys,
  privateRedisFleet,
  removeUser,
  userWithoutScan,
} from '../support/redis-cost.js';
import { waitFor } from '../support/wait-for.js';

const withRedis = REDIS_URL !== undefined;
const enabled = withRedis && POSTGRES_URL !== undefined;
const UNRELATED = 20_000;

/** `count` addresses over 5 domains nobody verifies here (the chunks wait: no worker runs). */
function addresses(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `user${i}@d${i % 5}.cleanup.test`);
}

/** A chunk of job `job` holding `positions`. */
function chunkOf(job: string, positions: number[]): ChunkData {
  return {
    job,
    positions,
    emails: positions.map((p) => `user${p}@d0.cleanup.test`),
    attempts: positions.map(() => 1),
  };
}

/**
 * Puts a greylisting retry of `job` at `position` on the retry queue of worker `worker`, delayed, in the job's
 * index, as a worker does; `indexed: false` puts it there as an earlier version did, without an index entry.
 */
async function queueRetry(
  client: Redis,
  keys: FleetKeys,
  worker: string,
  job: string,
  position: number,
  indexed = true,
): Promise<void> {
  const queue = new Queue(keys.retryQueue(worker), { connection: keys.redis, prefix: keys.prefix });
  const id = `${job}.w${position}.1`;
  const add = () =>
    queue.add('retry', chunkOf(job, [position]), { jobId: id, delay: 600_000, removeOnComplete: true });
  try {
    if (indexed) await addIndexed(client, keys, [{ job, queue: queue.name, id }], add);
    else await add();
  } finally {
    await queue.close();
  }
}

describe.skipIf(!enabled)('forgetJobChunks on the fleet', () => {
  it('finds the chunks through the job’s index: a Redis user that may not SCAN or KEYS cleans up among 20,000 other keys of the prefix', async () => {
    const fleet = await ownFleet({ chunkSize: 10 });
    const { prefix, jobs } = fleet;
    const keys = fleetKeys({ connection: REDIS_URL!, prefix });
    const admin = new Redis(REDIS_URL!);
    let user: { username: string; password: string } | undefined;
    let restricted: Redis | undefined;
    try {
      await jobs.opened();
      const job = await jobs.create({ emails: addresses(50) }); // 5 chunks on the shared queue
      const other = await jobs.create({ emails: addresses(20) });
      await queueRetry(admin, keys, 'gone', job.id, 3); // a worker without heartbeat
      await queueRetry(admin, keys, 'alive', job.id, 4);
      await queueRetry(admin, keys, 'alive', other.id, 5);
      await admin.set(`${keys.workers}alive`, '{}', 'PX', 60_000);
      expect(await admin.scard(keys.jobChunks(job.id))).toBe(7);
      await otherKeys(admin, prefix, 'unrelated', UNRELATED);
      user = await userWithoutScan(admin, prefix, 'cleanup');
      restricted = new Redis({ ...keys.redis, ...user });
      await expect(restricted.scan('0')).rejects.toThrow(/NOPERM/);

      const { bullmq } = await loadQueue();
      await forgetJobChunks(bullmq, restricted, keys, job.id);

      // The job's chunks and its index are gone, and so is the retry queue of the worker that is gone.
      expect(await admin.keys(`${prefix}:*${job.id}*`)).toEqual([]);
      expect(await admin.keys(`${prefix}:verify-retry-gone*`)).toEqual([]);
      // The live worker's queue, the other job's chunks and index, and the other keys stay.
      expect(await admin.exists(`${prefix}:verify-retry-alive:meta`)).toBe(1);
      expect(await admin.exists(`${prefix}:verify-retry-alive:${other.id}.w5.1`)).toBe(1);
      expect(await admin.scard(keys.jobChunks(other.id))).toBe(3);
      expect((await admin.keys(`${prefix}:verify:${other.id}.*`)).length).toBe(2);
      expect((await admin.keys(`${prefix}:unrelated:*`)).length).toBe(UNRELATED);
    } finally {
      restricted?.disconnect();
      if (user !== undefined) await removeUser(admin, user.username);
      admin.disconnect();
      await fleet.close();
    }
  }, 60_000);

  it.skipIf(!HAS_REDIS_SERVER)(
    'makes Redis run the same commands, and no SCAN, whether 20,000 other keys share the prefix or none (INFO commandstats of a Redis of its own)',
    async () => {
      const fleet = await privateRedisFleet({ chunkSize: 10 }); // its commandstats count this test's commands only
      const { keys, prefix, jobs, admin } = fleet;
      const { bullmq } = await loadQueue();
      /** A job of 5 chunks on the shared queue and a retry on a gone worker's queue; then the commands of its clean-up. */
      const cleanUp = async (): Promise<Record<string, number>> => {
        const job = await jobs.create({ emails: addresses(50) });
        await queueRetry(admin, keys, 'gone', job.id, 3);
        expect(await admin.scard(keys.jobChunks(job.id))).toBe(6);
        const client = new Redis(keys.redis);
        try {
          await client.ping();
          return await commandsOf(admin, async () => {
            await forgetJobChunks(bullmq, client, keys, job.id);
          });
        } finally {
          client.disconnect();
          expect(await admin.keys(`${prefix}:*${job.id}*`)).toEqual([]);
          expect(await admin.keys(`${prefix}:verify-retry-gone*`)).toEqual([]);
        }
      };
      try {
        await jobs.opened();
        await cleanUp(); // loads the scripts into Redis, so that the runs measured are alike
        const bare = await cleanUp();
        await otherKeys(admin, prefix, 'unrelated', UNRELATED);
        const crowded = await cleanUp();
        expect(bare.scan).toBeUndefined();
        expect(bare.keys).toBeUndefined();
        expect(crowded).toEqual(bare);
        expect(await admin.dbsize()).toBeGreaterThan(UNRELATED);
      } finally {
        await fleet.close();
      }
    },
    60_000,
  );

  it('indexes once per fleet the chunks an earlier version queued without an index, so that their clean-up finds them', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const keys = fleetKeys({ connection: REDIS_URL!, prefix });
    const admin = new Redis(REDIS_URL!);
    const shared = new Queue(keys.queue, { connection: keys.redis, prefix });
    const job = 'earlier-job';
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    let jobs: BulkJobManager | undefined;
    try {
      // As an earlier version left them: chunks on the shared queue and on a gone worker's retry queue, no index.
      await shared.addBulk([
        { name: 'chunk', data: chunkOf(job, [0, 1]), opts: { jobId: `${job}.0.0`, delay: 600_000 } },
        { name: 'chunk', data: chunkOf(job, [2]), opts: { jobId: `${job}.0.1`, delay: 600_000 } },
      ]);
      await queueRetry(admin, keys, 'gone', job, 3, false);
      expect(await admin.exists(keys.jobChunks(job))).toBe(0);
      // The first API node of this version indexes them.
      jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
      await jobs.opened();
      expect((await admin.smembers(keys.jobChunks(job))).sort()).toEqual(
        [
          indexEntry('verify', `${job}.0.0`),
          indexEntry('verify', `${job}.0.1`),
          indexEntry('verify-retry-gone', `${job}.w3.1`),
        ].sort(),
      );
      expect(await admin.exists(keys.chunksIndexed)).toBe(1);
      // Once: with the marker set, a chunk without an entry is left unindexed.
      await queueRetry(admin, keys, 'gone', 'another-job', 4, false);
      await indexEarlierChunks(admin, keys);
      expect(await admin.exists(keys.jobChunks('another-job'))).toBe(0);

      const { bullmq } = await loadQueue();
      await forgetJobChunks(bullmq, admin, keys, job);
      expect(await admin.keys(`${prefix}:*${job}*`)).toEqual([]);
    } finally {
      await shared.close();
      admin.disconnect();
      if (jobs === undefined) await store.close?.();
      else await jobs.close();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 60_000);
});

describe.skipIf(!withRedis)('forgetJobChunks on a completed job', () => {
  it('keeps chunks holding positions at or past `below` and a chunk a worker holds, with their entries, and drops entries of chunks that are gone', async () => {
    const prefix = testPrefix();
    const keys = fleetKeys({ connection: REDIS_URL!, prefix });
    const admin = new Redis(REDIS_URL!);
    const queue = new Queue(keys.queue, { connection: keys.redis, prefix });
    const taker = new Worker(keys.queue, null, { connection: keys.redis, prefix });
    const job = 'done-job';
    const add = async (id: string, positions: number[]) => {
      const chunk = { job, queue: keys.queue, id };
      await addIndexed(admin, keys, [chunk], () =>
        queue.add('chunk', chunkOf(job, positions), { jobId: id, removeOnComplete: true }),
      );
    };
    try {
      await add(`${job}.0.0`, [0, 1]); // taken below, so held by a worker
      const held = await taker.getNextJob('token');
      expect(held?.id).toBe(`${job}.0.0`);
      await add(`${job}.0.1`, [2, 3]); // all below 5: removed
      await add(`${job}.5.0`, [5, 6]); // added after the completion: kept
      await admin.sadd(keys.jobChunks(job), indexEntry(keys.queue, `${job}.9.0`)); // a crash before its add
      const { bullmq } = await loadQueue();
      await forgetJobChunks(bullmq, admin, keys, job, 5);
      expect((await admin.smembers(keys.jobChunks(job))).sort()).toEqual([
        indexEntry(keys.queue, `${job}.0.0`),
        indexEntry(keys.queue, `${job}.5.0`),
      ]);
      expect(await admin.exists(`${prefix}:verify:${job}.0.1`)).toBe(0);
      expect(await admin.exists(`${prefix}:verify:${job}.5.0`)).toBe(1);
      expect(await admin.exists(`${prefix}:verify:${job}.0.0`)).toBe(1);
      // The worker acknowledges its chunk; deleting the job then leaves nothing of it, the index included.
      await held!.moveToCompleted('done', 'token', false);
      await forgetJobChunks(bullmq, admin, keys, job);
      expect(await admin.keys(`${prefix}:*${job}*`)).toEqual([]);
    } finally {
      await taker.close();
      await queue.close();
      admin.disconnect();
      await deletePrefix(prefix);
    }
  });
});

describe.skipIf(!enabled)('what a fleet job held', () => {
  it('is freed when the job is deleted and when the retention sweep forgets it', async () => {
    const clock = new FakeClock();
    const fleet = await ownFleet({}, { manager: { clock, retentionMs: 1000 } });
    try {
      const { jobs } = fleet;
      const kept = await jobs.create({ owner: 'a', emails: addresses(2), autoStart: false });
      const deleted = await jobs.create({ owner: 'a', name: 'gone', emails: addresses(3), autoStart: false });
      const each = 256 + 2 * 'user0@d0.cleanup.test'.length;
      expect(jobs.heldBytes({ owner: 'a' })).toEqual({ owner: 5 * each + 8, total: 5 * each + 8 });
      await jobs.delete(deleted.id, { owner: 'a' });
      expect(jobs.heldBytes({ owner: 'a' }).owner).toBe(2 * each);
      // An empty job is complete once started; the sweep (every second of real time) forgets it a retention later,
      // and keeps the unfinished one.
      const finished = await jobs.create({ owner: 'a', name: 'done', autoStart: false });
      await jobs.start(finished.id, { owner: 'a' });
      expect(await jobs.get(finished.id, { owner: 'a' })).toMatchObject({ status: 'complete' });
      expect(jobs.heldBytes({ owner: 'a' }).owner).toBe(2 * each + 8);
      clock.advance(1001);
      await waitFor(() => jobs.heldBytes({ owner: 'a' }).owner === 2 * each, {
        what: 'the sweep to forget the finished job',
      });
      expect(await jobs.get(finished.id, { owner: 'a' })).toBeUndefined();
      expect(await jobs.get(kept.id, { owner: 'a' })).toMatchObject({ status: 'queued' });
    } finally {
      await fleet.close();
    }
  }, 30_000);
});
