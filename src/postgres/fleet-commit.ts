/**
 * A fleet worker's commit of one chunk as one statement: results, counts, usage, greylisting retries and the job's
 * completion in a single round trip. The job's row is locked exclusively (which orders the counts of a job's commits
 * and decides its completion exactly once) only for its counters' update at the end of the statement: never across
 * a network round trip, nor while the results are written.
 * @module
 */
import { unretriedResult } from '../bulk/finish.js';
import type { StoredRetry } from '../bulk/types.js';
import { dayOf } from '../bulk/usage.js';
import { STATUSES, type VerificationResult } from '../result.js';
import { texts } from './rows.js';

/**
 * The commit statement on schema `s`. Its steps, each a data-modifying CTE run in the statement's one transaction:
 * - `job`: the job's row with a `FOR KEY SHARE` lock, which commits of other chunks share (so they write their results
 *   side by side) and which the job's exclusive changes (`FOR UPDATE`: fail, finish, append, start) wait for, and
 *   make wait; `live` is the job unless it is `failed` (a deleted or failed job gets nothing).
 * - `finals`: the chunk's final results (`$2`-`$4`), and its greylisted ones made final (`$5`-`$7`, already with
 *   the "not retried" reason) when the job's greylisting delays are empty (it was finished while the chunk ran).
 * - `ins`: the results, `ON CONFLICT DO NOTHING` (a position that has one keeps it, and is not counted again);
 *   `added`: the statuses written now.
 * - `ended`: the retries of positions now final; `waits`: the greylisted positions' retries (`$8`-`$11`) when the
 *   job still retries, unless a later retry is recorded.
 * - `upd`, once the results are in: the job's counts, and `complete` when this commit brings it to its total. Only
 *   this step takes the row's exclusive lock (until the commit ends), so commits of one job queue only for it; it
 *   adds to the row as the last commit left it (READ COMMITTED re-reads a row updated meanwhile), so the one commit
 *   that brings it from below its total to it completes it (`completed_now`): completion is decided exactly once.
 * - `usage`, after `upd` (the job's row, then the usage rows in a fixed order: two commits never wait for each
 *   other in a circle): the owner's usage, counted in the same commit as the results, so exactly once.
 * Returns the job's row after it, with `written_now` and `completed_now`; no row when the job is gone or failed.
 */
export function commitSql(s: string): string {
  return `WITH job AS (
      SELECT id, owner, status, jsonb_array_length(greylist_delays_ms) > 0 AS retrying
      FROM ${s}.jobs WHERE id = $1 AND fleet FOR KEY SHARE
    ),
    live AS (SELECT * FROM job WHERE status <> 'failed'),
    finals AS (
      SELECT u.position, u.status, u.result
        FROM unnest(string_to_array($2, ',')::integer[], string_to_array($3, ','), string_to_array($4, E'\\n'))
          AS u(position, status, result)
      UNION ALL
      SELECT u.position, u.status, u.result
        FROM unnest(string_to_array($5, ',')::integer[], string_to_array($6, ','), string_to_array($7, E'\\n'))
          AS u(position, status, result)
        WHERE NOT (SELECT retrying FROM live)
    ),
    ins AS (
      INSERT INTO ${s}.results (job_id, position, status, result)
      SELECT $1, position, status, result FROM finals WHERE EXISTS (SELECT 1 FROM live)
      ON CONFLICT DO NOTHING RETURNING status
    ),
    added AS (SELECT status, count(*)::bigint AS n FROM ins GROUP BY status),
    ended AS (
      DELETE FROM ${s}.retries
        WHERE job_id = $1 AND EXISTS (SELECT 1 FROM live) AND position IN (SELECT position FROM finals)
    ),
    waits AS (
      INSERT INTO ${s}.retries (job_id, position, attempt, due_at, result)
      SELECT $1, r.* FROM unnest($8::integer[], $9::integer[], $10::bigint[], $11::text[])
        AS r(position, attempt, due_at, result)
        WHERE (SELECT retrying FROM live)
          AND NOT EXISTS (SELECT 1 FROM ${s}.results x WHERE x.job_id = $1 AND x.position = r.position)
      ON CONFLICT (job_id, position) DO UPDATE SET attempt = excluded.attempt, due_at = excluded.due_at,
        result = excluded.result WHERE ${s}.retries.attempt <= excluded.attempt
    ),
    upd AS (
      UPDATE ${s}.jobs j SET
        completed = j.completed + w.n,
        counts = (SELECT jsonb_object_agg(k.key, coalesce((j.counts ->> k.key)::bigint, 0)
            + coalesce((SELECT a.n FROM added a WHERE a.status = k.key), 0))
          FROM (SELECT jsonb_object_keys(j.counts) UNION SELECT unnest($12::text[]) UNION SELECT status FROM added)
            AS k(key)),
        status = CASE WHEN j.status = 'processing' AND j.completed + w.n >= j.total THEN 'complete' ELSE j.status END,
        completed_at = CASE WHEN j.status = 'processing' AND j.completed + w.n >= j.total THEN $14::bigint
          ELSE j.completed_at END
      FROM live, (SELECT coalesce(sum(n), 0)::integer AS n FROM added) w
      WHERE j.id = live.id
      RETURNING j.*, w.n AS written_now, j.status = 'complete' AND j.completed - w.n < j.total AS completed_now
    ),
    usage AS (
      INSERT INTO ${s}.usage AS u (tenant, day, kind, status, count)
      SELECT upd.owner, $13, 'bulk', added.status, added.n FROM added, upd
        WHERE upd.owner IS NOT NULL ORDER BY added.status
      ON CONFLICT (tenant, day, kind, status) DO UPDATE SET count = u.count + excluded.count
    )
    SELECT * FROM upd`;
}

/**
 * The parameters of {@link commitSql}: job `id`, the final results at `positions`, and the greylisted `waits` (as
 * retries, and as final "not retried" results in case the job was finished meanwhile), at `now`.
 */
export function commitParams(
  id: string,
  positions: readonly number[],
  results: readonly VerificationResult[],
  waits: readonly StoredRetry[],
  now: number,
): unknown[] {
  const unretried = waits.map((wait) => unretriedResult(wait.result, wait.dueAt));
  return [
    id,
    positions.join(','),
    results.map((result) => result.status).join(','),
    texts(results).join('\n'),
    waits.map((wait) => wait.position).join(','),
    unretried.map((result) => result.status).join(','),
    texts(unretried).join('\n'),
    waits.map((wait) => wait.position),
    waits.map((wait) => wait.attempt),
    waits.map((wait) => wait.dueAt),
    texts(waits.map((wait) => wait.result)),
    STATUSES,
    dayOf(now),
    now,
  ];
}
