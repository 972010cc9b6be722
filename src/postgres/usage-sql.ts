/**
 * Usage counts and the fleet's limit counters (daily quota, request rate) in the job store's database: the
 * {@link UsageStore} and {@link LimitStore} of `pgliteStore()` and `postgresStore()`. Every write is one statement
 * whose row lock makes it atomic across API nodes.
 * @module
 */
import { dayOf, type LimitStore, type UsageCount, type UsageKind, type UsageStore } from '../bulk/usage.js';
import type { Status } from '../result.js';
import type { SqlClient } from './driver.js';
import { num } from './rows.js';

/** Adds `counts` to the usage table of schema `s` in one statement (duplicates summed, rows in a fixed order). */
export async function insertUsage(
  client: SqlClient,
  s: string,
  counts: readonly UsageCount[],
): Promise<void> {
  const summed = new Map<string, UsageCount>();
  for (const count of counts) {
    if (!(count.count > 0)) continue;
    const key = `${count.tenant}\u0000${count.day}\u0000${count.kind}\u0000${count.status}`;
    const held = summed.get(key);
    summed.set(key, held === undefined ? count : { ...held, count: held.count + count.count });
  }
  if (summed.size === 0) return;
  // One order for every writer, so that two transactions never wait for each other's rows in a circle.
  const rows = [...summed.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  await client.query(
    `INSERT INTO ${s}.usage AS u (tenant, day, kind, status, count)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
     ON CONFLICT (tenant, day, kind, status) DO UPDATE SET count = u.count + excluded.count`,
    [
      rows.map((row) => row.tenant),
      rows.map((row) => row.day),
      rows.map((row) => row.kind),
      rows.map((row) => row.status),
      rows.map((row) => row.count),
    ],
  );
}

/**
 * Adds `added` (final results per status, just written) to `owner`'s bulk usage of the UTC day of `nowMs`, in the
 * caller's transaction (a fleet's chunk commit). A job without owner counts for nobody.
 */
export async function insertBulkUsage(
  client: SqlClient,
  s: string,
  owner: string | null,
  nowMs: number,
  added: Partial<Record<Status, number>>,
): Promise<void> {
  if (owner === null) return;
  const day = dayOf(nowMs);
  await insertUsage(
    client,
    s,
    Object.entries(added).map(([status, count]) => ({
      tenant: owner,
      day,
      kind: 'bulk' as const,
      status: status as Status,
      count,
    })),
  );
}

/** The usage and limit operations on schema `s` of `client`. */
export function usageOperations(client: SqlClient, s: string): UsageStore & LimitStore {
  async function quotaUsed(key: string, day: string): Promise<number> {
    const rows = await client.query(`SELECT used FROM ${s}.quota WHERE key = $1 AND day = $2`, [key, day]);
    return rows.length === 0 ? 0 : num(rows[0]!.used);
  }

  return {
    async addUsage(counts) {
      await insertUsage(client, s, counts);
    },
    async readUsage(tenant, from, to) {
      const rows = await client.query(
        `SELECT day, kind, status, count FROM ${s}.usage WHERE tenant = $1 AND day >= $2 AND day <= $3`,
        [tenant, from, to],
      );
      return rows.map((row) => ({
        tenant,
        day: String(row.day),
        kind: row.kind as UsageKind,
        status: row.status as Status,
        count: num(row.count),
      }));
    },
    async reserveQuota(key, day, units, limit) {
      if (units > limit) return { granted: false, used: await quotaUsed(key, day) };
      const rows = await client.query(
        `INSERT INTO ${s}.quota AS q (key, day, used) VALUES ($1, $2, $3::bigint)
         ON CONFLICT (key, day) DO UPDATE SET used = q.used + excluded.used WHERE q.used + excluded.used <= $4::bigint
         RETURNING used`,
        [key, day, units, limit],
      );
      if (rows.length > 0) return { granted: true, used: num(rows[0]!.used) };
      return { granted: false, used: await quotaUsed(key, day) };
    },
    async releaseQuota(key, day, units) {
      await client.query(
        `UPDATE ${s}.quota SET used = greatest(0, used - $3::bigint) WHERE key = $1 AND day = $2`,
        [key, day, units],
      );
    },
    quotaUsed,
    async takeToken(key, ratePerSecond, burst, nowMs) {
      const refilled = `least($3::float8, b.tokens + greatest(0, $4::bigint - b.updated_at) * $2::float8 / 1000.0)`;
      const rows = await client.query(
        `INSERT INTO ${s}.rate_buckets AS b (key, tokens, updated_at, allowed)
         VALUES ($1, $3::float8 - 1, $4::bigint, $3::float8 >= 1)
         ON CONFLICT (key) DO UPDATE SET
           tokens = CASE WHEN ${refilled} >= 1 THEN ${refilled} - 1 ELSE ${refilled} END,
           allowed = ${refilled} >= 1,
           updated_at = greatest(b.updated_at, $4::bigint)
         RETURNING tokens, allowed`,
        [key, ratePerSecond, burst, Math.floor(nowMs)],
      );
      const row = rows[0]!;
      return { allowed: row.allowed === true, tokens: Number(row.tokens) };
    },
  };
}
