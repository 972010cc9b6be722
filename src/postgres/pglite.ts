/**
 * `pgliteStore`: the durable job store in an embedded, file-backed PostgreSQL (PGlite: WASM, no server).
 * @module
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { DurableJobStore } from '../bulk/types.js';
import { OptionsError } from '../errors.js';
import type { SqlDriver } from './driver.js';
import { openError } from './open-error.js';
import { resolveSqlOptions } from './options.js';
import { openSqlStore, type SqlStoreOptions } from './sql-store.js';

/** Options of {@link pgliteStore}: a data directory, or a PGlite instance of the caller's. */
export interface PgliteStoreOptions extends SqlStoreOptions {
  /**
   * Directory of the database files, created on first use (the first open runs initdb: a few seconds). One
   * process at a time may open it. Omit it (and `db`) for a database in memory that ends with the process.
   */
  readonly dataDir?: string;
  /** An open PGlite of the caller's (then `dataDir` must be absent, and `close()` leaves it open). */
  readonly db?: PGlite;
}

function pgliteDriver(db: PGlite, owns: boolean): SqlDriver {
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
    async close() {
      if (owns) await db.close();
    },
  };
}

/**
 * Opens (creating if needed) a durable job store in PGlite, the default of `mailvet serve --data DIR`. Needs the
 * optional peer dependency `@electric-sql/pglite`. Throws `store_unavailable` naming the problem when the
 * directory is not a PGlite database or cannot be opened, and `store_error` when its schema is newer than
 * this mailvet.
 * @example
 * const jobs = new BulkJobManager({ store: await pgliteStore({ dataDir: './mailvet-data' }) });
 */
export async function pgliteStore(options: PgliteStoreOptions = {}): Promise<DurableJobStore> {
  const resolved = resolveSqlOptions(options);
  if (options.db !== undefined && options.dataDir !== undefined) {
    throw new OptionsError('dataDir', 'cannot be given together with db');
  }
  if (options.dataDir !== undefined && (typeof options.dataDir !== 'string' || options.dataDir === '')) {
    throw new OptionsError('dataDir', 'must be a non-empty path');
  }
  const what = options.dataDir === undefined ? 'PGlite in memory' : `PGlite directory ${options.dataDir}`;
  if (options.dataDir !== undefined) await checkDataDir(options.dataDir, what);
  let db = options.db;
  if (db === undefined) {
    let module: typeof import('@electric-sql/pglite');
    try {
      module = await import('@electric-sql/pglite');
    } catch (error) {
      throw openError(
        what,
        new Error('the package @electric-sql/pglite is not installed (npm install @electric-sql/pglite)', {
          cause: error,
        }),
      );
    }
    try {
      db = await module.PGlite.create(options.dataDir);
    } catch (error) {
      throw openError(what, describePgliteFailure(error));
    }
  }
  const driver = pgliteDriver(db, options.db === undefined);
  try {
    return await openSqlStore(driver, {
      ...resolved,
      ownsDriver: options.db === undefined,
      exclusive: options.db === undefined,
      asyncCommit: false,
    });
  } catch (error) {
    await driver.close().catch(() => {});
    throw openError(what, error);
  }
}

/**
 * Refuses, before PGlite sees it, a path that is a file or a non-empty directory without `PG_VERSION` (not a
 * PostgreSQL data directory: PGlite would fail slowly and obscurely). A missing or empty directory is created.
 */
async function checkDataDir(dataDir: string, what: string): Promise<void> {
  let entries: string[];
  try {
    if (!(await stat(dataDir)).isDirectory()) throw openError(what, new Error('the path is not a directory'));
    entries = await readdir(dataDir);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return;
    throw openError(what, error);
  }
  if (entries.length > 0 && !entries.includes('PG_VERSION')) {
    throw openError(
      what,
      new Error(
        `the directory is not empty and holds no PostgreSQL data (${join(dataDir, 'PG_VERSION')} is missing)`,
      ),
    );
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
  return new Error(
    `${message} (is it a PGlite data directory of a compatible version, not used by another process?)`,
    { cause: error },
  );
}
