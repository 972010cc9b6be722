/**
 * Where `mailvet serve` counts usage and keys' own limits: in the job store's database when it has one (PGlite or
 * PostgreSQL), on the fleet's Redis with `--redis`, else in this process.
 * @module
 */
import type { JobStore } from '../bulk/types.js';
import type { LimitStore, UsageStore } from '../bulk/usage.js';
import { memoryUsageStore } from '../bulk/usage-memory.js';
import { createUsageMeter, type UsageMeter } from '../bulk/usage-meter.js';
import type { FleetChoice } from './fleet.js';

/** The counters of a server: its usage store and meter, and its limit counters. */
export interface ServeUsage {
  readonly store: UsageStore;
  readonly meter: UsageMeter;
  readonly limits: LimitStore;
  /** Writes the last counts and closes what was opened here (the Redis connection). */
  close(): Promise<void>;
}

function isUsageStore(store: unknown): store is UsageStore & LimitStore {
  return typeof (store as Partial<UsageStore> | undefined)?.addUsage === 'function';
}

/**
 * The usage counters of a server whose job store is `jobStore` (`undefined`: memory) and whose fleet is `fleet`.
 * `onError` hears a failed write of the meter (the counts are kept for the next one).
 */
export async function serveUsage(
  jobStore: JobStore | undefined,
  fleet: FleetChoice | undefined,
  onError: (error: unknown) => void,
): Promise<ServeUsage> {
  const memory = isUsageStore(jobStore) ? undefined : memoryUsageStore();
  const store: UsageStore = isUsageStore(jobStore) ? jobStore : (memory as UsageStore);
  let limits: LimitStore = isUsageStore(jobStore) ? jobStore : (memory as LimitStore);
  let redis: { close(): Promise<void> } | undefined;
  if (fleet !== undefined) {
    const { redisLimits } = await import('../bullmq/index.js');
    const opened = await redisLimits({
      connection: fleet.url,
      ...(fleet.prefix === undefined ? {} : { prefix: fleet.prefix }),
    });
    limits = opened;
    redis = opened;
  }
  const meter = createUsageMeter({ store, onError });
  return {
    store,
    meter,
    limits,
    async close() {
      await meter.close().catch(onError);
      await redis?.close();
    },
  };
}
