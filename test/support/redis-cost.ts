/**
 * What a fleet operation costs Redis, for tests that show it does not walk the keyspace: keys that are none of the
 * fleet's, a Redis user that may not `SCAN` or `KEYS`, the commands an operation made Redis run, and an API node on
 * a Redis of its own to count them on.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { type FleetKeys, fleetKeys } from '../../src/bullmq/connection.js';
import { type BullmqRunnerOptions, bullmqRunner } from '../../src/bullmq/runner.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from './databases.js';
import { startPrivateRedis } from './private-redis.js';
import { testPrefix } from './redis.js';

/** Writes `count` keys `<prefix>:<kind>:<n>` holding `x` (other data sharing the Redis), 1,000 per command. */
export async function otherKeys(client: Redis, prefix: string, kind: string, count: number): Promise<void> {
  for (let from = 0; from < count; from += 1000) {
    const pairs = Array.from({ length: Math.min(1000, count - from) }, (_, i) => [
      `${prefix}:${kind}:${from + i}`,
      'x',
    ]).flat();
    await client.mset(...pairs);
  }
}

/**
 * Creates a Redis user `<prefix>-<label>` that may run every command but `SCAN` and `KEYS`, on keys under `prefix`
 * only; returns its credentials. Delete it with {@link removeUser}.
 */
export async function userWithoutScan(
  admin: Redis,
  prefix: string,
  label: string,
): Promise<{ username: string; password: string }> {
  const username = `${prefix}-${label}`;
  const password = randomBytes(16).toString('hex');
  await admin.call(
    'ACL',
    'SETUSER',
    username,
    'on',
    `>${password}`,
    'resetkeys',
    `~${prefix}:*`,
    'resetchannels',
    '&*',
    '+@all',
    '-scan',
    '-keys',
  );
  return { username, password };
}

/** Deletes a user made by {@link userWithoutScan}. */
export async function removeUser(admin: Redis, username: string): Promise<void> {
  await admin.call('ACL', 'DELUSER', username);
}

/** Calls per command since the server started (INFO commandstats). */
async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const [, name, count] of (await client.info('commandstats')).matchAll(
    /^cmdstat_(\S+?):calls=(\d+)/gm,
  )) {
    calls.set(name!, Number(count));
  }
  return calls;
}

/**
 * The commands `run` made Redis execute (INFO excluded: the measurement's own), calls per command. Meaningful on
 * a Redis of the test's own (test/support/private-redis.ts): on a shared one, other tests' commands count too.
 */
export async function commandsOf(admin: Redis, run: () => Promise<void>): Promise<Record<string, number>> {
  const before = await commandCalls(admin);
  await run();
  const after = await commandCalls(admin);
  const made: Record<string, number> = {};
  for (const [name, count] of after) {
    const more = count - (before.get(name) ?? 0);
    if (more > 0 && name !== 'info') made[name] = more;
  }
  return made;
}

/** An API node's job manager on a Redis of its own, whose command counts are then this test's alone. */
export interface PrivateRedisFleet {
  /** The fleet's keys (on the private Redis). */
  readonly keys: FleetKeys;
  readonly prefix: string;
  /** The manager, with a bullmq runner on the private Redis and a PostgreSQL schema of its own. */
  readonly jobs: BulkJobManager;
  /** A client of the private Redis, for the test's own reads and writes. */
  readonly admin: Redis;
  /** Closes the manager and the client, stops the Redis and drops the schema. */
  close(): Promise<void>;
}

/** Starts a private Redis (test/support/private-redis.ts) and an API node's manager on it (no reconcile passes). */
export async function privateRedisFleet(
  runner: Partial<BullmqRunnerOptions> = {},
): Promise<PrivateRedisFleet> {
  const redis = await startPrivateRedis();
  const schema = testSchema();
  const prefix = testPrefix();
  const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
  const jobs = new BulkJobManager({
    store,
    runner: bullmqRunner({ connection: redis.url, prefix, reconcileMs: 3_600_000, ...runner }),
  });
  const admin = new Redis(redis.url);
  return {
    keys: fleetKeys({ connection: redis.url, prefix }),
    prefix,
    jobs,
    admin,
    async close() {
      admin.disconnect();
      await jobs.close();
      await redis.stop();
      await dropPostgresSchema(schema);
    },
  };
}
