/**
 * What a job's progress says about time, as pure functions of the job and the time now: the elapsed time, an
 * honest estimate of what is left (none while greylisting retries wait: "at least" until the next one), and the
 * line that says how many addresses wait for a greylisting retry, and until when.
 * @module
 */
import type { Job } from './types.js';

/** `ms` as `42 s` or `3 min 5 s`. */
export function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** `iso` as the local `HH:MM` (24-hour). */
export function clockTime(iso: string): string {
  const at = new Date(iso);
  return `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
}

/** How long the job has run: until it finished, else until `now` (ms since the epoch); 0 before it started. */
export function elapsedMs(job: Job, now: number): number {
  if (job.started_at === null) return 0;
  const end = job.completed_at === null ? now : Date.parse(job.completed_at);
  return Math.max(0, end - Date.parse(job.started_at));
}

/** Addresses of `job` waiting for a greylisting retry (0 when the server sends no `retries`). */
export function waitingRetries(job: Job): number {
  return job.status === 'processing' ? (job.retries?.waiting ?? 0) : 0;
}

/**
 * The estimate of what is left, or `null` when there is none to give (not processing, nothing done yet).
 * Addresses still to check are estimated from the pace so far; while greylisting retries wait the job cannot
 * end before the next one is due, so the estimate is a floor ("at least") and never "about 0 s".
 */
export function timeLeft(job: Job, now: number): string | null {
  if (job.status !== 'processing') return null;
  const elapsed = elapsedMs(job, now);
  const waiting = waitingRetries(job);
  const unchecked = Math.max(0, job.total - job.completed - waiting);
  const pace = job.completed > 0 ? (elapsed / job.completed) * unchecked : null;
  if (waiting === 0) return pace === null ? null : `about ${duration(pace)} left`;
  const nextRetry = job.retries?.next_retry_at ?? null;
  const untilRetry = nextRetry === null ? 0 : Math.max(0, Date.parse(nextRetry) - now);
  const floor = Math.max(untilRetry, pace ?? 0);
  return floor < 1000
    ? 'waiting for greylisting retries'
    : `at least ${duration(floor)} left (greylisting retries)`;
}

/** "N addresses retry at HH:MM (greylisting)" while retries wait, else `null`. */
export function retryLine(job: Job): string | null {
  const waiting = waitingRetries(job);
  if (waiting === 0) return null;
  const who = waiting === 1 ? '1 address' : `${waiting.toLocaleString('en')} addresses`;
  const verb = waiting === 1 ? 'retries' : 'retry';
  const nextRetry = job.retries?.next_retry_at ?? null;
  return nextRetry === null
    ? `${who} wait for a retry (greylisting)`
    : `${who} ${verb} at ${clockTime(nextRetry)} (greylisting)`;
}
