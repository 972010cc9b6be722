/**
 * The webhooks of a single server's jobs on the SQL store (the `webhook` column of migration 4, shared with fleet
 * jobs): kept with the job, never with a secret, so that a restarted server watches them again.
 * @module
 */
import type { DurableJobStore } from '../bulk/job-types.js';
import type { WebhookEventType } from '../webhooks/log.js';
import type { JobWebhook, SharedWebhook } from '../webhooks/share.js';
import type { Row, SqlDriver } from './driver.js';

/** The webhook methods of the durable store. */
export type WebhookOperations = Required<
  Pick<DurableJobStore, 'setWebhook' | 'webhookOf' | 'unfinishedWebhooks'>
>;

/** The stored webhook of `row` (its `owner` and `webhook` text) as the notifier reads it. */
function webhookOfRow(row: Row): SharedWebhook {
  const webhook = JSON.parse(row.webhook as string) as { url: string; events: WebhookEventType[] };
  return { url: webhook.url, events: webhook.events, owner: (row.owner as string | null) ?? null };
}

/** The webhook statements on schema `s` of `driver`. */
export function webhookOperations(driver: SqlDriver, s: string): WebhookOperations {
  return {
    async setWebhook(id, webhook) {
      await driver.query(`UPDATE ${s}.jobs SET webhook = $2::jsonb WHERE id = $1`, [
        id,
        JSON.stringify({ url: webhook.url, events: webhook.events }),
      ]);
    },

    async webhookOf(id) {
      const rows = await driver.query(
        `SELECT owner, webhook::text AS webhook FROM ${s}.jobs WHERE id = $1 AND webhook IS NOT NULL`,
        [id],
      );
      return rows[0] === undefined ? undefined : webhookOfRow(rows[0]);
    },

    async unfinishedWebhooks() {
      const rows = await driver.query(
        `SELECT id, owner, webhook::text AS webhook FROM ${s}.jobs
         WHERE status IN ('queued', 'processing') AND NOT fleet AND webhook IS NOT NULL ORDER BY seq`,
      );
      return rows.map((row): JobWebhook => ({ jobId: String(row.id), ...webhookOfRow(row) }));
    },
  };
}
