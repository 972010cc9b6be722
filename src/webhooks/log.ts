/**
 * The delivery log seam: every webhook attempt of a job, for `GET /v1/bulk/{id}/webhooks`. The in-memory
 * default keeps the newest jobs; a durable store can implement the same two methods.
 * @module
 */

import type { Awaitable } from '../awaitable.js';

/** The events a job's webhook can be told about. */
export type WebhookEventType = 'bulk.completed' | 'bulk.failed' | 'bulk.progress';

/** Every webhook event type. */
export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = Object.freeze([
  'bulk.completed',
  'bulk.failed',
  'bulk.progress',
]);

/** Where a delivery stands after an attempt. */
export type WebhookDeliveryState = 'delivered' | 'retrying' | 'failed';

/** One delivery attempt, as `GET /v1/bulk/{id}/webhooks` lists it. */
export interface WebhookAttempt {
  /** The `webhook-id` of the event: the same on every attempt, so receivers can deduplicate. */
  readonly event_id: string;
  readonly event_type: WebhookEventType;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When the attempt was made (ISO 8601). */
  readonly attempted_at: string;
  /** The receiver's HTTP status, or `null` when there was no response. */
  readonly status_code: number | null;
  /** Why the attempt failed without a 2xx (connection error, timeout, refused address, status), or `null`. */
  readonly error: string | null;
  /** `delivered` (2xx), `retrying` (another attempt at `next_retry_at`) or `failed` (no more attempts). */
  readonly state: WebhookDeliveryState;
  /** When the next attempt is due (ISO 8601), or `null`. */
  readonly next_retry_at: string | null;
}

/** Stores delivery attempts per job. */
export interface WebhookLog {
  /** Records one attempt of `jobId`'s webhook. */
  append(jobId: string, attempt: WebhookAttempt): Awaitable<void>;
  /** The attempts of `jobId`, oldest first (empty when none). */
  list(jobId: string): Awaitable<readonly WebhookAttempt[]>;
}

/** Options of {@link memoryWebhookLog}. */
export interface MemoryWebhookLogOptions {
  /** Jobs whose attempts are kept; the oldest job's are dropped beyond. @default 10000 */
  readonly maxJobs?: number;
  /** Attempts kept per job; the oldest are dropped beyond. @default 1000 */
  readonly maxAttemptsPerJob?: number;
}

/**
 * An in-memory {@link WebhookLog} (the default): bounded by job count and attempts per job.
 * @example
 * const log = memoryWebhookLog({ maxJobs: 100 });
 */
export function memoryWebhookLog(options: MemoryWebhookLogOptions = {}): WebhookLog {
  const maxJobs = options.maxJobs ?? 10_000;
  const maxAttempts = options.maxAttemptsPerJob ?? 1000;
  const jobs = new Map<string, WebhookAttempt[]>();
  return {
    append(jobId, attempt) {
      let attempts = jobs.get(jobId);
      if (attempts === undefined) {
        attempts = [];
        jobs.set(jobId, attempts);
        if (jobs.size > maxJobs) jobs.delete(jobs.keys().next().value as string);
      }
      attempts.push(attempt);
      if (attempts.length > maxAttempts) attempts.shift();
    },
    list: (jobId) => [...(jobs.get(jobId) ?? [])],
  };
}
