/**
 * What the handler's `metrics` option gives `GET /metrics`: a function making the exposition. Only types, so the
 * handler stays free of prom-client.
 * @module
 */

/** One exposition of the metrics: the text and its `content-type`. */
export interface MetricsExposition {
  /** `text/plain; version=0.0.4; charset=utf-8` for the Prometheus text format. */
  readonly contentType: string;
  /** The exposition itself. */
  readonly body: string;
}

/** Makes the exposition of `GET /metrics` (the handler's `metrics` option). */
export type MetricsSource = () => Promise<MetricsExposition>;
