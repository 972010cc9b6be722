/**
 * `pgliteStore`: the durable job store in an embedded, file-backed PostgreSQL (PGlite: WASM, no server).
 * @module
 */
import type { PGlite } from '@electric-sql/pglite';
import type { DurableJobStore } from '../bulk/types.js';
import type { LimitStore, UsageStore } from '../bulk/usage.js';
import { OptionsError } from '../errors.js';
import type { ApiKeyHolder } from './api-keys.js';
import { claimDataDir } from './data-dir.js';
import type { StoreLockedError } from './dir-lock.js';
import type { SqlDriver } from './driver.js';
import type { KnownResultsHost } from './known-results.js';
import { observedDriver } from './observed-driver.js';
import { openError } from './open-error.js';
import { resolveSqlOptions } from './options.js';
import { pgliteModulePath, pgliteThreadDriver } from './pglite-thread.js';
import { openSqlStore, type SqlStoreOptions } from './sql-store.js';

/** Options of {@link pgliteStore}: a data directory, or a PGlite instance of the caller's. */
export interface PgliteStoreOptions extends SqlStoreOptions {
  /**
   * Directory of the database files, created on first use (the first open runs initdb: a few seconds). One
   * store at a time may open it: a second open, in this process or another, throws `store_locked` naming the
   * holder, before anything reads the directory. Omit it (and `db`) for a database in memory that ends with the
   * process.
   */
  readonly dataDir?: string;
  /** An open PGlite of the caller's (then `dataDir` must be absent, and `close()` leaves it open). */
  readonly db?: PGlite;
}

/** A driver on the caller's own PGlite instance, run on the caller's thread; `close()` leaves it open. */
function pgliteDriver(db: PGlite): SqlDriver {
  return {
    async query(text, params) {
      return (await db.query<Record<string, unknown>>(text, params as unknown[] | undefined)).rows;
    },
    transaction(work) {
      return db.transaction((tx) =>
        work({
          async query(text, params) {
            return (await tx.query<Record<string, unknown>>(text, params as unknown[] | undefined)).rows;
          },
        }),
      );
    },
    async close() {},
  };
}

/**
 * Opens (creating if needed) a durable job store in PGlite, the default of `mailvet serve --data DIR`. Needs the
 * optional peer dependency `@electric-sql/pglite`. Throws `store_unavailable` naming the problem when the
 * directory is not a PGlite database or cannot be opened, `store_locked` ({@link StoreLockedError}, naming the
 * holder) when another store, in this process or another, has the directory open, and `store_error` when its
 * schema is newer than this mailvet.
 * @example
 * const jobs = new BulkJobManager({ store: await pgliteStore({ dataDir: './mailvet-data' }) });
 */
export async function pgliteStore(options: PgliteStoreOptions = {}): Promise<PgliteJobStore> {
  const resolved = resolveSqlOptions(options);
  if (options.db !== undefined && options.dataDir !== undefined) {
    throw new OptionsError('dataDir', 'cannot be given together with db');
  }
  if (options.dataDir !== undefined && (typeof options.dataDir !== 'string' || options.dataDir === '')) {
    throw new OptionsError('dataDir', 'must be a non-empty path');
  }
  const what = options.dataDir === undefined ? 'PGlite in memory' : `PGlite directory ${options.dataDir}`;
  const lock = options.dataDir === undefined ? undefined : await claimDataDir(options.dataDir, what);
  try {
    const store = await openPglite(options, resolved, what);
    if (lock === undefined) return store;
    return {
      ...store,
      async close() {
        try {
          await store.close?.();
        } finally {
          await lock.release();
        }
      },
    };
  } catch (error) {
    await lock?.release();
    throw error;
  }
}

/** The PGlite job store: durable jobs, usage counts and limit counters. */
export type PgliteJobStore = DurableJobStore & UsageStore & LimitStore & ApiKeyHolder & KnownResultsHost;

/** Opens the store on PGlite once its directory (if any) is held by {@link claimDataDir}. */
async function openPglite(
  options: PgliteStoreOptions,
  resolved: ReturnType<typeof resolveSqlOptions>,
  what: string,
): Promise<PgliteJobStore> {
  let inner: SqlDriver;
  if (options.db !== undefined) {
    inner = pgliteDriver(options.db);
  } else {
    let module: string;
    try {
      module = pgliteModulePath();
    } catch (error) {
      throw openError(
        what,
        new Error('the package @electric-sql/pglite is not installed (npm install @electric-sql/pglite)', {
          cause: error,
        }),
      );
    }
    try {
      // On a thread of its own: PGlite runs each statement, and its file writes, on the calling thread.
      inner = await pgliteThreadDriver(options.dataDir, module);
    } catch (error) {
      throw openError(what, describePgliteFailure(error));
    }
  }
  const driver = observedDriver(inner, resolved.onQuery);
  try {
    return await openSqlStore(driver, {
      schema: resolved.schema,
      leaseMs: resolved.leaseMs,
      ownsDriver: options.db === undefined,
      exclusive: options.db === undefined,
      asyncCommit: false,
      checkDamage: options.dataDir !== undefined,
    });
  } catch (error) {
    await driver.close().catch(() => {});
    throw openError(what, error);
  }
}

/** PGlite reports a foreign directory as a WASM abort; say what it most likely means. */
function describePgliteFailure(error: unknown): Error {
  const message =
    error instanceof Error
      ? error.message
      : typeof error === 'object'
        ? JSON.stringify(error)
        : String(error);
  return new Error(`${message} (is it a PGlite data directory of a compatible version?)`, { cause: error });
}
