/**
 * JSON Schema of the `GET /v1/diagnostics` body, built from the check names and statuses the code uses.
 * @module
 */
import { CHECK_NAMES, READINESS_CHECKS } from '../doctor/types.js';
import type { Schema } from './schemas.js';

const STATUS = { type: 'string', enum: ['pass', 'warn', 'fail', 'skipped'] } as const;

/** `DiagnosticsReport` (src/doctor/types.ts). */
export const DIAGNOSTICS_REPORT: Schema = {
  type: 'object',
  description: 'What mailvet doctor found about the server host (see docs/doctor.md).',
  required: [
    'verdict',
    'checks',
    'egress_ip',
    'helo_host',
    'mail_from',
    'probe_domain',
    'started_at',
    'duration_ms',
  ],
  properties: {
    verdict: {
      type: 'string',
      enum: ['pass', 'warn', 'incomplete', 'fail'],
      description: `fail when a check failed, else incomplete when a check that decides readiness (${READINESS_CHECKS.join(', ')}) could not run, else warn when one warned, else pass.`,
    },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'title', 'status', 'evidence', 'advice', 'details'],
        properties: {
          name: { type: 'string', enum: [...CHECK_NAMES] },
          title: { type: 'string' },
          status: STATUS,
          evidence: { type: 'string', description: 'What was seen, one line.' },
          advice: {
            type: ['string', 'null'],
            description: 'What to do, one line; null when the check passed.',
          },
          details: { type: 'object', description: 'Structured evidence, per check.' },
        },
      },
    },
    egress_ip: { type: ['string', 'null'], description: 'The egress address the address checks used.' },
    helo_host: { type: 'string' },
    mail_from: { type: 'string' },
    probe_domain: { type: 'string' },
    started_at: { type: 'string', format: 'date-time' },
    duration_ms: { type: 'integer', minimum: 0 },
  },
};
