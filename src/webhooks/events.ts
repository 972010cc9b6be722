/**
 * The `events` list of a job's webhook, checked.
 * @module
 */
import { WebhookInputError } from './errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './log.js';

/** The events of a webhook given without `events`. */
const DEFAULT_EVENTS: readonly WebhookEventType[] = Object.freeze(['bulk.completed', 'bulk.failed']);

/**
 * Checks a webhook's `events` field: `undefined` gives `['bulk.completed', 'bulk.failed']`; otherwise a
 * non-empty list of {@link WEBHOOK_EVENT_TYPES} (duplicates dropped), else `WebhookInputError`.
 * @example
 * webhookEventsOf(['bulk.progress', 'bulk.completed']); // ['bulk.progress', 'bulk.completed']
 */
export function webhookEventsOf(value: unknown): readonly WebhookEventType[] {
  if (value === undefined) return DEFAULT_EVENTS;
  if (!Array.isArray(value) || value.length === 0 || value.length > WEBHOOK_EVENT_TYPES.length) {
    throw new WebhookInputError(
      'webhook.events',
      `must be a non-empty list of ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  }
  for (const event of value) {
    if (!WEBHOOK_EVENT_TYPES.includes(event as WebhookEventType)) {
      const shown = typeof event === 'string' ? JSON.stringify(event.slice(0, 64)) : typeof event;
      throw new WebhookInputError('webhook.events', `has an unknown event ${shown}`);
    }
  }
  return Object.freeze([...new Set(value as WebhookEventType[])]);
}
