/**
 * The webhook share of a single server on a durable store: each job's webhook kept with the job, so that the
 * notifier watches the webhooks of unfinished jobs again after a restart. See docs/events.md, "Restarts".
 * @module
 */
import type { WebhookShare } from '../webhooks/share.js';
import { StoreError } from './errors.js';
import type { DurableJobStore } from './job-types.js';

/**
 * The share over `store`'s webhook methods, or `undefined` when it has none. Every event of a job is told by the
 * one process that holds its lease, so each claim succeeds.
 */
export function storeWebhookShare(store: DurableJobStore): WebhookShare | undefined {
  const { setWebhook, webhookOf, unfinishedWebhooks } = store;
  if (setWebhook === undefined || webhookOf === undefined || unfinishedWebhooks === undefined)
    return undefined;
  const wrapped = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (error) {
      throw new StoreError(operation, error);
    }
  };
  return {
    save: (id, webhook) => wrapped('save the webhook', () => setWebhook.call(store, id, webhook)),
    load: (id) => wrapped('read the webhook', () => webhookOf.call(store, id)),
    claim: async () => true,
    unfinished: () => wrapped('read the webhooks', () => unfinishedWebhooks.call(store)),
  };
}
