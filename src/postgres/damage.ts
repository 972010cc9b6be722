/**
 * The check a SQL job store runs when it opens: every `complete` job must have one readable result per position.
 * A data directory whose results relation was truncated (a disk that filled, a copy taken while the server ran)
 * would otherwise open as healthy, and its downloads would stop part-way.
 * @module
 */
import type { StoreDamage } from '../bulk/types.js';
import type { SqlClient } from './driver.js';
import { num } from './rows.js';

/**
 * The damage of the store in `schema`: each `complete` job whose count of stored results differs from its total,
 * or whose results cannot be counted or its last one read. Cheap: per job one count over the results index and
 * one row read, never the results themselves. A failure to list the jobs is damage of the store as a whole
 * (`jobId` `null`).
 */
export async function findDamage(client: SqlClient, schema: string): Promise<StoreDamage[]> {
  let jobs: { id: string; total: number }[];
  try {
    const rows = await client.query(`SELECT id, total FROM ${schema}.jobs WHERE status = 'complete'`);
    jobs = rows.map((row) => ({ id: String(row.id), total: num(row.total) }));
  } catch (error) {
    return [{ jobId: null, problem: `the jobs cannot be read: ${messageOf(error)}` }];
  }
  const damage: StoreDamage[] = [];
  for (const { id, total } of jobs) {
    try {
      const [row] = await client.query(
        `SELECT (SELECT count(*) FROM ${schema}.results WHERE job_id = $1) AS stored,
           (SELECT length(result) FROM ${schema}.results WHERE job_id = $1 AND position = $2) AS last`,
        [id, total - 1],
      );
      const stored = num(row?.stored);
      if (stored !== total) {
        damage.push({ jobId: id, problem: `complete with ${total} results, ${stored} stored` });
      } else if (total > 0 && row?.last === null) {
        damage.push({ jobId: id, problem: `complete with ${total} results, the last one missing` });
      }
    } catch (error) {
      damage.push({ jobId: id, problem: `complete, its results cannot be read: ${messageOf(error)}` });
    }
  }
  return damage;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
