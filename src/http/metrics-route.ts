/**
 * `GET /metrics` on the API port: the server's metrics in the Prometheus text format, for a key with the
 * `admin` scope. Off unless the handler's `metrics` option gives a source (`mailvet serve --metrics`); the
 * handler never makes metrics itself, so nothing here knows prom-client.
 * @module
 */
import { OptionsError } from '../errors.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';
import type { MetricsSource } from './metrics-source.js';
import type { Principal, Scope } from './principal.js';

/** The scope `GET /metrics` needs. */
export const METRICS_SCOPE: Scope = 'admin';

/** Validates the handler's `metrics` option. */
export function metricsSourceOf(value: unknown): MetricsSource | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new OptionsError('metrics', 'must be a function that resolves { contentType, body }');
  }
  return value as MetricsSource;
}

/**
 * Refuses `principal` with 403, naming the scope, unless it holds `scope` (a principal without `scopes`
 * holds them all).
 */
export function requireScope(principal: Principal | undefined, scope: Scope): void {
  if (principal?.scopes === undefined || principal.scopes.includes(scope)) return;
  throw new HttpError('forbidden', `this API key lacks the scope ${scope}`);
}

/** Answers with the metrics, 404 when they are off, 403 for a key without the `admin` scope. */
export const getMetrics: Operation = async ({ services, principal, headers }) => {
  // A `scope` field of the route table, where the handler checks every route's scope, replaces this line.
  requireScope(principal, METRICS_SCOPE);
  if (services.metrics === undefined) {
    throw new HttpError('not_found', 'metrics are off on this server (mailvet serve --metrics)');
  }
  const { contentType, body } = await services.metrics();
  return new Response(body, {
    status: 200,
    headers: { ...headers, 'content-type': contentType, 'cache-control': 'no-store' },
  });
};
