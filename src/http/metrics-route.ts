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

/** Validates the handler's `metrics` option. */
export function metricsSourceOf(value: unknown): MetricsSource | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new OptionsError('metrics', 'must be a function that resolves { contentType, body }');
  }
  return value as MetricsSource;
}

/** Answers with the metrics, or 404 when they are off (the route's `admin` scope is checked by the handler). */
export const getMetrics: Operation = async ({ services, headers }) => {
  if (services.metrics === undefined) {
    throw new HttpError('not_found', 'metrics are off on this server (mailvet serve --metrics)');
  }
  const { contentType, body } = await services.metrics();
  return new Response(body, {
    status: 200,
    headers: { ...headers, 'content-type': contentType, 'cache-control': 'no-store' },
  });
};
