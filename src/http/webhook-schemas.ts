/**
 * OpenAPI pieces of events and webhooks: the `webhook` field, the delivery log, and the OpenAPI 3.1
 * `webhooks` section describing the payloads mailvet POSTs.
 * @module
 */
import { WEBHOOK_EVENT_TYPES } from '../webhooks/log.js';
import { MAX_WEBHOOK_URL_LENGTH } from '../webhooks/target.js';
import type { Schema } from './schema.js';

/** The `webhook` field of `POST /v1/bulk`. */
export const WEBHOOK_SPEC: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['url'],
  description:
    "Where to POST this job's events, signed per Standard Webhooks with the API key's secret. The URL must be https (unless the server allows http), carry no credentials, and resolve only to public addresses: otherwise 422 webhook_refused. Without this field the API key's default webhook, if any, is used.",
  properties: {
    url: { type: 'string', format: 'uri', maxLength: MAX_WEBHOOK_URL_LENGTH },
    events: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
      default: ['bulk.completed', 'bulk.failed'],
      description:
        'bulk.progress is sent at most once per 10 s per job (configurable), plus once at the end.',
    },
  },
};

/** One delivery attempt. */
export const WEBHOOK_ATTEMPT: Schema = {
  type: 'object',
  required: [
    'event_id',
    'event_type',
    'attempt',
    'attempted_at',
    'status_code',
    'error',
    'state',
    'next_retry_at',
  ],
  properties: {
    event_id: {
      type: 'string',
      description: 'The webhook-id header: the same on every attempt of an event.',
    },
    event_type: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    attempt: { type: 'integer', minimum: 1 },
    attempted_at: { type: 'string', format: 'date-time' },
    status_code: {
      type: ['integer', 'null'],
      description: "The receiver's status; null without a response.",
    },
    error: { type: ['string', 'null'], description: 'Why the attempt failed; null when delivered.' },
    state: { type: 'string', enum: ['delivered', 'retrying', 'failed'] },
    next_retry_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

/** The body of `GET /v1/bulk/{id}/webhooks`. */
export const WEBHOOK_DELIVERIES: Schema = {
  type: 'object',
  required: ['deliveries'],
  properties: { deliveries: { type: 'array', items: { $ref: '#/components/schemas/WebhookAttempt' } } },
};

/** The payload of every webhook POST. */
export const WEBHOOK_EVENT: Schema = {
  type: 'object',
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] },
    timestamp: { type: 'string', format: 'date-time', description: 'When the event happened.' },
    data: { $ref: '#/components/schemas/Job' },
  },
};

const SIGNATURE_HEADERS = [
  ['webhook-id', 'Event id, the same on every retry: deduplicate on it.'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed.'],
  ['webhook-signature', 'Space-separated v1,<base64> HMAC-SHA256 signatures (two during a secret rotation).'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
}));

/** The OpenAPI 3.1 `webhooks` section: one entry per event type. */
export function webhooksDoc(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          summary: `The ${type} event`,
          description:
            "Sent to the job's webhook URL. Verify it with the standardwebhooks package (docs/events.md). Answer 2xx within 15 s; anything else is retried with backoff for about a day.",
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' } } },
          },
          responses: { '200': { description: 'Received (any 2xx).' } },
        },
      },
    ]),
  );
}
