/**
 * The route table: the one source of truth for routing, authentication and the OpenAPI document.
 * @module
 */
import type { HttpErrorCode } from './errors.js';
import { JOBS_PAGE, RESULTS_PAGE, VERIFY_TIMEOUT } from './limits.js';
import { RESULT_FORMATS } from './negotiate.js';
import type { Scope } from './principal.js';
import type { Method } from './router.js';
import type { Schema } from './schemas.js';
import { USAGE_RANGE } from './usage-range.js';

/** The name of each operation; the handler has one implementation per name. */
export type OperationId =
  | 'getHealth'
  | 'getOpenApi'
  | 'verifyEmail'
  | 'createJob'
  | 'listJobs'
  | 'getJob'
  | 'deleteJob'
  | 'addEmails'
  | 'startJob'
  | 'finishJob'
  | 'getJobResults'
  | 'jobEvents'
  | 'listWebhookDeliveries'
  | 'getDiagnostics'
  | 'getUsage'
  | 'getMetrics';

/** An OpenAPI parameter object. */
export interface ParameterDoc {
  readonly name: string;
  readonly in: 'query' | 'path';
  readonly required?: boolean;
  readonly description: string;
  /** How an array is written: `form` with `explode: false` is `?name=1,2`. */
  readonly style?: 'form';
  readonly explode?: boolean;
  readonly schema: Schema;
}

/** A successful response: status, description, and the body per media type (schema), if any. */
export interface SuccessDoc {
  readonly status: number;
  readonly description: string;
  readonly content?: Readonly<Record<string, Schema>>;
}

/** One route: how it is matched, whether it needs a key, and how it is documented. */
export interface Route {
  readonly method: Method;
  /** OpenAPI path template. */
  readonly path: string;
  readonly operationId: OperationId;
  /** Needs `Authorization: Bearer <key>` (and counts against the tenant's rate limit). */
  readonly auth: boolean;
  /** The scope a key needs for it (a key without it gets 403 `forbidden`); none: any valid key. */
  readonly scope?: Scope;
  readonly summary: string;
  readonly description?: string;
  readonly parameters?: readonly ParameterDoc[];
  /** Name of the request body schema in `components.schemas`. */
  readonly requestBody?: string;
  /** The body may also be an address list (`text/plain`, `text/csv`), read as `mailvet bulk` reads files. */
  readonly listBody?: boolean;
  readonly success: SuccessDoc;
  /** Error codes this route can answer with, besides the ones every authenticated route has. */
  readonly errors: readonly HttpErrorCode[];
}

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });

/** The query parameters `route` documents: the only ones a POST route accepts. */
export function queryNamesOf(route: Pick<Route, 'parameters'>): readonly string[] {
  return (route.parameters ?? []).filter((param) => param.in === 'query').map((param) => param.name);
}

/** `?column=` of a CSV list body. */
const LIST_COLUMN: ParameterDoc = {
  name: 'column',
  in: 'query',
  description:
    'CSV list bodies only: the header of the address column (default: found by name, as mailvet bulk does). ' +
    "A CSV body's rows are kept for the CSV download: the first fixes the job's header, a later one with another " +
    'header is a 400; at most 1,000 columns and 65,536 characters per row.',
  schema: { type: 'string' },
};

const JOB_ID: ParameterDoc = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'The job id.',
  schema: { type: 'string' },
};

const page = (defaults: { default: number; max: number }, what: string): ParameterDoc[] => [
  {
    name: 'offset',
    in: 'query',
    description: `Number of ${what} to skip.`,
    schema: { type: 'integer', minimum: 0, default: 0 },
  },
  {
    name: 'limit',
    in: 'query',
    description: `Most ${what} to return.`,
    schema: { type: 'integer', minimum: 1, maximum: defaults.max, default: defaults.default },
  },
];

/** Every route of the API. */
export const ROUTES: readonly Route[] = [
  {
    method: 'GET',
    path: '/healthz',
    operationId: 'getHealth',
    auth: false,
    summary:
      'Liveness check and job store state (no key needed); 503 when the durable job store does not answer, or is damaged',
    success: {
      status: 200,
      description:
        'The server is up; `store` says where jobs are kept (`memory`) or that the durable store answers (`up`). On an API node of a worker fleet, `queue` says the queue answers and `workers` counts the workers with a live heartbeat.',
      content: {
        'application/json': {
          type: 'object',
          properties: {
            status: { const: 'ok' },
            store: { enum: ['memory', 'up'] },
            queue: { const: 'up' },
            workers: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
    errors: ['service_unavailable'],
  },
  {
    method: 'GET',
    path: '/v1/openapi.json',
    operationId: 'getOpenApi',
    auth: true,
    summary: 'This OpenAPI document',
    success: { status: 200, description: 'The OpenAPI 3.1 document.', content: { 'application/json': {} } },
    errors: [],
  },
  {
    method: 'GET',
    path: '/v1/verify',
    operationId: 'verifyEmail',
    auth: true,
    scope: 'verify',
    summary: 'Verify one address in real time',
    parameters: [
      {
        name: 'email',
        in: 'query',
        required: true,
        description: 'Address to verify.',
        schema: { type: 'string' },
      },
      {
        name: 'timeout',
        in: 'query',
        description: 'Most seconds to spend on the whole verification (DNS and SMTP).',
        schema: {
          type: 'number',
          minimum: VERIFY_TIMEOUT.min,
          maximum: VERIFY_TIMEOUT.max,
          default: VERIFY_TIMEOUT.default,
        },
      },
      {
        name: 'fresh',
        in: 'query',
        description:
          'Ask the mail server even when the server keeps a known result of this address (docs/known-results.md); the new answer is kept.',
        schema: { type: 'boolean', default: false },
      },
    ],
    success: {
      status: 200,
      description: 'The verification result.',
      content: { 'application/json': ref('VerificationResult') },
    },
    errors: ['invalid_request'],
  },
  {
    method: 'POST',
    path: '/v1/bulk',
    operationId: 'createJob',
    auth: true,
    scope: 'bulk:write',
    summary: 'Create a bulk job',
    description:
      'With `auto_start` (the default) work begins at once; more addresses may still be added. The body is JSON, or an address list (text/plain: one address a line; text/csv: the column named by `column`, or found by its header) with `name`, `auto_start`, `column`, `fresh` and `greylist_retry_delays_ms` in the query; a list is read whole and checked before the job is made. A query parameter this route does not list, or one with a JSON body, is a 400.',
    parameters: [
      {
        name: 'name',
        in: 'query',
        description: 'List bodies only: the job name.',
        schema: { type: 'string' },
      },
      {
        name: 'auto_start',
        in: 'query',
        description: 'List bodies only: start at once (default true).',
        schema: { type: 'boolean', default: true },
      },
      LIST_COLUMN,
      {
        name: 'fresh',
        in: 'query',
        description: 'List bodies only: ask every mail server again, as the JSON field `fresh`.',
        schema: { type: 'boolean', default: false },
      },
      {
        name: 'greylist_retry_delays_ms',
        in: 'query',
        description:
          "List bodies only: the greylisting retry delays in milliseconds, comma-separated (repeating the parameter works too), as the JSON field `greylist_retry_delays_ms`; an empty value means no retries; default: the server's schedule.",
        style: 'form',
        explode: false,
        schema: {
          type: 'array',
          maxItems: 10,
          items: { type: 'integer', minimum: 0, maximum: 86_400_000 },
        },
      },
    ],
    requestBody: 'CreateJob',
    listBody: true,
    success: {
      status: 201,
      description: 'The job (status queued).',
      content: { 'application/json': ref('Job') },
    },
    errors: [
      'invalid_request',
      'payload_too_large',
      'unsupported_media_type',
      'limit_exceeded',
      'body_already_read',
      'webhook_refused',
    ],
  },
  {
    method: 'GET',
    path: '/v1/bulk',
    operationId: 'listJobs',
    auth: true,
    scope: 'bulk:read',
    summary: "List the caller's jobs, oldest first",
    parameters: page(JOBS_PAGE, 'jobs'),
    success: { status: 200, description: 'A page of jobs.', content: { 'application/json': ref('JobList') } },
    errors: ['invalid_request'],
  },
  {
    method: 'GET',
    path: '/v1/bulk/{id}',
    operationId: 'getJob',
    auth: true,
    scope: 'bulk:read',
    summary: 'Poll a job',
    parameters: [JOB_ID],
    success: { status: 200, description: 'The job.', content: { 'application/json': ref('Job') } },
    errors: ['not_found'],
  },
  {
    method: 'DELETE',
    path: '/v1/bulk/{id}',
    operationId: 'deleteJob',
    auth: true,
    scope: 'bulk:write',
    summary: 'Delete a job (stops its work, drops its results)',
    parameters: [JOB_ID],
    success: { status: 204, description: 'Deleted.' },
    errors: ['not_found'],
  },
  {
    method: 'POST',
    path: '/v1/bulk/{id}/emails',
    operationId: 'addEmails',
    auth: true,
    scope: 'bulk:write',
    summary: 'Add addresses to a job',
    description:
      'Accepted while the job is queued, processing or complete; `total` grows. An add to a complete job reopens it (processing until the new addresses are done). A failed job answers 409 conflict.',
    parameters: [JOB_ID, LIST_COLUMN],
    requestBody: 'AddEmails',
    listBody: true,
    success: { status: 200, description: 'The job.', content: { 'application/json': ref('Job') } },
    errors: [
      'invalid_request',
      'not_found',
      'conflict',
      'payload_too_large',
      'unsupported_media_type',
      'limit_exceeded',
    ],
  },
  {
    method: 'POST',
    path: '/v1/bulk/{id}/start',
    operationId: 'startJob',
    auth: true,
    scope: 'bulk:write',
    summary: 'Start a job created with auto_start false',
    parameters: [JOB_ID],
    success: { status: 200, description: 'The job.', content: { 'application/json': ref('Job') } },
    errors: ['not_found', 'conflict'],
  },
  {
    method: 'POST',
    path: '/v1/bulk/{id}/finish',
    operationId: 'finishJob',
    auth: true,
    scope: 'bulk:write',
    summary: 'Finish now: stop waiting for greylisting retries',
    description:
      "Ends the job's waiting greylisting retries with their last verdict (`unknown`/`greylisted`; the result's " +
      '`reason` ends with `not retried: the job was finished before the retry due at HH:MM UTC`), and the job ' +
      'retries nothing from then on (`retries.delays_ms` becomes `[]`). When nothing else is left the job is ' +
      '`complete` in the answer, and its events and webhooks say so as usual; else it completes when its remaining ' +
      'addresses are final. No body. Idempotent: a `complete` job is answered as it is; a `queued` (not started) or ' +
      '`failed` job is a 409 `conflict`.',
    parameters: [JOB_ID],
    success: { status: 200, description: 'The job after.', content: { 'application/json': ref('Job') } },
    errors: ['not_found', 'conflict'],
  },
  {
    method: 'GET',
    path: '/v1/bulk/{id}/results',
    operationId: 'getJobResults',
    auth: true,
    scope: 'bulk:read',
    summary: 'Download results, in input order',
    description:
      'JSON pages (`offset`/`limit`), or the whole list as CSV or NDJSON (streamed), chosen by `format` or ' +
      'the Accept header. Before the job is complete: 409 `job_not_complete` with the job, unless ' +
      '`partial=true`, which returns the results finished so far. The CSV of a job made from a text/csv body ' +
      "has the file's columns first (in its order; a row added as JSON or text has empty cells but the address), " +
      'then the result columns but `email` (the file holds the address; `mailvet_` before a name the file has), ' +
      'unless `results_only=true`.',
    parameters: [
      JOB_ID,
      {
        name: 'format',
        in: 'query',
        description: 'Wins over Accept. Default: by Accept, else json.',
        schema: { type: 'string', enum: Object.keys(RESULT_FORMATS) },
      },
      {
        name: 'partial',
        in: 'query',
        description: 'Return the results finished so far instead of 409 before completion.',
        schema: { type: 'boolean', default: false },
      },
      {
        name: 'results_only',
        in: 'query',
        description: "CSV only: the result columns alone, without the columns of the job's CSV file.",
        schema: { type: 'boolean', default: false },
      },
      {
        name: 'offset',
        in: 'query',
        description: 'Input position to start at.',
        schema: { type: 'integer', minimum: 0, default: 0 },
      },
      {
        name: 'limit',
        in: 'query',
        description:
          `Most positions to return. Without it, every result from offset, streamed (JSON: limit and next_offset are then null). ` +
          `JSON with limit: one page of at most ${RESULTS_PAGE.max}, with next_offset. CSV and NDJSON: no maximum.`,
        schema: { type: 'integer', minimum: 1 },
      },
    ],
    success: {
      status: 200,
      description: 'The results.',
      content: {
        'application/json': ref('ResultsPage'),
        [RESULT_FORMATS.csv]: { type: 'string', description: 'Header row, then one row per address.' },
        [RESULT_FORMATS.ndjson]: { type: 'string', description: 'One VerificationResult JSON per line.' },
      },
    },
    errors: ['invalid_request', 'not_found', 'job_not_complete'],
  },
  {
    method: 'GET',
    path: '/v1/bulk/{id}/events',
    operationId: 'jobEvents',
    auth: true,
    scope: 'bulk:read',
    summary: 'Watch a job live (Server-Sent Events)',
    description:
      'A text/event-stream of `progress` events (data: the job) while the job runs, then one `complete` or `failed` event, after which the stream ends. The first event is the current state. Each event has an `id` (the completed count, `<n>-end` for the final one): reconnect with `Last-Event-ID` to resume; after the final event a reconnect gets 204. A `: heartbeat` comment is sent every 15 s.',
    parameters: [JOB_ID],
    success: {
      status: 200,
      description: 'The event stream.',
      content: {
        'text/event-stream': {
          type: 'string',
          description: 'SSE frames: `id`, `event` (progress, complete, failed), `data` (a Job as JSON).',
        },
      },
    },
    errors: ['not_found'],
  },
  {
    method: 'GET',
    path: '/v1/bulk/{id}/webhooks',
    operationId: 'listWebhookDeliveries',
    auth: true,
    scope: 'bulk:read',
    summary: "List the job's webhook delivery attempts",
    description:
      'Every attempt, oldest first: when, the status code or error, and when the next retry is due.',
    parameters: [JOB_ID],
    success: {
      status: 200,
      description: 'The attempts.',
      content: { 'application/json': ref('WebhookDeliveries') },
    },
    errors: ['not_found'],
  },
  {
    method: 'GET',
    path: '/v1/diagnostics',
    operationId: 'getDiagnostics',
    auth: true,
    scope: 'admin',
    summary: "Check the server's host (mailvet doctor): port 25, reverse DNS, HELO, SPF, blocklists",
    description:
      'Off by default: a server started without `diagnostics` (mailvet serve without --diagnostics) answers 404. ' +
      'When on, a key with the admin scope may call it (every key of MAILVET_API_KEYS holds it); one run (DNS questions, and one SMTP connection with EHLO and QUIT only) ' +
      'is shared by concurrent callers and reused for 60 s.',
    success: {
      status: 200,
      description: 'The report.',
      content: { 'application/json': ref('DiagnosticsReport') },
    },
    errors: ['not_found'],
  },
  {
    method: 'GET',
    path: '/v1/usage',
    operationId: 'getUsage',
    auth: true,
    summary: "The caller's usage per UTC day: single verifications and bulk addresses, by status",
    description:
      `Counted per tenant when a single verification answers and when a bulk address gets its final result; a node ` +
      `writes its counts about once a second, so another node's last second may be missing. Days without usage are ` +
      `left out. \`quota\` is today's daily address quota of the caller's key (null without one). At most ` +
      `${USAGE_RANGE.maxDays} days per call; any API key may call it.`,
    parameters: [
      {
        name: 'from',
        in: 'query',
        description: `First day (UTC, YYYY-MM-DD). Default: ${USAGE_RANGE.defaultDays - 1} days before \`to\`.`,
        schema: { type: 'string', format: 'date' },
      },
      {
        name: 'to',
        in: 'query',
        description: 'Last day (UTC, YYYY-MM-DD), included. Default: today.',
        schema: { type: 'string', format: 'date' },
      },
    ],
    success: { status: 200, description: 'The usage.', content: { 'application/json': ref('Usage') } },
    errors: ['invalid_request'],
  },
  {
    method: 'GET',
    path: '/metrics',
    operationId: 'getMetrics',
    auth: true,
    scope: 'admin',
    summary: "The server's metrics in the Prometheus text format (a key with the admin scope)",
    description:
      'Off by default: a server started without `metrics` (mailvet serve without --metrics) answers 404; ' +
      '`mailvet serve --metrics-port` serves them on a listener of their own instead. Needs a key holding the ' +
      '`admin` scope (403 otherwise). The series are listed in docs/operations.md.',
    success: {
      status: 200,
      description: 'The metrics (Prometheus text exposition format 0.0.4).',
      content: { 'text/plain': { type: 'string' } },
    },
    errors: ['forbidden', 'not_found'],
  },
];
