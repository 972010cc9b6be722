/**
 * "Finish now": what a greylisted position's last result becomes when its job is finished before the retry it
 * waited for (`BulkJobManager.finish`). Shared by the in-process engine and the fleet's store, so that both say it
 * the same way.
 * @module
 */
import type { VerificationResult } from '../result.js';

/**
 * The final result of a position whose greylisting retry, due at `dueAt` (ms since the epoch), was never made
 * because its job was finished first: the last greylisted verdict as it was (`unknown`/`greylisted`, same score),
 * with a `reason` that says no retry was made, e.g.
 * `mx.example.com [192.0.2.1] answered RCPT TO: 451 4.7.1 try later; not retried: the job was finished before the retry due at 11:05 UTC`.
 * The time is UTC (`HH:MM`), whatever the server's time zone.
 */
export function unretriedResult(result: VerificationResult, dueAt: number): VerificationResult {
  const prior = result.reason ?? result.sub_status ?? result.status;
  return { ...result, reason: `${prior}; ${unretriedNote(dueAt)}` };
}

/** The note {@link unretriedResult} appends to a `reason`. */
export function unretriedNote(dueAt: number): string {
  const at = Number.isFinite(dueAt) ? new Date(dueAt).toISOString().slice(11, 16) : '--:--';
  return `not retried: the job was finished before the retry due at ${at} UTC`;
}
