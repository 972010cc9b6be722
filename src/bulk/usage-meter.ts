/**
 * The usage meter: counts verifications in memory and writes them to a {@link UsageStore} in batches (one write
 * per flush, never one per address), every `flushMs` and on `close()`.
 * @module
 */
import type { Clock } from '../clock.js';
import { OptionsError } from '../errors.js';
import { STATUSES, type Status } from '../result.js';
import {
  dayOf,
  msUntilNextDay,
  USAGE_KINDS,
  type UsageCount,
  type UsageKind,
  type UsageStore,
} from './usage.js';

/** Options of {@link createUsageMeter}. */
export interface UsageMeterOptions {
  /** Where the counts go. */
  readonly store: UsageStore;
  /** Longest time, in milliseconds, a count waits in memory before it is written (1-3600000). @default 1000 */
  readonly flushMs?: number;
  /** Time source (the UTC day of a count) and the flush timer. @default the system clock */
  readonly clock?: Clock;
  /** Told when a write fails (the counts are kept and written with the next flush). @default none */
  readonly onError?: (error: unknown) => void;
}

/** Counts verifications per tenant, day, kind and status, and writes them in batches. */
export interface UsageMeter {
  /** Counts `count` verifications of `tenant` (as of now, UTC day) of `kind` with `status`. */
  count(tenant: string, kind: UsageKind, status: Status, count?: number): void;
  /** Writes what is counted now; resolves when the store has it (rejects when the write fails). */
  flush(): Promise<void>;
  /** Stops the timer and writes what is left. Idempotent. */
  close(): Promise<void>;
}

/** Counts waiting for a write: UTC day → tenant → a slot per kind and status. */
type Pending = Map<string, Map<string, number[]>>;

/** The position of each status among a kind's slots. */
const STATUS_INDEX = Object.fromEntries(STATUSES.map((status, index) => [status, index])) as Record<
  Status,
  number
>;
/** Slots per tenant and day: every kind times every status. */
const SLOTS = USAGE_KINDS.length * STATUSES.length;

/** The non-zero counters of `pending`. */
function countsOf(pending: Pending): UsageCount[] {
  const counts: UsageCount[] = [];
  for (const [day, tenants] of pending) {
    for (const [tenant, slots] of tenants) {
      for (let slot = 0; slot < SLOTS; slot++) {
        const count = slots[slot]!;
        if (count === 0) continue;
        const kind: UsageKind = slot < STATUSES.length ? 'single' : 'bulk';
        counts.push({ tenant, day, kind, status: STATUSES[slot % STATUSES.length]!, count });
      }
    }
  }
  return counts;
}

/** The documented default of {@link UsageMeterOptions.flushMs}. */
export const DEFAULT_USAGE_FLUSH_MS = 1000;

const SYSTEM_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Makes a meter over `options.store`.
 * @example
 * const meter = createUsageMeter({ store: memoryUsageStore() });
 * meter.count('tenant-a', 'single', 'valid');
 * await meter.close();
 */
export function createUsageMeter(options: UsageMeterOptions): UsageMeter {
  const store = options.store;
  if (typeof store !== 'object' || store === null || typeof store.addUsage !== 'function') {
    throw new OptionsError('store', 'must be a UsageStore (addUsage, readUsage)');
  }
  const flushMs = options.flushMs ?? DEFAULT_USAGE_FLUSH_MS;
  if (!Number.isInteger(flushMs) || flushMs < 1 || flushMs > 3_600_000) {
    throw new OptionsError('flushMs', 'must be an integer 1-3600000');
  }
  const clock = options.clock ?? SYSTEM_CLOCK;
  const onError = options.onError ?? (() => undefined);
  /** Counts waiting for the next write: day → tenant → one slot per kind and status (no object per count). */
  let pending: Pending = new Map();
  let timer: unknown;
  let writing: Promise<void> = Promise.resolve();
  let closed = false;
  // The day of the latest count and when it ends: most counts need no date formatting.
  let day = '';
  let dayEnds = Number.NEGATIVE_INFINITY;
  let dayBegins = Number.POSITIVE_INFINITY;

  function dayNow(): string {
    const now = clock.now();
    if (now >= dayEnds || now < dayBegins) {
      day = dayOf(now);
      dayEnds = now + msUntilNextDay(now);
      dayBegins = dayEnds - 86_400_000;
    }
    return day;
  }

  function add(
    into: Pending,
    tenant: string,
    day: string,
    kind: UsageKind,
    status: Status,
    count: number,
  ): void {
    let tenants = into.get(day);
    if (tenants === undefined) {
      tenants = new Map();
      into.set(day, tenants);
    }
    let slots = tenants.get(tenant);
    if (slots === undefined) {
      slots = new Array<number>(SLOTS).fill(0);
      tenants.set(tenant, slots);
    }
    slots[(kind === 'single' ? 0 : STATUSES.length) + STATUS_INDEX[status]]! += count;
  }

  function schedule(): void {
    if (timer !== undefined || closed) return;
    timer = clock.setTimeout(() => {
      timer = undefined;
      flush().catch(onError);
    }, flushMs);
  }

  function flush(): Promise<void> {
    if (timer !== undefined) {
      clock.clearTimeout(timer);
      timer = undefined;
    }
    // Writes go one after another, so that a failed batch is merged back before the next one is taken.
    writing = writing.then(async () => {
      if (pending.size === 0) return;
      const batch = pending;
      pending = new Map();
      try {
        await store.addUsage(countsOf(batch));
      } catch (error) {
        for (const entry of countsOf(batch))
          add(pending, entry.tenant, entry.day, entry.kind, entry.status, entry.count);
        schedule();
        throw error;
      }
    });
    const done = writing;
    writing = writing.catch(() => undefined);
    return done;
  }

  return {
    count(tenant, kind, status, count = 1) {
      if (count <= 0) return;
      add(pending, tenant, dayNow(), kind, status, count);
      schedule();
    },
    flush,
    async close() {
      closed = true;
      await flush();
    },
  };
}
