/**
 * `createHandlerWith`: the whole API as one `(request: Request) => Promise<Response>` function, on a given
 * {@link HttpPlatform}. Runtime-free: `createHandler` (handler.ts) runs it on Node's (http/node-runtime.ts).
 * @module
 */

import { BulkJobManager } from '../bulk/manager.js';
import type { BulkJobManagerApi } from '../bulk/types.js';
import { OptionsError } from '../errors.js';
import type { VerifyOptions } from '../options.js';
import { tracingApi } from '../tracing.js';
import { createVerifier, type Verifier } from '../verifier.js';
import type { Authenticate } from './auth.js';
import { authenticatorOf } from './authenticator.js';
import { addEmails, createJob, deleteJob, finishJob, getJob, listJobs, startJob } from './bulk-routes.js';
import { ByteReservations } from './byte-reservations.js';
import { type ConsoleFiles, consoleResponse, isConsolePath } from './console.js';
import type { Context, Operation, Services } from './context.js';
import { type DiagnosticsRouteOptions, diagnosticsRunner, getDiagnostics } from './diagnostics-route.js';
import { errorResponse, HttpError, type HttpLogger } from './errors.js';
import { DEFAULT_HEARTBEAT_MS, jobEvents } from './events-route.js';
import { keyRateOf, takeKeyRequest } from './key-limits.js';
import { clientAddressOf, isLightRequest, lightParts, targetOf } from './light.js';
import { type HttpLimits, resolveLimits } from './limits.js';
import { liveStreams } from './live-streams.js';
import { getMetrics, metricsSourceOf } from './metrics-route.js';
import type { MetricsSource } from './metrics-source.js';
import { openApiDocument } from './openapi.js';
import { pathAndQuery, rejectUnknownParams } from './params.js';
import { type Principal, principalOf } from './principal.js';
import { createRateLimiter } from './rate-limit.js';
import { REQUEST_ID_HEADER, type RequestIdGenerator, randomRequestId, requestIdOf } from './request-id.js';
import type { RequestObserver } from './request-record.js';
import { emptyResponse, jsonTextResponse } from './response.js';
import { getJobResults } from './results-route.js';
import { createRouter } from './router.js';
import { type OperationId, queryNamesOf, ROUTES } from './routes.js';
import { requireScope } from './scopes.js';
import type { ApiKeyLookup } from './store-keys.js';
import { tracedRequest } from './trace.js';
import { type HttpUsageOptions, usageOf } from './usage-options.js';
import { getUsage } from './usage-route.js';
import { getHealth, getOpenApi, verifyEmail } from './verify-route.js';
import { createHttpWebhooks, type HttpWebhookOptions, listWebhookDeliveries } from './webhooks.js';

/**
 * What the handler takes of the runtime it runs on: Node's is `nodeHttpPlatform` (http/node-runtime.ts), which
 * `createHandler` passes.
 */
export interface HttpPlatform {
  /**
   * The limits used where `limits` leaves a field unset: `DEFAULT_LIMITS` on Node, whose memory budgets are shares
   * of the JavaScript heap limit.
   */
  readonly limits: Readonly<Required<HttpLimits>>;
  /**
   * The built web console: read from `dir`, or from the platform's own place when `dir` is `undefined`;
   * `undefined` when it is not there (`/` then answers 404 saying so).
   */
  readConsole(dir: string | undefined): ConsoleFiles | undefined;
}

/** Options of `createHandler`. Every field is optional. */
export interface HandlerOptions {
  /**
   * Verifies addresses for `GET /v1/verify` (and for bulk jobs when `jobs` is not given). When given, the
   * caller owns it: `close()` does not dispose of it.
   * @default createVerifier(verifierOptions), disposed by `close()`
   */
  readonly verifier?: Pick<Verifier, 'verify'>;
  /** Options of the verifier the handler makes when `verifier` is not given. @default {} */
  readonly verifierOptions?: VerifyOptions;
  /**
   * The bulk job manager. When given, the caller owns it.
   * @default new BulkJobManager({ verifier }), closed by `close()`
   */
  readonly jobs?: BulkJobManagerApi;
  /**
   * Accepted API keys (`Authorization: Bearer <key>`); each key is a tenant.
   * @default the comma-separated keys of the env variable MAILVET_API_KEYS
   */
  readonly apiKeys?: readonly string[];
  /** Your own authentication instead of `apiKeys`: returns the tenant, or `null` for 401. */
  readonly authenticate?: Authenticate;
  /**
   * Keys kept in the job store (`mailvet keys`; `pgliteStore().apiKeys`, `postgresStore().apiKeys`), accepted
   * besides `apiKeys` / MAILVET_API_KEYS, each with its scopes and limits. Not with `authenticate`. @default none
   */
  readonly apiKeyStore?: ApiKeyLookup;
  /**
   * How long a stored key's record is reused before it is read again, in milliseconds (0-600000): a revocation
   * takes effect on every API node within it. @default 5000
   */
  readonly apiKeyCacheMs?: number;
  /** Body size, addresses per request, jobs per key and rate limit. @default DEFAULT_LIMITS */
  readonly limits?: HttpLimits;
  /** Receives errors the client sees only as `internal_error`. @default console.error */
  readonly logger?: HttpLogger;
  /** Clock of the rate limiter, in milliseconds. @default Date.now */
  readonly clock?: () => number;
  /** Makes request ids for requests that bring no usable `X-Request-Id`. @default crypto.randomUUID */
  readonly requestId?: RequestIdGenerator;
  /**
   * The web console at `/` (its assets under `/console/`), built by `npm run build` into dist/console; `false`
   * turns it off (then `/` is a 404 like any unknown path), `{ dir }` serves a console built elsewhere.
   * @default true
   */
  readonly console?: boolean | { readonly dir: string };
  /**
   * Signed webhooks of bulk jobs (Standard Webhooks): per-API-key secrets and default URL, SSRF guard
   * settings, timeouts and retry schedule. See docs/events.md. @default none (a `webhook` field is refused)
   */
  readonly webhooks?: HttpWebhookOptions;
  /** Milliseconds between heartbeat comments of `GET /v1/bulk/{id}/events`. @default 15000 */
  readonly heartbeatMs?: number;
  /**
   * `GET /v1/diagnostics` (the `mailvet doctor` report of this host): `true`, or `{ options, cacheMs }`. Off
   * by default, since it reveals the host's egress address and reputation and connects to a mail server; when
   * on, keys with the `admin` scope may call it. See docs/http.md. @default false
   */
  readonly diagnostics?: boolean | DiagnosticsRouteOptions;
  /**
   * Told about every answered request (method, route template, status, duration, bytes, tenant): where request
   * logs and HTTP metrics come from. @default none
   */
  readonly onRequest?: RequestObserver;
  /**
   * Usage metering and the counters of keys' own limits (`Principal.requestsPerSecond`, `addressesPerDay`); see
   * {@link HttpUsageOptions}. @default usage and limits counted in this process
   */
  readonly usage?: HttpUsageOptions;
  /**
   * `GET /metrics` for keys with the `admin` scope: a function that makes the exposition (Prometheus text
   * format). Off (404) without it. `mailvet serve --metrics` passes its prom-client registry's. @default none
   */
  readonly metrics?: MetricsSource;
}

/** The API as a fetch-style function, plus `close()`. */
export interface Handler {
  /** Answers one request; never rejects (every error becomes a JSON error response). */
  (request: Request): Promise<Response>;
  /**
   * Stops serving (later requests get 503), closes the job manager and disposes of the verifier if the
   * handler made them. Idempotent.
   */
  close(): Promise<void>;
  /**
   * Ends the live streams (`GET /v1/bulk/{id}/events`) so that they do not hold a server that shuts down; other
   * requests are still answered. Call it when the server stops accepting connections. Idempotent.
   */
  drain(): void;
}

const OPERATIONS: Readonly<Record<OperationId, Operation>> = {
  getHealth,
  getOpenApi,
  verifyEmail,
  createJob,
  listJobs,
  getJob,
  deleteJob,
  addEmails,
  startJob,
  finishJob,
  getJobResults,
  jobEvents,
  listWebhookDeliveries,
  getDiagnostics,
  getUsage,
  getMetrics,
};

const KNOWN_OPTIONS = new Set([
  'console',
  'verifier',
  'verifierOptions',
  'jobs',
  'apiKeys',
  'authenticate',
  'apiKeyStore',
  'apiKeyCacheMs',
  'limits',
  'logger',
  'clock',
  'requestId',
  'webhooks',
  'heartbeatMs',
  'diagnostics',
  'onRequest',
  'usage',
  'metrics',
]);

const consoleLogger: HttpLogger = {
  error: (message, details) => console.error(message, details.error),
};

/** The `jsonText` of a request's {@link Context}: JSON responses carrying `common` and then `extra`. */
function jsonTextOf(common: Readonly<Record<string, string>>, light: boolean): Context['jsonText'] {
  return (status, text, extra) =>
    jsonTextResponse(status, text, extra === undefined ? common : { ...common, ...extra }, light);
}

/** What {@link createHandler}'s `respond` learned of a request, for the `onRequest` observer. */
interface Seen {
  /** The matched route's path template. */
  route: string | null;
  /** The authenticated tenant. */
  tenant: string | undefined;
  /** The authenticated key's public id. */
  keyId: string | undefined;
  /** When the handler got the request (`performance.now()`). */
  readonly started: number;
}

/** A fresh {@link Seen}, started now. */
function seenNow(): Seen {
  return { route: null, tenant: undefined, keyId: undefined, started: performance.now() };
}

/**
 * A header of `response`, read from a lightweight response's own record without building its `Headers` (which
 * would take it off the Node listener's fast path).
 */
function headerOf(response: Response, name: string): string | null {
  const light = lightParts(response);
  return light === undefined ? response.headers.get(name) : (light.headers[name] ?? null);
}

/**
 * Tells `observer` (when given) about `response` to `request`, with what `seen` learned, and answers `response`. An
 * observer's failure does not change the answer.
 */
function told(
  request: Request,
  seen: Seen | undefined,
  observer: RequestObserver | undefined,
  response: Response,
): Response {
  if (observer === undefined || seen === undefined) return response;
  const length = headerOf(response, 'content-length');
  try {
    observer(
      {
        requestId: headerOf(response, REQUEST_ID_HEADER) ?? '',
        method: request.method,
        route: seen.route,
        status: response.status,
        durationMs: performance.now() - seen.started,
        bytes: length === null ? undefined : Number(length),
        tenant: seen.tenant,
        keyId: seen.keyId,
      },
      request,
    );
  } catch {
    // An observer's failure must not change the answer.
  }
  return response;
}

function isV1(pathname: string): boolean {
  return pathname === '/v1' || pathname.startsWith('/v1/');
}

/**
 * The HTTP API handler on `platform`: what `createHandler` (handler.ts) makes with Node's defaults, for any runtime
 * that gives its own {@link HttpPlatform}. Options are validated now (an `OptionsError` names a bad one).
 */
export function createHandlerWith(platform: HttpPlatform, options: HandlerOptions = {}): Handler {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  for (const key of Object.keys(options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new OptionsError(key, 'is not a known option');
  }
  const authenticate = authenticatorOf(options);
  const limits = resolveLimits(options.limits, platform.limits);
  const diagnostics = diagnosticsRunner(
    options.diagnostics,
    options.verifierOptions,
    options.clock ?? Date.now,
  );
  const logger = options.logger ?? consoleLogger;
  const generateId = options.requestId ?? randomRequestId;
  const limiter = createRateLimiter({
    requestsPerSecond: limits.requestsPerSecond,
    burst: limits.burst,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  // Failed authentications per client address: a key cannot be guessed at the speed of the network.
  const authFailures = createRateLimiter({
    requestsPerSecond: limits.failedAuthPerMinute / 60,
    burst: limits.failedAuthPerMinute,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  const ownVerifier: Verifier | undefined =
    options.verifier === undefined ? createVerifier(options.verifierOptions) : undefined;
  const verifier = options.verifier ?? (ownVerifier as Verifier);
  const usage = usageOf(options.usage, options.clock);
  const ownJobs =
    options.jobs === undefined ? new BulkJobManager({ verifier, usage: usage.meter }) : undefined;
  const heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  if (!Number.isInteger(heartbeatMs) || heartbeatMs < 1 || heartbeatMs > 3_600_000) {
    throw new OptionsError('heartbeatMs', 'must be an integer 1-3600000');
  }
  const jobs = options.jobs ?? (ownJobs as BulkJobManagerApi);
  const webhooks =
    options.webhooks === undefined
      ? undefined
      : createHttpWebhooks(
          jobs,
          options.webhooks,
          options.authenticate === undefined,
          options.apiKeyStore === undefined
            ? undefined
            : { store: options.apiKeyStore, clock: options.clock ?? Date.now },
        );
  const streams = liveStreams();
  const services: Services = {
    verifier,
    jobs,
    limits,
    openapi: openApiDocument(limits),
    creating: new Map(),
    reservedBytes: new ByteReservations(),
    webhooks,
    heartbeatMs,
    diagnostics,
    usage: { meter: usage.meter, store: usage.store },
    keyLimits: { store: usage.limits, clock: options.clock ?? Date.now },
    metrics: metricsSourceOf(options.metrics),
    streams,
  };
  const limiting = limits.requestsPerSecond !== Number.POSITIVE_INFINITY;
  const router = createRouter(ROUTES);
  const consoleOn = options.console !== false;
  const consoleFiles = consoleOn
    ? platform.readConsole(typeof options.console === 'object' ? options.console.dir : undefined)
    : undefined;
  let closed = false;

  const onRequest = options.onRequest;
  if (onRequest !== undefined && typeof onRequest !== 'function')
    throw new OptionsError('onRequest', 'must be a function');

  /**
   * Answers `request`, noting what it learns in `seen`; when `observer` is given, tells it before answering (in
   * this function, so that observing costs no promise of its own).
   */
  async function respond(request: Request, seen?: Seen, observer?: RequestObserver): Promise<Response> {
    const requestId = requestIdOf(request, generateId);
    let headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId };
    try {
      if (closed) throw new HttpError('service_unavailable', 'the server is shutting down');
      const { pathname, query } = pathAndQuery(targetOf(request));
      if (consoleOn && isConsolePath(pathname))
        return told(request, seen, observer, consoleResponse(consoleFiles, request.method, pathname));
      const match = router.match(request.method, pathname);
      if (seen !== undefined && match.kind === 'found') seen.route = match.route.path;
      const needsAuth = match.kind === 'found' ? match.route.auth : isV1(pathname);
      let tenant: string | undefined;
      let principal: Principal | undefined;
      if (needsAuth) {
        // Only a client with failed authentications has a bucket: none, no lookup (nor address) needed.
        if (authFailures.size() > 0) {
          const client = clientAddressOf(request);
          const gate = client === undefined ? undefined : authFailures.peek(client);
          if (gate !== undefined && !gate.allowed) {
            throw new HttpError('rate_limited', 'too many failed authentications from this address', {
              headers: { 'retry-after': String(gate.retryAfter) },
            });
          }
        }
        const answer = authenticate(request);
        const who = answer instanceof Promise ? await answer : answer;
        principal = who === null || who === undefined ? undefined : principalOf(who);
        if (principal === undefined || typeof principal.tenant !== 'string' || principal.tenant === '') {
          const client = clientAddressOf(request);
          if (client !== undefined) authFailures.take(client);
          throw new HttpError('unauthorized', undefined, { headers: { 'www-authenticate': 'Bearer' } });
        }
        tenant = principal.tenant;
        if (seen !== undefined) {
          seen.tenant = tenant;
          seen.keyId = principal.keyId;
        }
        const keyRate = keyRateOf(principal);
        if (keyRate !== undefined) {
          // The key's own rate, counted where every API node counts it, replaces the handler's limit.
          const decision = await takeKeyRequest(services.keyLimits, principal, keyRate);
          headers = { ...headers, ...decision.headers };
          if (!decision.allowed) {
            throw new HttpError('rate_limited', undefined, {
              headers: { 'retry-after': String(decision.retryAfter) },
            });
          }
        } else if (limiting) {
          const decision = limiter.take(tenant);
          headers = { ...headers, ...decision.headers };
          if (!decision.allowed) {
            throw new HttpError('rate_limited', undefined, {
              headers: { 'retry-after': String(decision.retryAfter) },
            });
          }
        }
      }
      if (match.kind === 'not_found') throw new HttpError('not_found', 'no such route');
      if (match.kind === 'method_not_allowed') {
        throw new HttpError('method_not_allowed', `use ${match.allow.join(', ')}`, {
          headers: { allow: match.allow.join(', ') },
        });
      }
      if (match.route.scope !== undefined) requireScope(principal, match.route.scope);
      // A request that makes or changes something is refused whole over a parameter it does not know.
      if (match.route.method === 'POST') rejectUnknownParams(query, queryNamesOf(match.route));
      const jsonText = jsonTextOf(headers, isLightRequest(request));
      const context: Context = {
        request,
        query,
        params: match.params,
        tenant,
        principal,
        headers,
        services,
        json: (status, body, extra) => jsonText(status, JSON.stringify(body), extra),
        jsonText,
      };
      return told(request, seen, observer, await OPERATIONS[match.route.operationId](context));
    } catch (error) {
      return told(request, seen, observer, errorResponse(error, requestId, logger, headers));
    }
  }

  /** The answer to HEAD: the GET response's status and headers, without its body. */
  async function head(request: Request, seen?: Seen): Promise<Response> {
    const response = await respond(request, seen);
    await response.body?.cancel();
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    return emptyResponse(response.status, headers);
  }

  const answer = (request: Request, seen?: Seen): Promise<Response> =>
    request.method === 'HEAD' ? head(request, seen) : respond(request, seen);

  /** Answers `request` and tells `onRequest` about it: a HEAD request once its answer without a body is made. */
  function observe(request: Request, observer: RequestObserver, seen: Seen = seenNow()): Promise<Response> {
    return request.method === 'HEAD'
      ? head(request, seen).then((response) => told(request, seen, observer, response))
      : respond(request, seen, observer); // not returned from an async function: that would cost two hops
  }

  const observed = onRequest === undefined ? answer : (request: Request) => observe(request, onRequest);
  /** Answers `request`: inside its span when an OpenTelemetry SDK is registered (http/trace.ts). */
  const handler = (request: Request): Promise<Response> => {
    const api = tracingApi();
    if (api === undefined) return observed(request);
    const seen = seenNow();
    const inner = onRequest === undefined ? answer : (r: Request, s: Seen) => observe(r, onRequest, s);
    return tracedRequest(api, request, seen, inner);
  };
  return Object.assign(handler, {
    drain() {
      streams.drain();
    },
    async close() {
      if (closed) return;
      closed = true;
      streams.drain();
      await ownJobs?.close();
      if (usage.ownMeter) await usage.meter.close().catch(() => undefined);
      await webhooks?.close();
      await ownVerifier?.dispose();
      if ('settle' in authenticate) await authenticate.settle();
    },
  });
}
