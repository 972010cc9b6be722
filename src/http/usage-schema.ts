/**
 * The JSON Schema of `GET /v1/usage`'s answer, built from the result statuses.
 * @module
 */
import { STATUSES } from '../result.js';
import type { Schema } from './schema.js';

const byStatus = (what: string): Schema => ({
  type: 'object',
  description: `${what}, by status (every status present).`,
  required: [...STATUSES],
  properties: Object.fromEntries(STATUSES.map((status) => [status, { type: 'integer', minimum: 0 }])),
});

const usageCounts = (extra: Record<string, Schema> = {}, required: string[] = []): Schema => ({
  type: 'object',
  required: [...required, 'single', 'bulk', 'total'],
  properties: {
    ...extra,
    single: byStatus('Single verifications (`GET /v1/verify`)'),
    bulk: byStatus('Addresses of bulk jobs verified'),
    total: { type: 'integer', minimum: 0, description: 'Single verifications and bulk addresses together.' },
  },
});

/** `Usage`: the caller's usage per UTC day, its totals over the range, and its key's daily quota. */
export const USAGE: Schema = {
  type: 'object',
  description: "The caller's usage per UTC day: single verifications and bulk addresses, by status.",
  required: ['from', 'to', 'days', 'totals', 'quota'],
  properties: {
    from: { type: 'string', format: 'date', description: 'First day of the range (UTC).' },
    to: { type: 'string', format: 'date', description: 'Last day of the range (UTC).' },
    days: {
      type: 'array',
      description: 'The days of the range with any usage, oldest first.',
      items: usageCounts({ date: { type: 'string', format: 'date' } }, ['date']),
    },
    totals: usageCounts(),
    quota: {
      type: ['object', 'null'],
      description: "Today's daily address quota of the caller's key; null when the key has none.",
      required: ['day', 'limit', 'used', 'remaining'],
      properties: {
        day: { type: 'string', format: 'date', description: 'Today (UTC).' },
        limit: { type: 'integer', minimum: 0, description: 'Addresses the key may verify per UTC day.' },
        used: { type: 'integer', minimum: 0, description: 'Addresses accepted today.' },
        remaining: { type: 'integer', minimum: 0, description: 'Addresses left today.' },
      },
    },
  },
};
