/**
 * Usage and quotas: what each tenant verified per UTC day (single verifications and bulk addresses, by status),
 * and the counters that limit a key for the whole fleet (its daily address quota and its request rate). Two small
 * seams: {@link UsageStore} keeps the counts, {@link LimitStore} takes quota and rate tokens atomically.
 * @module
 */
import { STATUSES, type Status } from '../result.js';

/** How an address was verified: `single` (`GET /v1/verify`) or `bulk` (an address of a bulk job). */
export type UsageKind = 'single' | 'bulk';

/** The kinds of usage, in the order the API lists them. */
export const USAGE_KINDS: readonly UsageKind[] = Object.freeze(['single', 'bulk']);

/** One counter of usage: `count` addresses of `tenant` verified on `day` as `kind` with `status`. */
export interface UsageCount {
  readonly tenant: string;
  /** The UTC day, `YYYY-MM-DD`. */
  readonly day: string;
  readonly kind: UsageKind;
  readonly status: Status;
  readonly count: number;
}

/** The answer to a quota reservation. */
export interface QuotaAnswer {
  /** True when the units were reserved (`used` includes them). */
  readonly granted: boolean;
  /** Units used on that day after the call (without the refused units when not granted). */
  readonly used: number;
}

/** The answer to a rate token request. */
export interface TokenAnswer {
  /** True when a token was taken. */
  readonly allowed: boolean;
  /** Tokens left in the bucket after the call (may be fractional). */
  readonly tokens: number;
}

/** Where usage counts are kept (the job store's database, or memory). */
export interface UsageStore {
  /** Adds `counts` to the stored counters (one write for the whole batch). */
  addUsage(counts: readonly UsageCount[]): Promise<void>;
  /** `tenant`'s counters from day `from` to day `to` (both `YYYY-MM-DD`, inclusive), in any order. */
  readUsage(tenant: string, from: string, to: string): Promise<UsageCount[]>;
}

/** Counters shared by every API node of a fleet: a key's daily quota and its request rate. */
export interface LimitStore {
  /**
   * Reserves `units` (a positive integer) of `key`'s quota on `day` if `used + units <= limit`, atomically: two
   * callers can never both pass the last units.
   */
  reserveQuota(key: string, day: string, units: number, limit: number): Promise<QuotaAnswer>;
  /** Gives back `units` reserved by {@link reserveQuota} for a request that then failed. */
  releaseQuota(key: string, day: string, units: number): Promise<void>;
  /** Units of `key`'s quota used on `day`. */
  quotaUsed(key: string, day: string): Promise<number>;
  /**
   * Takes one token from `key`'s bucket (refilled at `ratePerSecond`, holding at most `burst`) as of `nowMs`, if it
   * has one, atomically.
   */
  takeToken(key: string, ratePerSecond: number, burst: number, nowMs: number): Promise<TokenAnswer>;
}

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The UTC day of `ms` (milliseconds since the epoch), as `YYYY-MM-DD`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The start of UTC day `day` in milliseconds, or `undefined` when `day` is not a real `YYYY-MM-DD` date. */
export function dayStart(day: string): number | undefined {
  const match = DAY_PATTERN.exec(day);
  if (match === null) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return Number.isFinite(ms) && dayOf(ms) === day ? ms : undefined;
}

/** Milliseconds from `ms` to the next UTC midnight (at least 1). */
export function msUntilNextDay(ms: number): number {
  return DAY_MS - (((ms % DAY_MS) + DAY_MS) % DAY_MS);
}

/** The day `days` days after `day` (before it when negative). */
export function addDays(day: string, days: number): string {
  return dayOf((dayStart(day) ?? Number.NaN) + days * DAY_MS);
}

/** Counts per status, every status present (zero when none). */
export function zeroStatusCounts(): Record<Status, number> {
  const counts = {} as Record<Status, number>;
  for (const status of STATUSES) counts[status] = 0;
  return counts;
}

/** True when `value` is a status of a verification result. */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'string' && (STATUSES as readonly string[]).includes(value);
}
