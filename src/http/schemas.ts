/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the API's bodies, built from the same constants the code
 * uses (statuses, error codes, limits), so the document cannot drift from them.
 * @module
 */
import { JOB_STATUSES } from '../bulk/types.js';
import { RESULT_FIELDS, STATUSES, SUB_STATUSES } from '../result.js';
import { DIAGNOSTICS_REPORT } from './diagnostics-schema.js';
import { HTTP_ERROR_CODES } from './errors.js';
import type { Schema } from './schema.js';
import { USAGE } from './usage-schema.js';
import { WEBHOOK_ATTEMPT, WEBHOOK_DELIVERIES, WEBHOOK_EVENT, WEBHOOK_SPEC } from './webhook-schemas.js';

export type { Schema };

const nullable = (type: string, extra: Schema = {}): Schema => ({ type: [type, 'null'], ...extra });

/** `VerificationResult` (src/result.ts). */
export const VERIFICATION_RESULT: Schema = {
  type: 'object',
  description: 'The result of verifying one address.',
  required: [...RESULT_FIELDS],
  properties: {
    email: { type: 'string', description: 'The input as given, trimmed.' },
    normalized: nullable('string', {
      description: 'Canonical `local@ascii-domain`; null when the syntax is invalid.',
    }),
    user: nullable('string', { description: 'The local part.' }),
    domain: {
      type: 'string',
      description:
        'The domain, ASCII (punycode), lower case; "" when the input has none (the spec types it as a string).',
    },
    status: { type: 'string', enum: [...STATUSES], description: 'Headline verdict.' },
    sub_status: {
      type: ['string', 'null'],
      enum: [...SUB_STATUSES, null],
      description: 'Specific reason for the verdict (docs/taxonomy.md).',
    },
    score: { type: 'integer', minimum: 0, maximum: 100, description: 'Quality score (docs/scoring.md).' },
    disposable: { type: 'boolean' },
    role: { type: 'boolean' },
    free: { type: 'boolean' },
    accept_all: { type: 'boolean' },
    did_you_mean: nullable('string', { description: 'Suggested correction of a likely typo.' }),
    mx_record: {
      type: 'string',
      description: 'The mail exchanger used; "" when none was found or looked up.',
    },
    smtp_provider: nullable('string', { description: 'Mail provider recognised from the MX hosts.' }),
    reason: {
      type: 'string',
      description:
        'Why the verdict is what it is, for people (the syntax rule broken, the list matched, the address the SSRF guard refused, the SMTP reply that decided). Present only when known, never for a plain valid; the wording may change, so match on status and sub_status.',
    },
    smtp_transcript: { type: 'array', items: { type: 'string' }, description: 'Only with the trace option.' },
    checked_at: {
      type: 'string',
      format: 'date-time',
      description:
        'When the verdict was found (ISO 8601, UTC): for an answer from known results, when its mail server was asked; else when this verification ended. Present when the server keeps known results (docs/known-results.md).',
    },
  },
};

const timestamp = (what: string): Schema =>
  nullable('string', { format: 'date-time', description: `${what} (ISO 8601, UTC), or null until then.` });

/** A bulk job (`Job` of src/bulk/types.ts). */
export const JOB: Schema = {
  type: 'object',
  description: 'A bulk verification job.',
  required: [
    'id',
    'name',
    'status',
    'total',
    'completed',
    'progress',
    'created_at',
    'started_at',
    'completed_at',
    'counts',
    'error',
    'retries',
  ],
  properties: {
    id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$', description: 'Unguessable job id.' },
    name: { type: 'string', description: 'Name given at creation; "" when none was.' },
    status: {
      type: 'string',
      enum: [...JOB_STATUSES],
      description:
        'queued → processing → complete; queued → complete (started with no address); complete → processing (an add reopens it); queued or processing → failed.',
    },
    total: { type: 'integer', minimum: 0, description: 'Addresses in the job, duplicates included.' },
    completed: {
      type: 'integer',
      minimum: 0,
      description: 'Addresses with a final result; never decreases.',
    },
    progress: {
      type: 'number',
      minimum: 0,
      maximum: 1,
      description: '`completed / total`; 0 when total is 0.',
    },
    created_at: { type: 'string', format: 'date-time' },
    started_at: timestamp('When processing began'),
    completed_at: timestamp('When the job became complete or failed'),
    retries: {
      type: 'object',
      description: 'Greylisting retries: positions waiting for one, when the next is due, and the schedule.',
      required: ['waiting', 'next_retry_at', 'delays_ms'],
      properties: {
        waiting: {
          type: 'integer',
          minimum: 0,
          description: 'Positions waiting for a retry (not completed).',
        },
        next_retry_at: timestamp('When the earliest waiting retry is due'),
        delays_ms: {
          type: 'array',
          items: { type: 'integer', minimum: 0 },
          description: "The job's retry delays after the 1st, 2nd, ... greylisted answer (milliseconds).",
        },
      },
    },
    counts: {
      type: 'object',
      description: 'Final results per status.',
      required: [...STATUSES],
      properties: Object.fromEntries(STATUSES.map((status) => [status, { type: 'integer', minimum: 0 }])),
    },
    error: {
      type: ['object', 'null'],
      description: 'Why the job failed; null unless status is failed.',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

/** The body of every error response. */
export const ERROR: Schema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: [...HTTP_ERROR_CODES] },
        message: { type: 'string', description: 'For humans; may change. Never carries internal details.' },
      },
    },
    job: {
      $ref: '#/components/schemas/Job',
      description: 'With `job_not_complete`: the job and its progress.',
    },
  },
};

/** Body of `POST /v1/bulk`. */
export const CREATE_JOB: Schema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: {
      type: ['string', 'null'],
      description:
        'A label (short, no control characters; see docs/bulk.md). null is the same as leaving it out.',
    },
    emails: {
      type: 'array',
      items: { type: 'string' },
      description: 'Addresses to verify; more may be added with POST /v1/bulk/{id}/emails.',
    },
    greylist_retry_delays_ms: {
      type: 'array',
      maxItems: 10,
      items: { type: 'integer', minimum: 0, maximum: 86_400_000 },
      description:
        "This job's greylisting retries: the delays (ms) after the 1st, 2nd, ... greylisted answer; [] takes a greylisted answer as final. Default: the server's schedule (60000, 300000, 900000 unless configured).",
    },
    auto_start: {
      type: 'boolean',
      default: true,
      description: 'Start at once. With false the job waits in `queued` until `POST /v1/bulk/{id}/start`.',
    },
    fresh: {
      type: 'boolean',
      default: false,
      description:
        'Ask every mail server again even when the server keeps a known result of an address (docs/known-results.md); the new answers are kept.',
    },
    webhook: { $ref: '#/components/schemas/WebhookSpec' },
  },
};

/** Body of `POST /v1/bulk/{id}/emails`. */
export const ADD_EMAILS: Schema = {
  type: 'object',
  additionalProperties: false,
  required: ['emails'],
  properties: { emails: { type: 'array', items: { type: 'string' } } },
};

/** A page of jobs. */
export const JOB_LIST: Schema = {
  type: 'object',
  required: ['jobs', 'offset', 'limit', 'total'],
  properties: {
    jobs: { type: 'array', items: { $ref: '#/components/schemas/Job' } },
    offset: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 1 },
    total: { type: 'integer', minimum: 0, description: "Number of the caller's jobs." },
  },
};

/** The results of a job (JSON format): all of them from `offset`, or one page when `limit` was given. */
export const RESULTS_PAGE_SCHEMA: Schema = {
  type: 'object',
  required: ['job', 'offset', 'limit', 'next_offset', 'results'],
  properties: {
    job: { $ref: '#/components/schemas/Job' },
    offset: { type: 'integer', minimum: 0 },
    limit: {
      type: ['integer', 'null'],
      minimum: 1,
      description: 'The limit asked for; null when none was (every result from offset is in results).',
    },
    next_offset: {
      type: ['integer', 'null'],
      description: 'Offset of the next page; null on the last one, and when no limit was asked for.',
    },
    results: { type: 'array', items: { $ref: '#/components/schemas/VerificationResult' } },
  },
};

/** Every named schema, as `components.schemas` of the OpenAPI document. */
export const SCHEMAS: Readonly<Record<string, Schema>> = {
  VerificationResult: VERIFICATION_RESULT,
  Job: JOB,
  JobList: JOB_LIST,
  ResultsPage: RESULTS_PAGE_SCHEMA,
  CreateJob: CREATE_JOB,
  AddEmails: ADD_EMAILS,
  Error: ERROR,
  WebhookSpec: WEBHOOK_SPEC,
  WebhookAttempt: WEBHOOK_ATTEMPT,
  WebhookDeliveries: WEBHOOK_DELIVERIES,
  WebhookEvent: WEBHOOK_EVENT,
  DiagnosticsReport: DIAGNOSTICS_REPORT,
  Usage: USAGE,
};
