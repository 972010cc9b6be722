/**
 * What the routes see of the webhook settings (the `services.webhooks` of their context); webhooks.ts makes them.
 * @module
 */
import type { WebhookEventType } from '../webhooks/log.js';
import type { WebhookNotifier } from '../webhooks/notifier.js';

/** One API key's webhook settings. */
export interface WebhookKeyOptions {
  /** Its `whsec_...` signing secrets: one, or two while rotating (deliveries carry a signature per secret). */
  readonly secrets: readonly string[];
  /** Webhook URL of the key's jobs created without a `webhook` field. @default none */
  readonly url?: string;
  /** Events of that default webhook. @default ['bulk.completed', 'bulk.failed'] */
  readonly events?: readonly WebhookEventType[];
}

/** A key's webhook settings as the routes get them: a stored key's secrets are read anew before each attempt. */
export interface ResolvedWebhookKey extends WebhookKeyOptions {
  /** Reads the key's secrets again (a stored key's may be rotated or removed while its jobs run). @default none */
  readonly current?: () => Promise<readonly string[] | undefined>;
}

/** What the routes use of the webhook settings. */
export interface HttpWebhooks {
  readonly notifier: WebhookNotifier;
  /** The settings of `tenant`'s key, if any (a stored key's are read from the key store). */
  settingsOf(tenant: string | undefined): Promise<ResolvedWebhookKey | undefined>;
  close(): Promise<void>;
}
