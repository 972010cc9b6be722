/**
 * `GET /v1/usage?from=YYYY-MM-DD&to=YYYY-MM-DD`: the caller's usage per UTC day (single verifications and bulk
 * addresses, by status), with its daily quota when its key has one.
 * @module
 */
import { addDays, dayOf, dayStart, USAGE_KINDS, type UsageCount, zeroStatusCounts } from '../bulk/usage.js';
import type { Status } from '../result.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';
import { keyQuotaOf, limitKeyOf } from './key-limits.js';
import { queryParam, rejectUnknownParams } from './params.js';
import { USAGE_RANGE } from './usage-range.js';

/** The usage of one day (or of a range) on the wire: counts by status per kind, and their sum. */
export interface WireUsage {
  readonly single: Record<Status, number>;
  readonly bulk: Record<Status, number>;
  readonly total: number;
}

function emptyUsage(): { single: Record<Status, number>; bulk: Record<Status, number>; total: number } {
  return { single: zeroStatusCounts(), bulk: zeroStatusCounts(), total: 0 };
}

/** A `from` / `to` parameter: a real `YYYY-MM-DD` date, or `fallback` when absent. */
function dayParam(value: string | null, name: string, fallback: string): string {
  if (value === null) return fallback;
  if (dayStart(value) === undefined) {
    throw new HttpError(
      'invalid_request',
      `${name} must be a date as YYYY-MM-DD (a real UTC day), got ${JSON.stringify(value.slice(0, 32))}`,
    );
  }
  return value;
}

/** The days between `from` and `to`, both included. */
function daysBetween(from: string, to: string): number {
  return Math.round(((dayStart(to) as number) - (dayStart(from) as number)) / 86_400_000) + 1;
}

/** Sums `counts` per day and over the range; days without usage are left out. */
export function summarize(counts: readonly UsageCount[]): {
  days: (WireUsage & { date: string })[];
  totals: WireUsage;
} {
  const byDay = new Map<string, ReturnType<typeof emptyUsage>>();
  const totals = emptyUsage();
  for (const count of counts) {
    if (!USAGE_KINDS.includes(count.kind) || !(count.status in totals.single)) continue;
    let day = byDay.get(count.day);
    if (day === undefined) {
      day = emptyUsage();
      byDay.set(count.day, day);
    }
    day[count.kind][count.status] += count.count;
    day.total += count.count;
    totals[count.kind][count.status] += count.count;
    totals.total += count.count;
  }
  const days = [...byDay.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([date, usage]) => ({ date, ...usage }));
  return { days, totals };
}

/**
 * `GET /v1/usage` → `{ from, to, days, totals, quota }`. `to` defaults to today (UTC), `from` to 29 days before
 * `to`; at most {@link USAGE_RANGE}.maxDays days; a bad date, a reversed or too long range, or an unknown parameter
 * is a 400. The counts this node still holds in memory are written first, so a caller sees its own requests.
 */
export const getUsage: Operation = async (context) => {
  const { query, services, principal } = context;
  rejectUnknownParams(query, ['from', 'to']);
  const now = services.keyLimits.clock();
  const to = dayParam(queryParam(query, 'to'), 'to', dayOf(now));
  const from = dayParam(queryParam(query, 'from'), 'from', addDays(to, -(USAGE_RANGE.defaultDays - 1)));
  if (from > to) throw new HttpError('invalid_request', `from (${from}) must not be after to (${to})`);
  const span = daysBetween(from, to);
  if (span > USAGE_RANGE.maxDays) {
    throw new HttpError(
      'invalid_request',
      `the range from ${from} to ${to} covers ${span} days; ask for at most ${USAGE_RANGE.maxDays} at a time`,
    );
  }
  const tenant = context.tenant as string;
  // What is still in memory here is written first; a failure leaves it for the meter's next flush.
  await services.usage.meter.flush().catch(() => undefined);
  let counts: UsageCount[];
  try {
    counts = await services.usage.store.readUsage(tenant, from, to);
  } catch (error) {
    throw new HttpError('service_unavailable', 'the usage store does not answer; retry shortly', {
      cause: error,
    });
  }
  const limit = principal === undefined ? undefined : keyQuotaOf(principal);
  let quota: { limit: number; used: number; remaining: number; day: string } | null = null;
  if (principal !== undefined && limit !== undefined) {
    const day = dayOf(now);
    let used: number;
    try {
      used = await services.keyLimits.store.quotaUsed(limitKeyOf(principal), day);
    } catch (error) {
      throw new HttpError('service_unavailable', 'the quota counters do not answer; retry shortly', {
        cause: error,
      });
    }
    quota = { day, limit, used, remaining: Math.max(0, limit - used) };
  }
  return context.json(200, { from, to, ...summarize(counts), quota });
};
