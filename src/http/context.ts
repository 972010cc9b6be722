/**
 * What an operation sees of a request, and the shape of an operation.
 * @module
 */
import type { BulkJobManagerApi } from '../bulk/types.js';
import type { LimitStore, UsageStore } from '../bulk/usage.js';
import type { UsageMeter } from '../bulk/usage-meter.js';
import type { DiagnosticsReport } from '../doctor/types.js';
import type { Verifier } from '../verifier.js';
import type { ByteReservations } from './byte-reservations.js';
import type { HttpLimits } from './limits.js';
import type { MetricsSource } from './metrics-source.js';
import type { QueryParams } from './params.js';
import type { Principal } from './principal.js';
import type { HttpWebhooks } from './webhook-settings.js';

/** What the limits of keys (`Principal.requestsPerSecond`, `addressesPerDay`) need: the counters and the clock. */
export interface KeyLimits {
  /** The quota and rate counters. */
  readonly store: LimitStore;
  /** Clock in milliseconds (the UTC day of a quota, the refill of a bucket). */
  readonly clock: () => number;
}

/** The services and settings operations use, fixed when the handler is made. */
export interface Services {
  readonly verifier: Pick<Verifier, 'verify'>;
  readonly jobs: BulkJobManagerApi;
  readonly limits: Readonly<Required<HttpLimits>>;
  /** The OpenAPI document served at `/v1/openapi.json`. */
  readonly openapi: unknown;
  /** Jobs being created, per tenant: counted against `maxJobsPerKey` until they exist. */
  readonly creating: Map<string, number>;
  /** Bytes that requests in progress are about to add, per tenant: counted against the byte budgets until held. */
  readonly reservedBytes: ByteReservations;
  /** Webhook settings and notifier, when the `webhooks` option is given. */
  readonly webhooks: HttpWebhooks | undefined;
  /** Milliseconds between heartbeat comments of `GET /v1/bulk/{id}/events`. */
  readonly heartbeatMs: number;
  /** Runs (or reuses) the diagnosis of `GET /v1/diagnostics`; `undefined` while the route is off. */
  readonly diagnostics: (() => Promise<DiagnosticsReport>) | undefined;
  /** Where usage is counted (`meter`) and read back (`store`). */
  readonly usage: { readonly meter: UsageMeter; readonly store: UsageStore };
  /** The counters of keys' own rates and daily quotas. */
  readonly keyLimits: KeyLimits;
  /** Makes the exposition of `GET /metrics`; `undefined` while the route is off. */
  readonly metrics: MetricsSource | undefined;
  /** The live streams (job events), each by the function that ends it: a server that drains ends them all. */
  readonly streams: LiveStreams;
}

/** The live streams of a handler: ended when the server shuts down (see `Handler.drain`). */
export interface LiveStreams {
  /** True once the handler drains: a new stream ends at once. */
  readonly draining: boolean;
  /** Adds a stream's `end`; returns the function that removes it (when the stream ends by itself). */
  add(end: () => void): () => void;
}

/** One request, after routing and authentication. */
export interface Context {
  readonly request: Request;
  /** The query string's parameters. */
  readonly query: QueryParams;
  /** Decoded path parameters. */
  readonly params: Readonly<Record<string, string>>;
  /** The caller's tenant (`undefined` on routes without authentication). */
  readonly tenant: string | undefined;
  /** The caller: the tenant with its key's id, scopes and limits (`undefined` on routes without authentication). */
  readonly principal: Principal | undefined;
  /** Headers every response to this request carries (request id, rate limit). */
  readonly headers: Readonly<Record<string, string>>;
  readonly services: Services;
  /** A JSON response carrying {@link Context.headers} and `extra` (lightweight for the Node listener's requests). */
  json(status: number, body: unknown, extra?: Readonly<Record<string, string>>): Response;
  /** As {@link Context.json}, for a body already serialized to JSON `text`. */
  jsonText(status: number, text: string, extra?: Readonly<Record<string, string>>): Response;
}

/** The implementation of one route. */
export type Operation = (context: Context) => Promise<Response>;
