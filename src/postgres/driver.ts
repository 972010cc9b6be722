/**
 * The little of a PostgreSQL client the SQL job store needs, so that one store runs on `pg` and on PGlite.
 * @module
 */

/** A row as the driver returns it: column name → value. */
export type Row = Record<string, unknown>;

/** Runs SQL with `$1`-style parameters. */
export interface SqlClient {
  /** Runs one statement and returns its rows. */
  query(text: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A connection to a PostgreSQL database (a pool, or an embedded PGlite). */
export interface SqlDriver extends SqlClient {
  /** Runs `work` in one transaction on one connection: committed if it resolves, rolled back if it throws. */
  transaction<T>(work: (client: SqlClient) => Promise<T>): Promise<T>;
  /** Releases the connection (or pool) if the driver opened it. */
  close(): Promise<void>;
}
