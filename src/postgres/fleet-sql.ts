/**
 * The statements of a worker fleet's jobs ({@link FleetJobStore}): no lease, results and counts written by the
 * workers in one transaction under the job's row lock, completion decided there exactly once.
 * @module
 */
import { unretriedResult } from '../bulk/finish.js';
import type { FleetJobStore } from '../bulk/runner.js';
import type { JobRecord } from '../bulk/types.js';
import { STATUSES, type Status, type VerificationResult } from '../result.js';
import type { WebhookEventType } from '../webhooks/log.js';
import type { SqlClient, SqlDriver } from './driver.js';
import { commitParams, commitSql } from './fleet-commit.js';
import {
  INPUT_CHUNK,
  inputChunk,
  insertInputsSql,
  num,
  numOrNull,
  recordOfRow,
  sourceColumn,
  texts,
} from './rows.js';
import { insertBulkUsage } from './usage-sql.js';

/** The fleet's part of the SQL store: the methods of {@link FleetJobStore} that the durable store lacks. */
export type FleetOperations = Pick<
  FleetJobStore,
  | 'fleetCreate'
  | 'fleetAppend'
  | 'fleetStart'
  | 'fleetUnqueued'
  | 'fleetAhead'
  | 'fleetQueued'
  | 'fleetProcessing'
  | 'fleetState'
  | 'fleetCommit'
  | 'fleetOverdue'
  | 'fleetWaiting'
  | 'fleetFail'
  | 'fleetFinish'
  | 'fleetSetWebhook'
  | 'fleetWebhook'
>;

/**
 * The fleet statements on schema `s` of `driver`. A worker's commit waits for the disk (synchronous commit, unlike
 * the durable store's result batches): the chunk is acknowledged on the queue right after it, so a commit that a
 * database crash could still lose would be a chunk that nobody verifies again.
 */
export function fleetOperations(driver: SqlDriver, s: string): FleetOperations {
  async function lock(client: SqlClient, id: string): Promise<JobRecord | undefined> {
    const rows = await client.query(`SELECT * FROM ${s}.jobs WHERE id = $1 AND fleet FOR UPDATE`, [id]);
    return rows.length === 0 ? undefined : recordOfRow(rows[0]!);
  }

  async function save(client: SqlClient, record: JobRecord): Promise<JobRecord> {
    const rows = await client.query(
      `UPDATE ${s}.jobs SET status = $2, armed = $3, total = $4, completed = $5, counts = $6::jsonb,
         started_at = $7, completed_at = $8 WHERE id = $1 RETURNING *`,
      [
        record.id,
        record.status,
        record.armed ?? false,
        record.total,
        record.completed,
        JSON.stringify(record.counts),
        record.startedAt,
        record.completedAt,
      ],
    );
    return recordOfRow(rows[0]!);
  }

  async function insertInputs(
    client: SqlClient,
    id: string,
    first: number,
    emails: readonly string[],
    rows: readonly string[] | undefined,
  ): Promise<void> {
    if (rows !== undefined && rows.length !== emails.length) {
      throw new RangeError('emails and rows differ in length');
    }
    for (let at = 0; at < emails.length; at += INPUT_CHUNK) {
      await client.query(insertInputsSql(s, false), inputChunk(id, first, at, emails, rows));
    }
  }

  /** `queued → processing` when armed with addresses (the fleet queues them at once). */
  function started(record: JobRecord, now: number): JobRecord {
    if (record.status !== 'queued' || !record.armed || record.total === 0) return record;
    return { ...record, status: 'processing', startedAt: now };
  }

  return {
    async fleetCreate(record, emails, check, rows) {
      await driver.transaction(async (client) => {
        const counted = await client.query(`SELECT count(*) AS n FROM ${s}.jobs WHERE fleet`);
        check(num(counted[0]?.n ?? 0));
        await client.query(
          `INSERT INTO ${s}.jobs (id, owner, name, status, armed, total, completed, counts, created_at, started_at,
             completed_at, error, greylist_delays_ms, source, fresh, fleet)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11, NULL, $12::jsonb, $13::jsonb, $14, true)`,
          [
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
            JSON.stringify(record.greylistDelaysMs),
            sourceColumn(record),
            record.fresh === true,
          ],
        );
        await insertInputs(client, record.id, 0, emails, rows);
      });
    },

    async fleetAppend(id, emails, now, check, source) {
      return driver.transaction(async (client) => {
        const before = await lock(client, id);
        if (before === undefined) return undefined;
        check(before);
        if (emails.length === 0) return before;
        let after: JobRecord = { ...before, total: before.total + emails.length };
        if (after.status === 'complete') after = { ...after, status: 'processing', completedAt: null };
        after = started(after, now);
        await insertInputs(client, id, before.total, emails, source?.rows);
        if (source !== undefined && before.source === null) {
          // The job's header is set by its first rows, never changed after.
          await client.query(`UPDATE ${s}.jobs SET source = $2::jsonb WHERE id = $1`, [
            id,
            sourceColumn({ ...before, source: source.source }),
          ]);
        }
        return save(client, after);
      });
    },

    async fleetStart(id, now, check) {
      return driver.transaction(async (client) => {
        const before = await lock(client, id);
        if (before === undefined) return undefined;
        check(before);
        let after: JobRecord = started({ ...before, armed: true }, now);
        const completed = after.status === 'queued' && after.total === 0;
        if (completed) after = { ...after, status: 'complete', startedAt: now, completedAt: now };
        return { record: await save(client, after), completed };
      });
    },

    async fleetUnqueued(id, limit) {
      const rows = await driver.query(
        `SELECT i.job_id, i.first, array_to_json(i.emails)::text AS emails FROM (
           SELECT i.job_id, i.first, j.seq, row_number() OVER (PARTITION BY i.job_id ORDER BY i.first) AS n
           FROM ${s}.inputs i JOIN ${s}.jobs j ON j.id = i.job_id
           WHERE NOT i.queued AND j.fleet AND j.armed AND j.status = 'processing' AND ($1::text IS NULL OR j.id = $1)
         ) u JOIN ${s}.inputs i ON i.job_id = u.job_id AND i.first = u.first
         WHERE $2::integer IS NULL OR u.n <= $2 ORDER BY u.seq, u.first`,
        [id ?? null, limit ?? null],
      );
      return rows.map((row) => ({
        id: String(row.job_id),
        first: num(row.first),
        emails: JSON.parse(row.emails as string) as string[],
      }));
    },

    async fleetAhead(id) {
      // The inputs rows of a job hold positions 0..total - 1 one after the other, so the queued positions are the
      // total less those of the rows not queued, each row's size told by where the next one starts: no row's
      // addresses are read (summing their arrays' cardinality detoasted every queued row, 60-80 ms for a 1M job,
      // on every feed).
      const rows = await driver.query(
        `SELECT j.total
           - (SELECT coalesce(sum(coalesce((SELECT min(n.first) FROM ${s}.inputs n
                 WHERE n.job_id = u.job_id AND n.first > u.first), j.total) - u.first), 0)
               FROM ${s}.inputs u WHERE u.job_id = j.id AND NOT u.queued)
           - j.completed - (SELECT count(*) FROM ${s}.retries r WHERE r.job_id = j.id) AS ahead
         FROM ${s}.jobs j WHERE j.id = $1`,
        [id],
      );
      return rows.length === 0 ? 0 : Math.max(0, num(rows[0]!.ahead));
    },

    async fleetQueued(id, firsts) {
      if (firsts.length === 0) return;
      await driver.query(
        `UPDATE ${s}.inputs SET queued = true WHERE job_id = $1 AND first = ANY($2::integer[])`,
        [id, firsts],
      );
    },

    async fleetProcessing() {
      const rows = await driver.query(
        `SELECT * FROM ${s}.jobs WHERE fleet AND status = 'processing' ORDER BY seq`,
      );
      return rows.map(recordOfRow);
    },

    async fleetState(id, positions) {
      // One round trip: the job, and which of the positions are final or waiting for a retry. The positions' span
      // (`$3`-`$4`) bounds each index scan: with `= ANY(...)` alone, a planner without statistics of a table that
      // grew within the job read every result of the job for each chunk (a 1M job: 0.3 s a chunk at half way).
      const rows = await driver.query(
        `SELECT j.*,
           (SELECT string_agg(r.position::text, ',') FROM ${s}.results r
             WHERE r.job_id = j.id AND r.position BETWEEN $3 AND $4
               AND r.position = ANY(string_to_array($2, ',')::integer[])) AS final_positions,
           (SELECT string_agg(w.position || ':' || w.attempt, ',') FROM ${s}.retries w
             WHERE w.job_id = j.id AND w.position BETWEEN $3 AND $4
               AND w.position = ANY(string_to_array($2, ',')::integer[])) AS waiting_positions
         FROM ${s}.jobs j WHERE j.id = $1`,
        [id, positions.join(','), ...spanOf(positions)],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const waiting = new Map<number, number>();
      for (const pair of splitList(row.waiting_positions)) {
        const [position, attempt] = pair.split(':');
        waiting.set(Number(position), Number(attempt));
      }
      return {
        record: recordOfRow(row),
        final: new Set(splitList(row.final_positions).map(Number)),
        waiting,
      };
    },

    async fleetCommit(id, finalPositions, finalResults, waits, now) {
      if (finalPositions.length !== finalResults.length)
        throw new RangeError('positions and results differ in length');
      const rows = await driver.query(
        commitSql(s),
        commitParams(id, finalPositions, finalResults, waits, now),
      );
      const row = rows[0];
      if (row === undefined) return undefined; // deleted, or failed: nothing was written
      const written = num(row.written_now);
      const completed = row.completed_now === true;
      return { record: recordOfRow(row), written, completed };
    },

    async fleetFail(id, error, now) {
      return driver.transaction(async (client) => {
        const before = await lock(client, id);
        if (before === undefined || (before.status !== 'queued' && before.status !== 'processing')) {
          return undefined;
        }
        const counts: Record<Status, number> = { ...before.counts };
        for (const status of STATUSES) counts[status] ??= 0;
        // A position waiting for a greylisting retry keeps its last greylisted result, as a final one.
        const kept = await client.query(
          `INSERT INTO ${s}.results (job_id, position, status, result)
           SELECT job_id, position, result::json->>'status', result FROM ${s}.retries WHERE job_id = $1
           ON CONFLICT DO NOTHING RETURNING status`,
          [id],
        );
        for (const row of kept) counts[row.status as Status]++;
        await client.query(`DELETE FROM ${s}.retries WHERE job_id = $1`, [id]);
        const rows = await client.query(
          `UPDATE ${s}.jobs SET status = 'failed', error = $2::jsonb, completed = $3, counts = $4::jsonb,
             completed_at = $5 WHERE id = $1 RETURNING *`,
          [id, JSON.stringify(error), before.completed + kept.length, JSON.stringify(counts), now],
        );
        return recordOfRow(rows[0]!);
      });
    },

    async fleetFinish(id, now, check) {
      return driver.transaction(async (client) => {
        const before = await lock(client, id);
        if (before === undefined) return undefined;
        if (!check(before)) return { record: before, ended: 0, completed: false };
        const waiting = await client.query(
          `SELECT position, due_at, result FROM ${s}.retries WHERE job_id = $1 ORDER BY position`,
          [id],
        );
        const positions = waiting.map((row) => num(row.position));
        const results = waiting.map((row) =>
          unretriedResult(JSON.parse(String(row.result)) as VerificationResult, num(row.due_at)),
        );
        const counts: Record<Status, number> = { ...before.counts };
        for (const status of STATUSES) counts[status] ??= 0;
        let written = 0;
        if (positions.length > 0) {
          const inserted = await client.query(
            `INSERT INTO ${s}.results (job_id, position, status, result)
             SELECT $1, * FROM unnest(string_to_array($2, ',')::integer[], string_to_array($3, ','),
               string_to_array($4, E'\\n')) ON CONFLICT DO NOTHING RETURNING status`,
            [
              id,
              positions.join(','),
              results.map((result) => result.status).join(','),
              texts(results).join('\n'),
            ],
          );
          const added: Partial<Record<Status, number>> = {};
          for (const row of inserted) {
            counts[row.status as Status]++;
            added[row.status as Status] = (added[row.status as Status] ?? 0) + 1;
          }
          written = inserted.length;
          // The ended retries are final results: counted in the owner's usage in this commit, as a chunk's are.
          await insertBulkUsage(client, s, before.owner, now, added);
        }
        await client.query(`DELETE FROM ${s}.retries WHERE job_id = $1`, [id]);
        const done = before.completed + written;
        const completed = before.status === 'processing' && done >= before.total;
        const rows = await client.query(
          `UPDATE ${s}.jobs SET greylist_delays_ms = '[]'::jsonb, completed = $2, counts = $3::jsonb,
             status = $4, completed_at = $5 WHERE id = $1 RETURNING *`,
          [
            id,
            done,
            JSON.stringify(counts),
            completed ? 'complete' : before.status,
            completed ? now : before.completedAt,
          ],
        );
        return { record: recordOfRow(rows[0]!), ended: positions.length, completed };
      });
    },

    async fleetSetWebhook(id, webhook) {
      await driver.query(`UPDATE ${s}.jobs SET webhook = $2::jsonb WHERE id = $1 AND fleet`, [
        id,
        JSON.stringify({ url: webhook.url, events: webhook.events }),
      ]);
    },

    async fleetWebhook(id) {
      const rows = await driver.query(
        `SELECT owner, webhook::text AS webhook FROM ${s}.jobs WHERE id = $1 AND webhook IS NOT NULL`,
        [id],
      );
      const row = rows[0];
      if (row === undefined) return undefined;
      const webhook = JSON.parse(row.webhook as string) as { url: string; events: WebhookEventType[] };
      return { url: webhook.url, events: webhook.events, owner: (row.owner as string | null) ?? null };
    },

    async fleetWaiting(id) {
      const rows = await driver.query(
        `SELECT count(*) AS n, min(due_at) AS next FROM ${s}.retries WHERE job_id = $1`,
        [id],
      );
      return { count: num(rows[0]?.n ?? 0), nextDueAt: numOrNull(rows[0]?.next) };
    },

    async fleetOverdue(before, limit) {
      const rows = await driver.query(
        `SELECT r.job_id, r.position, r.attempt,
           (SELECT i.emails[r.position - i.first + 1] FROM ${s}.inputs i
             WHERE i.job_id = r.job_id AND i.first <= r.position ORDER BY i.first DESC LIMIT 1) AS email
         FROM ${s}.retries r JOIN ${s}.jobs j ON j.id = r.job_id
         WHERE j.fleet AND j.status = 'processing' AND r.due_at < $1
         ORDER BY r.due_at LIMIT $2`,
        [before, limit],
      );
      return rows
        .filter((row) => typeof row.email === 'string')
        .map((row) => ({
          id: String(row.job_id),
          position: num(row.position),
          attempt: num(row.attempt),
          email: row.email as string,
        }));
    },
  };
}

/** The lowest and highest of `positions` (`[0, -1]`, an empty span, for none). */
function spanOf(positions: readonly number[]): [number, number] {
  if (positions.length === 0) return [0, -1];
  let low = positions[0]!;
  let high = low;
  for (const position of positions) {
    if (position < low) low = position;
    else if (position > high) high = position;
  }
  return [low, high];
}

/** The items of a comma-separated list column (`NULL` is none). */
function splitList(value: unknown): string[] {
  return typeof value === 'string' && value !== '' ? value.split(',') : [];
}
