/**
 * Known results in the job store's `known_results` table, so that every process on the same database (a fleet, or
 * API nodes behind a balancer) shares them; expired rows are deleted by a periodic sweep.
 * @module
 */
import type { Clock } from '../clock.js';
import { OptionsError } from '../errors.js';
import { batchedKnownResults, MAX_BATCH } from '../known/batch.js';
import { frontedKnownResults } from '../known/front.js';
import type { KnownEntry, KnownResult, KnownResults, KnownVerdict } from '../known/types.js';
import { writeBehind } from '../known/write-behind.js';
import { integerOption } from '../option-fields.js';
import type { SqlDriver } from './driver.js';

/** Options of a store's `knownResults()`. */
export interface StoreKnownResultsOptions {
  /** How often expired rows are deleted, in milliseconds (1,000-86,400,000); `0` never (call `sweep()`). @default 600000 */
  readonly sweepIntervalMs?: number;
  /** Time source: decides expiry, runs the sweep. @default the system clock */
  readonly clock?: Clock;
  /**
   * How long lookups are collected into one query, in milliseconds (0-1000): `0` merges those of one event-loop
   * turn. A lookup waits this long before its query; one query of lookups runs at a time, and the lookups asked
   * meanwhile go in the next (writes are gathered by `writeDelayMs`, and never hold a lookup up). @default 0
   */
  readonly batchWindowMs?: number;
  /**
   * Longest time a new verdict waits to be written, in milliseconds (0-60,000): verdicts are written in batches of
   * up to 1,000 (at most 4 MiB wait; beyond, new ones are not kept), `close()` writes what waits. A crash loses
   * at most this long's verdicts; other processes see a verdict this much later. @default 1000
   */
  readonly writeDelayMs?: number;
  /**
   * Most verdicts copied in this process (0-10,000,000; `0`: none), so that an address looked up or verified
   * here is answered without a query (bounded also to 16 MiB, least recently used first). @default 50000
   */
  readonly localEntries?: number;
  /**
   * Longest time such a copy answers, in milliseconds (1,000-86,400,000), never past its verdict's expiry: how long
   * a verdict another process replaced (a `fresh` check there) may still answer here. @default 300000
   */
  readonly localHoldMs?: number;
}

/** The documented defaults of {@link StoreKnownResultsOptions}. */
export const STORE_KNOWN_DEFAULTS = Object.freeze({
  sweepIntervalMs: 600_000,
  batchWindowMs: 0,
  writeDelayMs: 1000,
  localEntries: 50_000,
  localHoldMs: 300_000,
});

/** Most bytes of the local copies, and of the verdicts waiting to be written. */
const LOCAL_BYTES = 16 * 1024 * 1024;
const WAITING_BYTES = 4 * 1024 * 1024;

/** Known results kept in a job store's database. */
export interface StoreKnownResults extends KnownResults {
  /** Deletes the expired rows now; resolves to how many. */
  sweep(): Promise<number>;
  /**
   * Writes the verdicts that wait and stops the sweep (the store's driver stays open: the store closes it, after
   * this has resolved). Idempotent.
   */
  close(): Promise<void>;
}

/** A job store that can keep known results in its database (`pgliteStore`, `postgresStore`). */
export interface KnownResultsHost {
  /**
   * Known results in this store's database: lookups of one event-loop turn are batched into one query (see
   * `batchWindowMs`), writes gathered behind (`writeDelayMs`). Throws an `OptionsError` naming a bad option.
   */
  knownResults(options?: StoreKnownResultsOptions): StoreKnownResults;
}

/** True when `store` can keep known results ({@link KnownResultsHost}). */
export function hasKnownResults(store: unknown): store is KnownResultsHost {
  return (
    typeof store === 'object' &&
    store !== null &&
    typeof (store as Partial<KnownResultsHost>).knownResults === 'function'
  );
}

function sweepIntervalOf(value: unknown): number {
  if (value === undefined) return STORE_KNOWN_DEFAULTS.sweepIntervalMs;
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    (value !== 0 && (value < 1000 || value > 86_400_000))
  ) {
    throw new OptionsError('sweepIntervalMs', 'must be 0 or an integer 1000-86400000');
  }
  return value;
}

const REAL_CLOCK: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms) as unknown as { unref?: () => void };
    timer.unref?.(); // a sweep never keeps a process alive
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as Parameters<typeof clearTimeout>[0]),
};

function verdictOf(text: unknown): KnownVerdict {
  return JSON.parse(String(text)) as KnownVerdict;
}

/** The latest entry per key (one upsert cannot touch a row twice). */
function lastPerKey(entries: readonly KnownEntry[]): KnownEntry[] {
  const byKey = new Map<string, KnownEntry>();
  for (const entry of entries) byKey.set(entry.key, entry);
  return [...byKey.values()];
}

/**
 * Known results in `schema.known_results` on `driver` (the table comes with the store's migration 5). Used by the
 * SQL store's `knownResults()`.
 */
export function sqlKnownResults(
  driver: SqlDriver,
  schema: string,
  options: StoreKnownResultsOptions = {},
): StoreKnownResults {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const interval = sweepIntervalOf(options.sweepIntervalMs);
  const D = STORE_KNOWN_DEFAULTS;
  const windowMs = integerOption(options.batchWindowMs, 'batchWindowMs', D.batchWindowMs, 0, 1000);
  const writeDelayMs = integerOption(options.writeDelayMs, 'writeDelayMs', D.writeDelayMs, 0, 60_000);
  const localEntries = integerOption(options.localEntries, 'localEntries', D.localEntries, 0, 10_000_000);
  const localHoldMs = integerOption(options.localHoldMs, 'localHoldMs', D.localHoldMs, 1000, 86_400_000);
  const clock = options.clock ?? REAL_CLOCK;
  const table = `${schema}.known_results`;
  let timer: unknown;
  let closed = false;
  /** When each result the table answered expires, for the local copies. */
  const expiries = new WeakMap<KnownResult, number>();

  const direct: KnownResults = {
    async get(keys) {
      const found = new Map<string, KnownResult>();
      if (keys.length === 0) return found;
      const rows = await driver.query(
        `SELECT key, verdict, checked_at, expires_at FROM ${table} WHERE key = ANY($1::text[]) AND expires_at > $2`,
        [keys, clock.now()],
      );
      for (const row of rows) {
        const result: KnownResult = { ...verdictOf(row.verdict), checkedAt: Number(row.checked_at) };
        expiries.set(result, Number(row.expires_at));
        found.set(String(row.key), result);
      }
      return found;
    },
    async set(entries) {
      for (let i = 0; i < entries.length; i += MAX_BATCH) await upsert(entries.slice(i, i + MAX_BATCH));
    },
  };

  /** Writes at most {@link MAX_BATCH} entries in one statement. */
  async function upsert(entries: readonly KnownEntry[]): Promise<void> {
    const latest = lastPerKey(entries);
    await driver.query(
      `INSERT INTO ${table} (key, verdict, checked_at, expires_at)
       SELECT key, verdict, checked_at, checked_at + ttl
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[]) AS t(key, verdict, checked_at, ttl)
       ON CONFLICT (key) DO UPDATE SET verdict = excluded.verdict, checked_at = excluded.checked_at,
         expires_at = excluded.expires_at`,
      [
        latest.map((entry) => entry.key),
        latest.map((entry) => JSON.stringify(entry.verdict)),
        latest.map((entry) => entry.checkedAt),
        latest.map((entry) => entry.ttlMs),
      ],
    );
  }

  async function sweep(): Promise<number> {
    const rows = await driver.query(`DELETE FROM ${table} WHERE expires_at <= $1 RETURNING 1 AS gone`, [
      clock.now(),
    ]);
    return rows.length;
  }

  function arm(): void {
    if (interval === 0 || closed) return;
    timer = clock.setTimeout(() => {
      sweep().then(arm, arm); // a failed sweep is tried again next time
    }, interval);
  }
  arm();

  const lookups = batchedKnownResults(direct, { windowMs });
  // Writes go to the table as writeBehind gathers them (1,000 rows a statement, one statement at a time), not through
  // the lookups' batches: a lookup never waits behind a write. It still finds the verdicts kept here: writeBehind
  // answers those that wait or are being written.
  const behind = writeBehind(
    { get: (keys) => lookups.get(keys), set: (entries) => direct.set(entries) },
    {
      delayMs: writeDelayMs,
      batchEntries: MAX_BATCH,
      maxBytes: WAITING_BYTES,
      clock,
    },
  );
  const known =
    localEntries === 0
      ? behind
      : frontedKnownResults(behind, {
          maxEntries: localEntries,
          maxBytes: LOCAL_BYTES,
          holdMs: localHoldMs,
          clock,
          expiryOf: (result) => expiries.get(result),
        });
  return {
    get: (keys) => known.get(keys),
    set: (entries) => known.set(entries),
    now: () => clock.now(),
    sweep,
    async close() {
      closed = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await behind.flush();
    },
  };
}
