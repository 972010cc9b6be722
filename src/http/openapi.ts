/**
 * The OpenAPI 3.1 document of the API, generated from the route table, the schemas and the limits.
 * @module
 */

import { HTTP_ERRORS, type HttpErrorCode } from './errors.js';
import { FIXED_LIMITS, type HttpLimits } from './limits.js';
import { SCOPES } from './principal.js';
import { referencedSchemas, withoutDefaults } from './request-defaults.js';
import { REQUEST_ID_HEADER } from './request-id.js';
import { ROUTES, type Route } from './routes.js';
import { SCHEMAS, type Schema } from './schemas.js';
import { webhooksDoc } from './webhook-schemas.js';

/** Version of the API described (the `/v1` prefix is its major). */
export const API_VERSION = '1.0.0';

/** Error codes every authenticated route can answer with. */
const AUTH_ERRORS: readonly HttpErrorCode[] = ['unauthorized', 'rate_limited', 'service_unavailable'];

const REQUEST_ID = { $ref: '#/components/headers/RequestId' };
const RATE_HEADERS = {
  'RateLimit-Limit': { $ref: '#/components/headers/RateLimitLimit' },
  'RateLimit-Remaining': { $ref: '#/components/headers/RateLimitRemaining' },
  'RateLimit-Reset': { $ref: '#/components/headers/RateLimitReset' },
};

/** The address-list bodies of the bulk routes. */
const LIST_BODIES = {
  'text/plain': {
    schema: { type: 'string', description: 'One address a line (UTF-8); blank lines are skipped.' },
  },
  'text/csv': {
    schema: {
      type: 'string',
      description:
        'RFC 4180 CSV (UTF-8; comma, semicolon or tab) with a header row; the address column is `column`.',
    },
  },
};

function errorResponses(route: Route): Record<string, unknown> {
  const codes = new Set<HttpErrorCode>([
    ...route.errors,
    ...(route.auth ? AUTH_ERRORS : []),
    ...(route.scope === undefined ? [] : (['forbidden'] as const)),
    'internal_error',
  ]);
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of codes) {
    const status = HTTP_ERRORS[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, unknown> = { [REQUEST_ID_HEADER]: REQUEST_ID };
    if (list.includes('rate_limited')) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
    if (list.includes('unauthorized')) headers['WWW-Authenticate'] = { schema: { const: 'Bearer' } };
    responses[String(status)] = {
      description: list.map((code) => `\`${code}\`: ${HTTP_ERRORS[code].message}`).join('; '),
      headers,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
  }
  return responses;
}

function operation(route: Route): Record<string, unknown> {
  const success: Record<string, unknown> = {
    description: route.success.description,
    headers: { [REQUEST_ID_HEADER]: REQUEST_ID, ...(route.auth ? RATE_HEADERS : {}) },
  };
  if (route.success.content !== undefined) {
    success.content = Object.fromEntries(
      Object.entries(route.success.content).map(([type, schema]) => [type, { schema }]),
    );
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    tags: [route.path.startsWith('/v1/bulk') ? 'bulk' : route.auth ? 'verify' : 'health'],
    // OpenAPI 3.1 lets a bearer scheme list the roles an operation needs: here the key's scope.
    security: route.auth ? [{ bearer: route.scope === undefined ? [] : [route.scope] }] : [],
    ...(route.parameters === undefined ? {} : { parameters: route.parameters }),
    ...(route.requestBody === undefined
      ? {}
      : {
          requestBody: {
            required: route.requestBody === 'AddEmails',
            content: {
              'application/json': { schema: { $ref: `#/components/schemas/${route.requestBody}` } },
              ...(route.listBody === true ? LIST_BODIES : {}),
            },
          },
        }),
    responses: { [String(route.success.status)]: success, ...errorResponses(route) },
  };
}

function limitsText(
  limits: Pick<
    HttpLimits,
    'maxBodyBytes' | 'maxEmailsPerRequest' | 'maxJobsPerKey' | 'requestsPerSecond' | 'burst'
  >,
): string {
  return [
    `Request body: at most ${limits.maxBodyBytes} bytes.`,
    `Addresses per request: at most ${limits.maxEmailsPerRequest}.`,
    `Jobs per API key: at most ${limits.maxJobsPerKey}.`,
    `Rate: ${limits.requestsPerSecond} requests per second per API key, bursts of ${limits.burst}.`,
  ].join(' ');
}

/**
 * Builds the OpenAPI 3.1 document. `limits` are the ones the described server enforces (the handler serves
 * the document for its own limits; docs/openapi.json is written with the defaults). It states the fixed limits
 * only: the memory budgets depend on the server's heap.
 * @example
 * const doc = openApiDocument();
 * Object.keys(doc.paths); // ['/healthz', '/v1/openapi.json', '/v1/verify', ...]
 */
export function openApiDocument(
  limits: Readonly<
    Required<
      Pick<
        HttpLimits,
        'maxBodyBytes' | 'maxEmailsPerRequest' | 'maxJobsPerKey' | 'requestsPerSecond' | 'burst'
      >
    >
  > = FIXED_LIMITS,
): {
  openapi: string;
  paths: Record<string, Record<string, unknown>>;
  [key: string]: unknown;
} {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, unknown>)[route.method.toLowerCase()] = operation(route);
  }
  const schemas: Record<string, Schema> = { ...SCHEMAS };
  // Request bodies carry no `default`: generated clients would make those fields required (see request-defaults.ts).
  const bodies = ROUTES.flatMap((route) => (route.requestBody === undefined ? [] : [route.requestBody]));
  for (const name of referencedSchemas(bodies, schemas)) {
    schemas[name] = withoutDefaults(schemas[name] as Schema);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mailvet',
      version: API_VERSION,
      description:
        'Email verification: one address in real time, or many through bulk jobs ' +
        '(create, add addresses, poll, download results). Every `/v1` request needs ' +
        '`Authorization: Bearer <key>`; each key is a tenant that sees only its own jobs. ' +
        `Every response carries \`X-Request-Id\`. ${limitsText(limits)}`,
      license: { name: 'MIT', identifier: 'MIT' },
    },
    tags: [
      { name: 'verify', description: 'Single verification' },
      { name: 'bulk', description: 'Bulk jobs' },
      { name: 'health', description: 'Health' },
    ],
    paths,
    webhooks: webhooksDoc(),
    components: {
      schemas,
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `An API key. A key made by \`mailvet keys create\` holds scopes (${SCOPES.join(', ')}); an operation lists the one it needs, and a key without it gets 403 \`forbidden\`. A key of MAILVET_API_KEYS holds every scope.`,
        },
      },
      headers: {
        RequestId: {
          description:
            'Id of the request: the caller’s X-Request-Id if safe (1-128 of A-Za-z0-9._:-), else new.',
          schema: { type: 'string' },
        },
        RateLimitLimit: { description: 'Bucket size (burst).', schema: { type: 'integer' } },
        RateLimitRemaining: { description: 'Requests left in the bucket.', schema: { type: 'integer' } },
        RateLimitReset: {
          description: 'Seconds until the bucket is full again.',
          schema: { type: 'integer' },
        },
        RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
      },
    },
  };
}
