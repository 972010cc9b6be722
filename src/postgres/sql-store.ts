/**
 * The durable {@link FleetJobStore} on PostgreSQL SQL, shared by the `pg` and PGlite drivers.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { FleetJobStore } from '../bulk/runner.js';
import type { JobRecord, ResultCommit, StoredRetry } from '../bulk/types.js';
import type { LimitStore, UsageStore } from '../bulk/usage.js';
import { MailvetError } from '../errors.js';
import { STATUSES, type Status, type VerificationResult } from '../result.js';
import { TurnBudget } from '../turn.js';
import { type ApiKeyHolder, sqlApiKeys } from './api-keys.js';
import { findDamage } from './damage.js';
import type { Row, SqlClient, SqlDriver } from './driver.js';
import { fleetOperations } from './fleet-sql.js';
import { type KnownResultsHost, type StoreKnownResults, sqlKnownResults } from './known-results.js';
import type { QueryObserver } from './observed-driver.js';
import {
  INPUT_CHUNK,
  inputChunk,
  insertInputsSql,
  num,
  parsedInSlices,
  recordOfRow,
  resultColumnsInSlices,
  sourceColumn,
  texts,
} from './rows.js';
import { migrate } from './schema.js';
import { usageOperations } from './usage-sql.js';
import { webhookOperations } from './webhook-sql.js';

/** Options shared by both drivers. */
export interface SqlStoreOptions {
  /** PostgreSQL schema that holds the tables (created if missing). @default 'mailvet' */
  readonly schema?: string;
  /**
   * How long this store's lease on a job lasts without renewal, in milliseconds (1,000-3,600,000). A manager
   * renews it every third of it; when a process dies, another manager takes its jobs over after at most this.
   * @default 30000
   */
  readonly leaseMs?: number;
  /**
   * Told about each statement the store runs (its duration in milliseconds, and whether it failed): where the
   * store's round-trip and error metrics come from. @default none
   */
  readonly onQuery?: QueryObserver;
}

const NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::bigint`;
const UNFINISHED = `status IN ('queued', 'processing')`;
/**
 * The longest stretch of `putInputs`, `putResults`, `getInputs` or `getResultsAt` work without an event-loop turn, in
 * milliseconds.
 */
const INPUT_SLICE_MS = 5;
/** SQLSTATE of a duplicate key. */
const UNIQUE_VIOLATION = '23505';

/** The SQL job store: jobs (durable, and of a worker fleet), usage counts and the fleet's limit counters. */
export type SqlJobStore = FleetJobStore & UsageStore & LimitStore & ApiKeyHolder & KnownResultsHost;

/** Thrown when another store instance holds the job's lease (code `lease_lost`). */
export class LeaseLostError extends MailvetError {
  override name = 'LeaseLostError';

  constructor(id: string) {
    super(
      'lease_lost',
      `job ${JSON.stringify(id)} is held by another mailvet process (or was deleted); it processes the job now`,
    );
  }
}

function missingJob(id: string): Error {
  return new RangeError(`no job ${JSON.stringify(id)} in the store`);
}

/**
 * Opens the SQL job store on `driver`: migrates the schema, checks the complete jobs' results if asked
 * ({@link findDamage}: the store's `damage`), then returns the store. Used by `pgliteStore` and
 * `postgresStore`; the store closes the driver on `close()` when `ownsDriver` is set.
 */
export async function openSqlStore(
  driver: SqlDriver,
  options: {
    readonly schema: string;
    readonly leaseMs: number;
    readonly ownsDriver: boolean;
    /** No other process can use the database (PGlite on its own directory): leases left by a crash are void. */
    readonly exclusive: boolean;
    /**
     * Commit results without waiting for the disk (`synchronous_commit = off`). Only for a server, whose WAL
     * writer flushes them within a fraction of a second; PGlite has no WAL writer, so there they would wait for a
     * checkpoint and a killed process would lose them.
     */
    readonly asyncCommit: boolean;
    /**
     * Check the complete jobs' results at open ({@link findDamage}): for a data directory of files this store
     * alone uses (PGlite), where a truncated file would otherwise go unnoticed. It counts every stored result
     * (measured: 2,000,000 in 1,000 jobs took 1.7-3 s on a PostgreSQL server on 2 loaded cores), so a server,
     * which guards its own files and may be opened by many processes, is not checked.
     */
    readonly checkDamage: boolean;
  },
): Promise<SqlJobStore> {
  const s = options.schema;
  await migrate(driver, s);
  if (options.exclusive) {
    await driver.query(
      `UPDATE ${s}.jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner IS NOT NULL`,
    );
  }
  const damage = options.checkDamage ? await findDamage(driver, s) : [];
  const node = randomUUID();
  const leaseMs = options.leaseMs;

  /**
   * The epoch (fencing token) of each job this store holds: set when it creates or takes a job, bumped in the
   * database by every take-over. A write must match it, so a process that lost a job (its lease expired while it
   * stalled, and another took the job over, even if that one has finished it since) can no longer write it.
   */
  const held = new Map<string, number>();

  const LEASE = `CASE WHEN $14::text IS NULL THEN NULL ELSE ${NOW_MS} + $15 END`;
  /** Updates a job this store holds: `$1`-`$15` its {@link columns}, `$16` the epoch it must still have. */
  const UPDATE_HELD = `UPDATE ${s}.jobs SET name = $3, status = $4, armed = $5, total = $6, completed = $7,
      counts = $8::jsonb, started_at = $10, completed_at = $11, error = $12::jsonb, greylist_delays_ms = $13::jsonb,
      lease_owner = $14, lease_until = ${LEASE}
    WHERE id = $1 AND epoch = $16 AND owner IS NOT DISTINCT FROM $2 AND created_at = $9`;
  // owner and created_at never change: checking them costs nothing and keeps every parameter typed

  /** The columns of `record`, as `$2`-`$15` of the statements below (`$1` is the id). */
  function columns(record: JobRecord): unknown[] {
    const finished = record.status === 'complete' || record.status === 'failed';
    return [
      record.id,
      record.owner,
      record.name,
      record.status,
      record.armed ?? false,
      record.total,
      record.completed,
      JSON.stringify(record.counts),
      record.createdAt,
      record.startedAt,
      record.completedAt,
      record.error === null ? null : JSON.stringify(record.error),
      JSON.stringify(record.greylistDelaysMs),
      finished ? null : node, // $14: the lease (none once finished)
      leaseMs,
    ];
  }

  /**
   * Saves `record`. A job this store holds is updated if its epoch still matches; any other job is created, or
   * taken if no one holds it (a finished job reopened by an add). Throws `lease_lost` otherwise (another store
   * holds it, or it was deleted).
   */
  async function saveRecord(client: SqlClient, record: JobRecord): Promise<void> {
    const epoch = held.get(record.id);
    if (epoch !== undefined) {
      const rows = await client.query(`${UPDATE_HELD} RETURNING id`, [...columns(record), epoch]);
      if (rows.length === 0) throw new LeaseLostError(record.id);
      return;
    }
    const rows = await client.query(
      `INSERT INTO ${s}.jobs (id, owner, name, status, armed, total, completed, counts, created_at, started_at,
         completed_at, error, greylist_delays_ms, lease_owner, lease_until)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, $12::jsonb, $13::jsonb, $14, ${LEASE})
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, status = excluded.status, armed = excluded.armed,
         total = excluded.total, completed = excluded.completed, counts = excluded.counts,
         started_at = excluded.started_at, completed_at = excluded.completed_at, error = excluded.error,
         greylist_delays_ms = excluded.greylist_delays_ms, lease_owner = excluded.lease_owner,
         lease_until = excluded.lease_until, epoch = ${s}.jobs.epoch + 1
       WHERE ${s}.jobs.lease_owner IS NULL
       RETURNING epoch`,
      columns(record),
    );
    if (rows.length === 0) throw new LeaseLostError(record.id);
    held.set(record.id, num(rows[0]!.epoch));
  }

  /** Inserts results: `$1` the job, then its positions, statuses and texts, each joined into one text. */
  const insertResults = (first: number) =>
    `INSERT INTO ${s}.results (job_id, position, status, result)
     SELECT $1, * FROM unnest(string_to_array($${first}, ',')::integer[], string_to_array($${first + 1}, ','),
       string_to_array($${first + 2}, E'\n'))`;
  /** Upserts greylisting retries: `$1` the job, then positions, attempts, due times and result texts. */
  const upsertRetries = (first: number, unless = '') =>
    `INSERT INTO ${s}.retries (job_id, position, attempt, due_at, result)
     SELECT $1, * FROM unnest($${first}::integer[], $${first + 1}::integer[], $${first + 2}::bigint[],
       $${first + 3}::text[]) AS retry(position) ${unless}
     ON CONFLICT (job_id, position) DO UPDATE SET attempt = excluded.attempt, due_at = excluded.due_at,
       result = excluded.result`;
  const deleteRetries = (list: number) =>
    `DELETE FROM ${s}.retries WHERE job_id = $1 AND position = ANY(string_to_array($${list}, ',')::integer[])`;

  /**
   * The commit of a job this store holds, as one statement (one round trip, its own transaction): the record
   * (`$1`-`$16`, fenced by the epoch), the results (`$17`-`$19`), the retries they end and the new ones
   * (`$20`-`$23`, any of them final is skipped). Nothing is written when the epoch no longer matches: the
   * statement then returns `held = 0`. `skipStored` writes only positions without a result.
   */
  const commitHeld = (skipStored: boolean) =>
    `WITH ${options.asyncCommit ? `commit_mode AS (SELECT set_config('synchronous_commit', 'off', true)),` : ''}
       job AS (${UPDATE_HELD} RETURNING id),
       saved AS (${insertResults(17)} WHERE EXISTS (SELECT FROM job) ${skipStored ? 'ON CONFLICT DO NOTHING' : ''}),
       ended AS (${deleteRetries(17)} AND EXISTS (SELECT FROM job)),
       waiting AS (${upsertRetries(
         20,
         `WHERE EXISTS (SELECT FROM job) AND position <> ALL(string_to_array($17, ',')::integer[])`,
       )})
     SELECT (SELECT count(*) FROM job) AS held
       ${options.asyncCommit ? ', (SELECT count(*) FROM commit_mode) AS async' : ''}`;

  async function assertJob(client: SqlClient, id: string): Promise<void> {
    const rows = await client.query(`SELECT 1 FROM ${s}.jobs WHERE id = $1`, [id]);
    if (rows.length === 0) throw missingJob(id);
  }

  async function recount(client: SqlClient, records: JobRecord[]): Promise<JobRecord[]> {
    if (records.length === 0) return records;
    const ids = records.map((record) => record.id);
    const counted = await client.query(
      `SELECT job_id, status, count(*) AS n FROM ${s}.results WHERE job_id = ANY($1::text[]) GROUP BY job_id, status`,
      [ids],
    );
    const totals = await client.query(
      `SELECT job_id, coalesce(sum(cardinality(emails)), 0) AS n FROM ${s}.inputs WHERE job_id = ANY($1::text[]) GROUP BY job_id`,
      [ids],
    );
    const totalOf = new Map(totals.map((row) => [String(row.job_id), num(row.n)]));
    return records.map((record) => {
      const counts = {} as Record<Status, number>;
      for (const status of STATUSES) counts[status] = 0;
      let completed = 0;
      for (const row of counted) {
        if (row.job_id !== record.id) continue;
        counts[row.status as Status] = num(row.n);
        completed += num(row.n);
      }
      return { ...record, counts, completed, total: totalOf.get(record.id) ?? 0 };
    });
  }

  /** The known results handed out: `close()` writes what waits in them before the driver closes. */
  const opened: StoreKnownResults[] = [];

  return {
    durable: true,
    leaseMs,
    damage,
    ...fleetOperations(driver, s),
    ...usageOperations(driver, s),
    ...webhookOperations(driver, s),

    async saveJob(record) {
      await saveRecord(driver, record);
    },

    async putInputs(record, first, emails, rows) {
      if (rows !== undefined && rows.length !== emails.length) {
        throw new RangeError('emails and rows differ in length');
      }
      await driver.transaction(async (client) => {
        // The first addresses create the job; later ones must find it (a deleted job is not brought back).
        await saveRecord(client, record);
        if (rows !== undefined) {
          // The job's header is set by its first rows, never changed after.
          await client.query(`UPDATE ${s}.jobs SET source = $2::jsonb WHERE id = $1 AND source IS NULL`, [
            record.id,
            sourceColumn(record),
          ]);
        }
        // A turn of the event loop between chunks once a slice's time is spent: PGlite runs each statement on
        // this thread, and a large add must not hold it from start to commit.
        const budget = new TurnBudget(INPUT_SLICE_MS);
        for (let at = 0; at < emails.length; at += INPUT_CHUNK) {
          if (at > 0 && budget.spent()) await budget.turn();
          await client.query(
            `${insertInputsSql(s, true)} ON CONFLICT DO NOTHING`,
            inputChunk(record.id, first, at, emails, rows),
          );
        }
      });
    },

    async getRows(id, offset, limit) {
      await assertJob(driver, id);
      const page: (string | undefined)[] = new Array(limit).fill(undefined);
      // Bounded as getInputs is; rows of addresses added without rows are NULL and skipped.
      const found = await driver.query(
        `SELECT first, array_to_json(source_rows)::text AS rows FROM ${s}.inputs
         WHERE job_id = $1 AND first > $4 AND first < $3 AND first + cardinality(emails) > $2
           AND source_rows IS NOT NULL`,
        [id, offset, offset + limit, offset - INPUT_CHUNK],
      );
      for (const row of found) {
        const first = num(row.first);
        const rows = JSON.parse(row.rows as string) as string[];
        const from = Math.max(0, offset - first);
        const to = Math.min(rows.length, offset + limit - first);
        for (let i = from; i < to; i++) page[first + i - offset] = rows[i];
      }
      return page;
    },

    async getInputs(id, offset, limit) {
      const rows = await driver.query(
        // A row holds at most INPUT_CHUNK inputs, so rows starting before `offset - INPUT_CHUNK` end before it:
        // that bound keeps the scan to the rows wanted, without detoasting every earlier row for its cardinality.
        `SELECT first, array_to_json(emails)::text AS emails FROM ${s}.inputs
         WHERE job_id = $1 AND first > $4 AND first < $3 AND first + cardinality(emails) > $2 ORDER BY first`,
        [id, offset, offset + limit, offset - INPUT_CHUNK],
      );
      const inputs: string[] = [];
      // A window is about 2 MiB of addresses: parsed a row (4,096 at most) at a time, a turn once a slice is spent.
      const budget = new TurnBudget(INPUT_SLICE_MS);
      for (const row of rows) {
        if (budget.spent()) await budget.turn();
        const first = num(row.first);
        const emails = JSON.parse(row.emails as string) as string[]; // JSON: parsed natively, unlike text[]
        const from = Math.max(0, offset - first);
        const to = Math.min(emails.length, offset + limit - first);
        for (let i = from; i < to; i++) inputs.push(emails[i]!);
      }
      return inputs;
    },

    async putResults(id, positions, results, commit?: ResultCommit) {
      if (positions.length !== results.length) throw new RangeError('positions and results differ in length');
      // One text per column, split on the server: cheap for the client (built in slices: a commit is 1-4 MiB).
      const { list, statuses, joined } = await resultColumnsInSlices(positions, results, INPUT_SLICE_MS);
      const retries = commit?.retries ?? [];
      const retryColumns = [
        retries.map((retry) => retry.position),
        retries.map((retry) => retry.attempt),
        retries.map((retry) => retry.dueAt),
        texts(retries.map((retry) => retry.result)),
      ];
      const epoch = commit === undefined ? undefined : held.get(commit.record.id);
      if (commit !== undefined && epoch !== undefined) {
        // The manager's path. Results can be redone (a position without one is verified again), so on a server
        // their commits need not wait for the disk: a database crash may lose the last moments of results, never
        // half a commit. A plain INSERT costs about a third less than ON CONFLICT DO NOTHING; a position written
        // twice (a write repeated after a failure) is rare, and then the statement, which wrote nothing, runs
        // again skipping the positions that have a result.
        const params = [...columns(commit.record), epoch, list, statuses, joined, ...retryColumns];
        let rows: Row[];
        try {
          rows = await driver.query(commitHeld(false), params);
        } catch (error) {
          if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
          rows = await driver.query(commitHeld(true), params);
        }
        if (num(rows[0]?.held) === 0) throw new LeaseLostError(id);
        return;
      }
      await driver.transaction(async (client) => {
        if (commit === undefined) await assertJob(client, id);
        else await saveRecord(client, commit.record);
        if (positions.length > 0) {
          await client.query(`${insertResults(2)} ON CONFLICT DO NOTHING`, [id, list, statuses, joined]);
          await client.query(deleteRetries(2), [id, list]);
        }
        if (retries.length > 0) await client.query(upsertRetries(2), [id, ...retryColumns]);
      });
    },

    async getResults(id, offset, limit) {
      await assertJob(driver, id);
      const page: (VerificationResult | undefined)[] = new Array(limit).fill(undefined);
      if (limit === 0) return page;
      const rows = await driver.query(
        `SELECT position, result FROM ${s}.results WHERE job_id = $1 AND position >= $2 AND position < $3`,
        [id, offset, offset + limit],
      );
      for (const row of rows) page[num(row.position) - offset] = JSON.parse(row.result as string);
      return page;
    },

    async getResultsAt(id, positions) {
      await assertJob(driver, id);
      if (positions.length === 0) return [];
      // One index lookup per position: `position = ANY(...)` lets a planner without statistics (a table that
      // grew within the job, before autovacuum analysed it) scan every result of the job instead.
      const rows = await driver.query(
        `SELECT wanted.position, found.result FROM unnest(string_to_array($2, ',')::integer[]) AS wanted(position)
         CROSS JOIN LATERAL (SELECT result FROM ${s}.results WHERE job_id = $1 AND position = wanted.position) AS found`,
        [id, [...new Set(positions)].join(',')],
      );
      const byPosition = new Map<number, string>();
      for (const row of rows) byPosition.set(num(row.position), row.result as string);
      return parsedInSlices(positions, byPosition, INPUT_SLICE_MS);
    },

    async finalPositions(id) {
      const rows = await driver.query(
        `SELECT coalesce(array_to_json(array_agg(position)), '[]')::text AS positions FROM ${s}.results
         WHERE job_id = $1`,
        [id],
      );
      return JSON.parse((rows[0]?.positions as string | undefined) ?? '[]') as number[];
    },

    async getRetries(id): Promise<StoredRetry[]> {
      const rows = await driver.query(
        `SELECT position, attempt, due_at, result FROM ${s}.retries WHERE job_id = $1 ORDER BY due_at, position`,
        [id],
      );
      return rows.map((row) => ({
        position: num(row.position),
        attempt: num(row.attempt),
        dueAt: num(row.due_at),
        result: JSON.parse(row.result as string) as VerificationResult,
      }));
    },

    async deleteJob(id) {
      held.delete(id);
      await driver.transaction(async (client) => {
        // Locked first, so that a fleet worker's commit of results (which locks the row too) cannot slip in between.
        await client.query(`SELECT 1 FROM ${s}.jobs WHERE id = $1 FOR UPDATE`, [id]);
        for (const table of ['results', 'inputs', 'retries']) {
          await client.query(`DELETE FROM ${s}.${table} WHERE job_id = $1`, [id]);
        }
        await client.query(`DELETE FROM ${s}.jobs WHERE id = $1`, [id]);
      });
    },

    async listJobs() {
      const rows = await driver.query(`SELECT * FROM ${s}.jobs ORDER BY seq`);
      return rows.map(recordOfRow);
    },

    async getJob(id) {
      const rows = await driver.query(`SELECT * FROM ${s}.jobs WHERE id = $1`, [id]);
      return rows.length === 0 ? undefined : recordOfRow(rows[0]!);
    },

    async claimJobs() {
      return driver.transaction(async (client) => {
        const rows = await client.query(
          `UPDATE ${s}.jobs SET lease_owner = $1, lease_until = ${NOW_MS} + $2, epoch = epoch + 1
           WHERE ${UNFINISHED} AND NOT fleet AND (lease_owner IS NULL OR (lease_owner <> $1 AND lease_until < ${NOW_MS}))
           RETURNING *`,
          [node, leaseMs],
        );
        for (const row of rows) held.set(String(row.id), num(row.epoch));
        rows.sort((a, b) => num(a.seq) - num(b.seq));
        return recount(client, rows.map(recordOfRow));
      });
    },

    async renewLeases() {
      const rows = await driver.query(
        `UPDATE ${s}.jobs SET lease_until = ${NOW_MS} + $2 WHERE lease_owner = $1 AND ${UNFINISHED} RETURNING id`,
        [node, leaseMs],
      );
      return rows.map((row) => String(row.id));
    },

    async releaseLeases() {
      await driver.query(
        `UPDATE ${s}.jobs SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`,
        [node],
      );
    },

    async ping() {
      await driver.query('SELECT 1');
    },

    apiKeys: sqlApiKeys(driver, s),
    knownResults(knownOptions) {
      const known = sqlKnownResults(driver, s, knownOptions);
      opened.push(known);
      return known;
    },

    async close() {
      // The verdicts still waiting to be written go first, while the driver is open.
      await Promise.all(opened.map((known) => known.close()));
      if (options.ownsDriver) await driver.close();
    },
  };
}
