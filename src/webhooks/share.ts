/**
 * The webhook share seam: where the API nodes of a worker fleet keep each job's webhook, so that any of them can
 * deliver its events, and how they agree which one does; also where a single server on a durable store keeps
 * them, so that its jobs' webhooks outlive a restart.
 * @module
 */
import type { WebhookEventType } from './log.js';

/** A job's webhook as every node can read it: its URL, events and owner (never its secrets). */
export interface SharedWebhook {
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  /** The job's owner (the tenant whose secrets sign the deliveries), `null` for none. */
  readonly owner: string | null;
}

/** A job's webhook as {@link WebhookShare.unfinished} lists it. */
export interface JobWebhook extends SharedWebhook {
  readonly jobId: string;
}

/** Shares the webhooks of jobs between the notifiers of several nodes (`bullmqRunner` makes one). */
export interface WebhookShare {
  /** Keeps the webhook of job `jobId` where every node can read it. */
  save(
    jobId: string,
    webhook: { readonly url: string; readonly events: readonly WebhookEventType[] },
  ): Promise<void>;
  /** The webhook of job `jobId`, if it has one. */
  load(jobId: string): Promise<SharedWebhook | undefined>;
  /** True for exactly one caller of each `key` (an event of a job): that node delivers it. */
  claim(key: string): Promise<boolean>;
  /**
   * The webhooks of the jobs not finished yet (`queued` or `processing`), oldest job first: a notifier watches
   * them as it starts, so that a server restarted on a durable store delivers their events. @default none
   */
  unfinished?(): Promise<readonly JobWebhook[]>;
}
