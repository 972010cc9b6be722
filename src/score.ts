/**
 * The published score rubric (docs/scoring.md). Deterministic: the same result always scores the same.
 * @module
 */
import type { Status, SubStatus, Verdict, VerificationResult } from './result.js';

/** Base points per status. */
export const STATUS_POINTS: Readonly<Record<Status, number>> = Object.freeze({
  valid: 100,
  catch_all: 60,
  unknown: 40,
  do_not_mail: 10,
  invalid: 0,
});

/** Sub-statuses whose base differs from their status's. */
export const SUB_STATUS_POINTS: Readonly<Partial<Record<SubStatus, number>>> = Object.freeze({
  smtp_not_checked: 45,
  greylisted: 45,
  role_based: 15,
});

/** Points taken off for each flag; never below the floor of the status. */
export const PENALTIES = Object.freeze({ role: 15, free: 5, did_you_mean: 25 });

/** Lowest score each status can fall to through penalties, so that the status order is kept. */
export const STATUS_FLOOR: Readonly<Record<Status, number>> = Object.freeze({
  valid: 61,
  catch_all: 46,
  unknown: 16,
  do_not_mail: 1,
  invalid: 0,
});

/** Scores a result by the rubric: base points for the status, minus the penalties, clamped to the floor. */
export function scoreOf(
  result: Pick<VerificationResult, 'status' | 'sub_status' | 'role' | 'free' | 'did_you_mean'>,
): number {
  if (result.status === 'invalid') return 0;
  let points =
    (result.sub_status !== null ? SUB_STATUS_POINTS[result.sub_status] : undefined) ??
    STATUS_POINTS[result.status];
  if (result.role) points -= PENALTIES.role;
  if (result.free) points -= PENALTIES.free;
  if (result.did_you_mean !== null) points -= PENALTIES.did_you_mean;
  return Math.max(STATUS_FLOOR[result.status], Math.min(100, points));
}

/**
 * A scored result that carries only a verdict: no findings, flags off. For addresses that were not (or could
 * not be) verified, e.g. a bulk row whose verification threw, or an unreadable CSV row.
 * @param email The input, as it should appear in `email`.
 */
export function verdictOnlyResult(email: string, verdict: Verdict): VerificationResult {
  const result: VerificationResult = {
    email,
    normalized: null,
    user: null,
    domain: null,
    status: verdict.status,
    sub_status: verdict.sub_status,
    score: 0,
    disposable: false,
    role: false,
    free: false,
    accept_all: false,
    did_you_mean: null,
    mx_record: null,
    smtp_provider: null,
  };
  result.score = scoreOf(result);
  return result;
}
