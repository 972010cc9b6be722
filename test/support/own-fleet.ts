/**
 * A fleet of one test's own, in process, on the shared PostgreSQL and Redis of the tests (databases.ts,
 * redis.ts): a schema and a key prefix of its own, so that tests running at the same time do not meet.
 * @module
 */
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { FleetJobStore } from '../../src/bulk/runner.js';
import type { BulkJobManagerOptions } from '../../src/bulk/types.js';
import { type BullmqRunnerOptions, bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker, type FleetWorkerOptions } from '../../src/bullmq/worker.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from './databases.js';
import { deletePrefix, REDIS_URL, testPrefix } from './redis.js';

/** Options of a worker of an {@link OwnFleet}: connection and prefix are the fleet's, store by default. */
export type OwnFleetWorkerOptions = Omit<FleetWorkerOptions, 'connection' | 'prefix' | 'store'> &
  Partial<Pick<FleetWorkerOptions, 'store'>>;

/** A running fleet of one test (see {@link ownFleet}). */
export interface OwnFleet {
  /** The fleet's Redis key prefix. */
  readonly prefix: string;
  /** The fleet's PostgreSQL schema. */
  readonly schema: string;
  /** The manager (an API node) on the bullmq runner. */
  readonly jobs: BulkJobManager;
  /** The workers' store: a second one on the same schema. */
  readonly workerStore: FleetJobStore;
  /** Starts a worker of the fleet; the caller closes it. */
  worker(options: OwnFleetWorkerOptions): Promise<FleetWorker>;
  /** Closes the manager and the workers' store, deletes the schema and the keys; close the workers first. */
  close(): Promise<void>;
}

/**
 * Opens a fleet on a fresh schema and key prefix: a manager on the bullmq runner (with `runner`'s options)
 * on its store (wrapped by `options.managerStore`, if given) and a second store for the workers. Needs POSTGRES_URL and REDIS_URL (tests without them are skipped).
 */
export async function ownFleet(
  runner: Omit<BullmqRunnerOptions, 'connection' | 'prefix'> = {},
  options: {
    /** Wraps the manager's store (to make it fail on cue, say). */
    readonly managerStore?: (store: FleetJobStore) => FleetJobStore;
    /** More options of the manager (a clock and a retention, say). */
    readonly manager?: Pick<BulkJobManagerOptions, 'clock' | 'retentionMs'>;
  } = {},
): Promise<OwnFleet> {
  const schema = testSchema();
  const prefix = testPrefix();
  const opened = await postgresStore({ connectionString: POSTGRES_URL!, schema });
  const store = options.managerStore?.(opened) ?? opened;
  const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
  const jobs = new BulkJobManager({
    ...options.manager,
    store,
    runner: bullmqRunner({ connection: REDIS_URL!, prefix, ...runner }),
  });
  return {
    prefix,
    schema,
    jobs,
    workerStore,
    worker: (options) => createWorker({ connection: REDIS_URL!, prefix, store: workerStore, ...options }),
    async close() {
      await jobs.close();
      await workerStore.close?.();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    },
  };
}
