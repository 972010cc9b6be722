/**
 * `postgresStore`: the durable job store on a PostgreSQL server, through the `pg` package.
 * @module
 */
import type { Pool, PoolClient } from 'pg';
import { OptionsError } from '../errors.js';
import type { SqlDriver } from './driver.js';
import { observedDriver } from './observed-driver.js';
import { openError, redactUrl } from './open-error.js';
import { resolveSqlOptions } from './options.js';
import { openSqlStore, type SqlJobStore, type SqlStoreOptions } from './sql-store.js';

/** Options of {@link postgresStore}: a connection string, or a `pg` pool of the caller's. */
export type PostgresStoreOptions = SqlStoreOptions &
  (
    | {
        /**
         * `postgres://user:password@host:5432/database`; the store makes a pool of `poolSize` connections. A
         * `schema` query parameter (`...?schema=jobs`) chooses the schema when the `schema` option is absent.
         */
        readonly connectionString: string;
        /** Connections in the pool the store makes. @default 4 */
        readonly poolSize?: number;
        readonly pool?: undefined;
      }
    | {
        /** A `pg.Pool` of the caller's; `close()` leaves it open. */
        readonly pool: Pool;
        readonly connectionString?: undefined;
      }
  );

function pgDriver(pool: Pool, owns: boolean): SqlDriver {
  return {
    async query(text, params) {
      return (await pool.query(text, params as unknown[] | undefined)).rows;
    },
    async transaction(work) {
      const client: PoolClient = await pool.connect();
      // While checked out, a client has no listener of the pool's: a connection lost between two statements of
      // the transaction (the server crashed) would be an uncaught 'error' event. The next statement reports it.
      const lost = () => {};
      client.on('error', lost);
      try {
        await client.query('BEGIN');
        const value = await work({
          async query(text, params) {
            return (await client.query(text, params as unknown[] | undefined)).rows;
          },
        });
        await client.query('COMMIT');
        return value;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.removeListener('error', lost);
        client.release();
      }
    },
    async close() {
      if (owns) await pool.end();
    },
  };
}

/**
 * Opens a durable job store on a PostgreSQL server (`mailvet serve --store postgres://...`). Needs the optional
 * peer dependency `pg`. Throws `store_unavailable` naming the problem (refused connection, wrong password,
 * missing database) and `store_error` when the schema is newer than this mailvet.
 * @example
 * const store = await postgresStore({ connectionString: 'postgres://postgres@127.0.0.1:5432/mailvet' });
 */
export async function postgresStore(options: PostgresStoreOptions): Promise<SqlJobStore> {
  if (typeof options !== 'object' || options === null) {
    throw new OptionsError('options', 'must be an object with connectionString or pool');
  }
  const schemaParam =
    options.pool === undefined && options.schema === undefined
      ? schemaOfUrl(options.connectionString)
      : undefined;
  const resolved = resolveSqlOptions(
    schemaParam === undefined ? options : { ...options, schema: schemaParam },
  );
  let pool: Pool;
  let what: string;
  if (options.pool !== undefined) {
    pool = options.pool;
    what = 'the given pg pool';
  } else {
    const { connectionString } = options;
    if (typeof connectionString !== 'string' || !/^postgres(ql)?:\/\//.test(connectionString)) {
      throw new OptionsError('connectionString', 'must be a postgres:// or postgresql:// URL');
    }
    const poolSize = options.poolSize ?? 4;
    if (!Number.isInteger(poolSize) || poolSize < 1 || poolSize > 100) {
      throw new OptionsError('poolSize', 'must be an integer 1-100');
    }
    what = `PostgreSQL at ${redactUrl(connectionString)}`;
    let PgPool: typeof Pool;
    try {
      PgPool = (await import('pg')).default.Pool;
    } catch (error) {
      throw openError(what, new Error('the package pg is not installed (npm install pg)', { cause: error }));
    }
    pool = new PgPool({
      connectionString: withoutSchema(connectionString),
      max: poolSize,
      connectionTimeoutMillis: 10_000,
    });
    // An idle client's error (the server restarted) must not crash the process; the next query reports it.
    pool.on('error', () => {});
  }
  const driver = observedDriver(pgDriver(pool, options.pool === undefined), resolved.onQuery);
  try {
    return await openSqlStore(driver, {
      schema: resolved.schema,
      leaseMs: resolved.leaseMs,
      ownsDriver: options.pool === undefined,
      exclusive: false,
      asyncCommit: true,
      checkDamage: false,
    });
  } catch (error) {
    await driver.close().catch(() => {});
    throw openError(what, error);
  }
}

/** The `schema` query parameter of a connection string, if any. */
function schemaOfUrl(connectionString: unknown): string | undefined {
  if (typeof connectionString !== 'string') return undefined;
  try {
    return new URL(connectionString).searchParams.get('schema') ?? undefined;
  } catch {
    return undefined;
  }
}

/** The connection string without its `schema` parameter, which is ours, not the server's. */
function withoutSchema(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (!url.searchParams.has('schema')) return connectionString;
    url.searchParams.delete('schema');
    return url.toString();
  } catch {
    return connectionString;
  }
}
