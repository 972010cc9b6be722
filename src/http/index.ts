/**
 * `mailvet/http`: the `/v1` HTTP API as a fetch-style handler, mountable in any server, and a ready
 * `node:http` server.
 *
 * ```ts
 * import { createServer } from 'mailvet/http';
 * const { url } = await createServer({ port: 8080, apiKeys: ['secret'] });
 * ```
 *
 * Routes, error codes, limits and mounting under Express, Fastify and Hono: docs/http.md.
 * @module
 */

export { API_KEYS_ENV } from '../io/api-key.js';
export {
  CSV_COLUMNS,
  csvField,
  FORMULA_ESCAPES,
  type FormulaEscape,
  needsFormulaEscape,
} from '../io/result-csv.js';
export { type Authenticate, bearerKeys, sha256Hex } from './auth.js';
export type { DiagnosticsRouteOptions } from './diagnostics-route.js';
export {
  type ErrorBody,
  errorResponse,
  HTTP_ERROR_CODES,
  HTTP_ERRORS,
  HttpError,
  type HttpErrorCode,
  type HttpErrorOptions,
  type HttpLogger,
} from './errors.js';
export { DEFAULT_HEARTBEAT_MS, type JobStreamEvent } from './events-route.js';
export { createHandler, type Handler, type HandlerOptions } from './handler.js';
export { KEY_BURST_SECONDS } from './key-limits.js';
export { type HttpLimits, JOBS_PAGE, RESULTS_PAGE, VERIFY_TIMEOUT } from './limits.js';
export type { MetricsExposition, MetricsSource } from './metrics-source.js';
export { RESULT_FORMATS, type ResultFormat } from './negotiate.js';
export {
  createServer,
  type FetchHandler,
  type NodeListener,
  type NodeListenerOptions,
  type RunningServer,
  type ServerOptions,
  toNodeListener,
} from './node.js';
export {
  DEFAULT_LIMITS,
  defaultMaxAddressesPerKey,
  defaultMaxBytesHeld,
  defaultMaxBytesPerKey,
} from './node-runtime.js';
export { API_VERSION, openApiDocument } from './openapi.js';
export { type Principal, principalOf, SCOPES, type Scope } from './principal.js';
export {
  createRateLimiter,
  type RateDecision,
  type RateLimiter,
  type RateLimitOptions,
} from './rate-limit.js';
export { REQUEST_ID_HEADER, type RequestIdGenerator } from './request-id.js';
export type { RequestObserver, RequestRecord } from './request-record.js';
export type { Method } from './router.js';
export { type OperationId, type ParameterDoc, ROUTES, type Route, type SuccessDoc } from './routes.js';
export type { Schema } from './schemas.js';
export { requireScope } from './scopes.js';
export {
  type ApiKeyLookup,
  DEFAULT_KEY_CACHE_MS,
  type StoreKeysAuthenticate,
  type StoreKeysOptions,
  storedKeyTenant,
  storeKeys,
} from './store-keys.js';
export type { HttpUsageOptions } from './usage-options.js';
export { USAGE_RANGE } from './usage-range.js';
export { webhooksDoc } from './webhook-schemas.js';
export type { HttpWebhookOptions, WebhookKeyOptions } from './webhooks.js';
export { type WireJob, type WireResult, wireJob, wireResult, wireResultJson } from './wire.js';
