/**
 * What the Usage panel shows of `GET /v1/usage`: today's and the range's counts per status, and one row per day.
 * @module
 */
import type { Result } from './types.js';
import { STATUSES } from './words.js';

/** Counts by status. */
export type StatusCounts = Readonly<Record<Result['status'], number>>;

/** The usage of a day or of the range, as `GET /v1/usage` answers it. */
export interface UsageCounts {
  readonly single: StatusCounts;
  readonly bulk: StatusCounts;
  readonly total: number;
}

/** `GET /v1/usage`'s answer. */
export interface Usage {
  readonly from: string;
  readonly to: string;
  readonly days: readonly (UsageCounts & { readonly date: string })[];
  readonly totals: UsageCounts;
  readonly quota: {
    readonly day: string;
    readonly limit: number;
    readonly used: number;
    readonly remaining: number;
  } | null;
}

/** One row of the panel's tables: a label, the count of each status (single and bulk together), the total. */
export interface UsageRow {
  readonly label: string;
  readonly counts: readonly number[];
  readonly single: number;
  readonly bulk: number;
  readonly total: number;
}

function sum(counts: StatusCounts): number {
  return STATUSES.reduce((total, status) => total + (counts[status] ?? 0), 0);
}

/** The row of `usage` labelled `label`: each status of {@link STATUSES}, single and bulk added. */
export function usageRow(label: string, usage: UsageCounts | undefined): UsageRow {
  if (usage === undefined) return { label, counts: STATUSES.map(() => 0), single: 0, bulk: 0, total: 0 };
  return {
    label,
    counts: STATUSES.map((status) => (usage.single[status] ?? 0) + (usage.bulk[status] ?? 0)),
    single: sum(usage.single),
    bulk: sum(usage.bulk),
    total: usage.total,
  };
}

/** Today's row, the range's row and one row per day with usage, newest first. */
export function usageView(usage: Usage): { today: UsageRow; range: UsageRow; days: UsageRow[] } {
  const today = usage.days.find((day) => day.date === usage.to);
  return {
    today: usageRow(`Today (${usage.to})`, today),
    range: usageRow(`${usage.from} to ${usage.to}`, usage.totals),
    days: [...usage.days].reverse().map((day) => usageRow(day.date, day)),
  };
}

/** The quota in words, or `null` when the key has none. */
export function quotaWords(quota: Usage['quota']): string | null {
  if (quota === null) return null;
  return `Daily quota: ${quota.used.toLocaleString('en')} of ${quota.limit.toLocaleString('en')} addresses used today (UTC), ${quota.remaining.toLocaleString('en')} left.`;
}
