/**
 * `GET /healthz` on an API node of a fleet counts the live workers in the fleet's registry (heartbeat.ts), not by
 * walking the keyspace: an API node whose Redis user may not SCAN or KEYS reports them among 25,000 other keys, a
 * worker that closed leaves the count at once and one killed without closing once its heartbeat expires; a Redis of
 * the test's own shows (INFO commandstats) the same commands whether other keys are there or not; a heartbeat key
 * without a registry entry (a worker of an earlier version) is not counted, and an earlier API node's SCAN of the
 * heartbeat keys does not count the registry.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { fleetKeys } from '../../src/bullmq/connection.js';
import { beat } from '../../src/bullmq/heartbeat.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { postgresStore } from '../../src/postgres/pg.js';
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

const enabled = REDIS_URL !== undefined && POSTGRES_URL !== undefined;
const UNRELATED = 20_000;
const OTHER_APP = 5000;
const WORKER_PROCESS = fileURLToPath(new URL('./worker-process.ts', import.meta.url));

/** Worker processes started here, so that a test that timed out (its `finally` never ran) leaves none running. */
const spawned = new Set<ChildProcess>();

afterEach(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  spawned.clear();
});

/** Starts a worker in a process of its own (worker-process.ts); resolves once its first heartbeat is written. */
async function workerProcess(args: {
  prefix: string;
  id: string;
  heartbeatMs: number;
  schema: string;
}): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      WORKER_PROCESS,
      REDIS_URL!,
      args.prefix,
      args.id,
      String(args.heartbeatMs),
      POSTGRES_URL!,
      args.schema,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  spawned.add(child);
  let output = '';
  const collect = (chunk: Buffer) => {
    output += chunk.toString();
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => {
      if (output.includes('beating')) resolve();
    });
    child.once('exit', () => reject(new Error(`the worker process exited:\n${output}`)));
  });
  return child;
}

/** SIGKILLs `child` and waits until it is gone. */
async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** Redis's clock in milliseconds. */
async function redisNow(client: Redis): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

describe.skipIf(!enabled)('GET /healthz on an API node of a fleet', () => {
  it('counts the live workers for a Redis user that may not SCAN or KEYS, among 25,000 other keys; stops counting a worker that closed at once, and one killed without closing once its heartbeat expires', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const otherApp = testPrefix();
    const keys = fleetKeys({ connection: REDIS_URL!, prefix });
    const admin = new Redis(REDIS_URL!);
    let user: { username: string; password: string } | undefined;
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workers: FleetWorker[] = [];
    let restricted: Redis | undefined;
    let jobs: BulkJobManager | undefined;
    let handler: Handler | undefined;
    try {
      await otherKeys(admin, prefix, 'unrelated', UNRELATED);
      await otherKeys(admin, otherApp, 'app', OTHER_APP);
      // The one-off indexing of an earlier version's chunks (earlier-chunks.ts, one SCAN per fleet) is done.
      await admin.set(keys.chunksIndexed, 'done');
      user = await userWithoutScan(admin, prefix, 'health');
      restricted = new Redis({ ...keys.redis, ...user });
      await expect(restricted.scan('0')).rejects.toThrow(/NOPERM/);
      await expect(restricted.keys(`${prefix}:*`)).rejects.toThrow(/NOPERM/);
      jobs = new BulkJobManager({
        store,
        runner: bullmqRunner({ connection: { ...keys.redis, ...user }, prefix }),
      });
      await jobs.opened();
      const api = createHandler({ apiKeys: ['k'], jobs });
      handler = api;
      const health = async (): Promise<unknown> => {
        const response = await api(new Request('http://localhost/healthz'));
        expect(response.status).toBe(200);
        return response.json();
      };
      const fleetOf = (workers: number) => ({ status: 'ok', store: 'up', queue: 'up', workers });

      expect(await health()).toEqual(fleetOf(0));
      const start = (id: string, heartbeatMs: number) =>
        createWorker({ connection: REDIS_URL!, prefix, store: workerStore, id, heartbeatMs });
      // `steady` beats once in this test (so it prunes nothing), `quick` every 100 ms.
      workers.push(await start('steady', 600_000), await start('quick', 100));
      const crashing = await workerProcess({ prefix, id: 'crashing', heartbeatMs: 1000, schema });
      expect(await health()).toEqual(fleetOf(3));
      // Past the expiry of quick's first heartbeats (300 ms): its later ones keep it counted.
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(await health()).toEqual(fleetOf(3));

      // A worker that closes leaves the count at once.
      await workers.pop()!.close();
      expect(await admin.exists(`${keys.workers}quick`)).toBe(0);
      expect(await health()).toEqual(fleetOf(2));

      // A worker killed without closing counts until its heartbeat expires (3 s after its last one), then not,
      // though no worker beats in between (nothing prunes its entry).
      await kill(crashing);
      const expiry = Number(await admin.zscore(keys.workersLive, 'crashing'));
      expect(expiry).toBeGreaterThan(await redisNow(admin));
      expect(await health()).toEqual(fleetOf(2));
      expect(await admin.exists(`${keys.workers}crashing`)).toBe(1);
      await expect
        .poll(async () => ((await health()) as { workers: number }).workers, { timeout: 5000, interval: 50 })
        .toBe(1);
      expect(await redisNow(admin)).toBeGreaterThan(expiry);
      // Its heartbeat key expired with its entry (the same clock; the key's expiry may be 1 ms later).
      await expect.poll(() => admin.exists(`${keys.workers}crashing`), { timeout: 100, interval: 5 }).toBe(0);

      // The last worker's close prunes the crashed worker's entry and removes its own: the registry is gone.
      await workers.pop()!.close();
      expect(await health()).toEqual(fleetOf(0));
      expect(await admin.exists(keys.workersLive)).toBe(0);
      expect((await admin.keys(`${prefix}:unrelated:*`)).length).toBe(UNRELATED);
    } finally {
      for (const worker of workers) await worker.close();
      await handler?.close();
      if (jobs === undefined) await store.close?.();
      else await jobs.close();
      await workerStore.close?.();
      restricted?.disconnect();
      if (user !== undefined) await removeUser(admin, user.username);
      admin.disconnect();
      await deletePrefix(prefix);
      await deletePrefix(otherApp);
      await dropPostgresSchema(schema);
    }
  }, 60_000);

  it.skipIf(!HAS_REDIS_SERVER)(
    'makes Redis run the same commands, and no SCAN, whether 25,000 other keys are there or none (INFO commandstats of a Redis of its own)',
    async () => {
      const fleet = await privateRedisFleet(); // its commandstats count this test's commands only
      const { keys, prefix, jobs, admin } = fleet;
      /** The commands of 10 health checks, which each count the 2 workers. */
      const checks = () =>
        commandsOf(admin, async () => {
          for (let i = 0; i < 10; i++) expect(await jobs.fleetHealth()).toEqual({ queue: 'up', workers: 2 });
        });
      try {
        await jobs.opened();
        // Two workers' heartbeats as they write them (workers' own BullMQ commands would blur the measure).
        for (const id of ['a', 'b']) await beat(admin, keys, id, '{}', 600_000);
        const bare = await checks();
        await otherKeys(admin, prefix, 'unrelated', UNRELATED);
        await otherKeys(admin, 'other-app', 'app', OTHER_APP);
        const crowded = await checks();
        expect(bare).toEqual({ eval: 10, time: 10, zcount: 10 });
        expect(crowded).toEqual(bare);
        expect(await admin.dbsize()).toBeGreaterThan(UNRELATED + OTHER_APP);
      } finally {
        await fleet.close();
      }
    },
    60_000,
  );

  it('does not count a heartbeat key without a registry entry (a worker of an earlier version), and an earlier API node’s SCAN of the heartbeat keys does not count the registry', async () => {
    const fleet = await ownFleet();
    const keys = fleetKeys({ connection: REDIS_URL!, prefix: fleet.prefix });
    const admin = new Redis(REDIS_URL!);
    let worker: FleetWorker | undefined;
    try {
      await fleet.jobs.opened();
      worker = await fleet.worker({ id: 'current' });
      await admin.set(`${keys.workers}earlier`, '{}', 'PX', 60_000); // as an earlier version's heartbeat
      expect(await fleet.jobs.fleetHealth()).toEqual({ queue: 'up', workers: 1 });
      // What an earlier API node counts: every key under the heartbeat prefix, both workers' and nothing else.
      const scanned = await admin.scan('0', 'MATCH', `${keys.workers}*`, 'COUNT', 10_000);
      expect(scanned[1].sort()).toEqual([`${keys.workers}current`, `${keys.workers}earlier`]);
      expect(await admin.exists(keys.workersLive)).toBe(1);
    } finally {
      await worker?.close();
      admin.disconnect();
      await fleet.close();
    }
  });
});
