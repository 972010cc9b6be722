/**
 * mailvet's Prometheus metrics: one prom-client `Registry` per server or worker (never the global one), fed only
 * through the observer seams of the verifier, the HTTP handler, the job store and the webhook log. Node-side:
 * only `mailvet serve` and `mailvet worker` load it, so `mailvet verify` starts without prom-client.
 * @module
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { MetricsExposition } from '../http/metrics-source.js';
import type { RequestRecord } from '../http/request-record.js';
import type { DnsCounters, SmtpCounters, VerifierObserver } from '../observer.js';
import type { QueryObserver } from '../postgres/observed-driver.js';
import type { WebhookLog } from '../webhooks/log.js';
import {
  ADDRESS_STATES,
  JOB_STATES,
  methodLabel,
  NO_ROUTE,
  providerLabel,
  REPLY_CLASSES,
  statusCodeLabel,
  statusLabel,
  subStatusLabel,
  type TallyJob,
  tallyJobs,
  webhookOutcome,
} from './series.js';
import { type HistogramCell, labelCells, observeIn, tallyHistogram } from './tally.js';

/** Buckets of the verification duration histogram, in seconds (an SMTP probe takes seconds, a syntax check µs). */
export const VERIFICATION_BUCKETS = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Buckets of the HTTP request duration histogram, in seconds. */
export const HTTP_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Buckets of the store's and Redis's round-trip histograms, in seconds. */
export const ROUND_TRIP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** prom-client's default gauges whose names end in `_total`, left out. */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** How long a scrape waits for Redis to answer its PING before counting an error, in milliseconds. */
export const REDIS_PING_TIMEOUT_MS = 2000;

/** Options of {@link createMetrics}. */
export interface MetricsOptions {
  /**
   * Node's process metrics (`process_*`, `nodejs_*`: CPU, memory, event-loop lag, handles) from prom-client's
   * `collectDefaultMetrics`. @default true
   */
  readonly processMetrics?: boolean;
}

/** Where the job gauges come from: every tenant's jobs, read at each scrape. */
export interface JobsSource {
  /** The jobs, with their state, size, progress and greylisting retries. */
  jobs(): Promise<readonly TallyJob[]>;
}

/** The metrics of one server or worker, and the observers that feed them. */
export interface MailvetMetrics {
  /** The registry (its own, never prom-client's global one). */
  readonly registry: Registry;
  /** The `observer` option of the verifier: verifications, and the DNS cache's and SMTP pool's counters. */
  readonly observer: VerifierObserver;
  /** The `onRequest` option of the HTTP handler: requests by method, route template and status, durations. */
  readonly onRequest: (record: RequestRecord) => void;
  /** The `onQuery` option of the job store: its round trips and errors. */
  readonly onQuery: QueryObserver;
  /** `inner` (the webhook delivery log) with each attempt counted by outcome. */
  webhookLog(inner: WebhookLog): WebhookLog;
  /** Reads `jobs` at each scrape for the jobs-by-state and addresses gauges. */
  watchJobs(jobs: JobsSource): void;
  /** PINGs Redis at each scrape (`ping` resolves on PONG) for its round-trip histogram and errors. */
  watchRedis(ping: () => Promise<void>): void;
  /** The exposition in the Prometheus text format. */
  exposition(): Promise<MetricsExposition>;
}

/** Rejects after `ms`, so that a Redis that never answers cannot hold a scrape. */
function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * `work`, run at most once at a time: a call while a run is under way gets that run's promise (the metrics of one
 * scrape, collected concurrently, share one read).
 */
function inFlightOnce<T>(work: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  return () => {
    if (running !== undefined) return running;
    const run = work().finally(() => {
      if (running === run) running = undefined;
    });
    running = run;
    return run;
  };
}

/** A count of one label set, kept on the hot path and handed to its counter at each scrape. */
interface CountCell {
  readonly labels: Readonly<Record<string, string>>;
  n: number;
}

/** Sets `counter` to the counts of `cells` (prom-client's `inc` hashes the labels: once per set and scrape here). */
function countInto(counter: Counter, cells: readonly CountCell[]): void {
  counter.reset();
  for (const { labels, n } of cells) counter.inc(labels, n);
}

/** Sums `field` over the sources' current counters. */
function sum<T>(sources: readonly (() => T)[], field: (stats: T) => number): number {
  let total = 0;
  for (const read of sources) total += field(read());
  return total;
}

/**
 * Makes mailvet's metrics on a registry of their own. Pass `observer` to `createVerifier`, `onRequest` to
 * `createHandler`, `onQuery` to the SQL store, `webhookLog(memoryWebhookLog())` as the webhooks' `log`; then serve
 * `exposition()`. docs/operations.md lists the series.
 * @example
 * const metrics = createMetrics();
 * const verifier = createVerifier({ observer: metrics.observer });
 * const { body } = await metrics.exposition();
 */
export function createMetrics(options: MetricsOptions = {}): MailvetMetrics {
  const registry = new Registry();
  if (options.processMetrics !== false) {
    collectDefaultMetrics({ register: registry });
    // Gauges named like counters (promtool check metrics flags them): the same figures, by type, stay in
    // nodejs_active_handles, nodejs_active_requests and nodejs_active_resources.
    for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  }
  const registers = [registry];
  const dnsSources: (() => DnsCounters)[] = [];
  const smtpSources: (() => SmtpCounters)[] = [];
  const jobSources: JobsSource[] = [];
  const pings: (() => Promise<void>)[] = [];

  const verificationCounts = labelCells(
    ['status', 'sub_status', 'provider'],
    (labels): CountCell => ({ labels, n: 0 }),
  );
  new Counter({
    name: 'mailvet_verifications_total',
    help: 'Verifications finished, by status, sub-status and recognised mail provider (other: none recognised).',
    labelNames: ['status', 'sub_status', 'provider'] as const,
    registers,
    collect() {
      countInto(this, verificationCounts.all());
    },
  });
  const verificationSeconds = tallyHistogram({
    name: 'mailvet_verification_duration_seconds',
    help: 'How long one verification took, in seconds.',
    buckets: VERIFICATION_BUCKETS,
    registers,
  });
  const verificationCell = verificationSeconds.cell({});
  /** A counter read from the sources' counters at each scrape. */
  const pulled = <T>(name: string, help: string, sources: (() => T)[], field: (stats: T) => number) =>
    new Counter({
      name,
      help,
      registers,
      collect() {
        this.reset();
        this.inc(sum(sources, field));
      },
    });
  pulled('mailvet_dns_queries_total', 'DNS lookups sent to DNS servers.', dnsSources, (s) => s.misses);
  pulled(
    'mailvet_dns_cache_hits_total',
    'DNS lookups answered from the cache (or joining a lookup in flight).',
    dnsSources,
    (s) => s.hits + s.coalesced,
  );
  pulled(
    'mailvet_smtp_sessions_opened_total',
    'SMTP sessions opened (attempts included).',
    smtpSources,
    (s) => s.opened,
  );
  pulled(
    'mailvet_smtp_sessions_reused_total',
    'SMTP probes served by a session opened for an earlier one.',
    smtpSources,
    (s) => s.reused,
  );
  pulled(
    'mailvet_smtp_sessions_failed_total',
    'SMTP sessions that could not be opened (connect, greeting, EHLO or TLS failed, or the budget ran out).',
    smtpSources,
    (s) => s.failed,
  );
  pulled(
    'mailvet_smtp_mx_backoffs_total',
    'Times a mail host was put in backoff (421, or too many errors).',
    smtpSources,
    (s) => s.backoffs,
  );
  new Counter({
    name: 'mailvet_smtp_replies_total',
    help: 'Replies to RCPT TO (and refusals of MAIL FROM), by class.',
    labelNames: ['class'] as const,
    registers,
    collect() {
      this.reset();
      for (const [label, field] of REPLY_CLASSES)
        this.inc(
          { class: label },
          sum(smtpSources, (s) => s[field]),
        );
    },
  });
  new Gauge({
    name: 'mailvet_smtp_pool_sessions',
    help: 'SMTP sessions holding a pool slot now (opening, busy or idle).',
    registers,
    collect() {
      this.set(sum(smtpSources, (s) => s.open));
    },
  });
  new Gauge({
    name: 'mailvet_smtp_pool_waiters',
    help: 'SMTP probes waiting for a session now.',
    registers,
    collect() {
      this.set(sum(smtpSources, (s) => s.waiting));
    },
  });

  // The registry collects its metrics concurrently: both job gauges share one read of the jobs per scrape.
  const tallyOnce = inFlightOnce(async () => {
    if (jobSources.length === 0) return undefined;
    const lists = await Promise.all(jobSources.map((source) => source.jobs().catch(() => undefined)));
    if (lists.some((list) => list === undefined)) return undefined; // the store did not answer: no fresh figures
    return tallyJobs(lists.flatMap((list) => list ?? []));
  });
  new Gauge({
    name: 'mailvet_jobs',
    help: 'Bulk jobs by state.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const tally = await tallyOnce();
      if (tally !== undefined) for (const state of JOB_STATES) this.set({ state }, tally.jobs[state]);
    },
  });
  new Gauge({
    name: 'mailvet_job_addresses',
    help: 'Addresses of bulk jobs: queued (of unfinished jobs), done (final result), retry_waiting (greylisted).',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      const tally = await tallyOnce();
      if (tally !== undefined)
        for (const state of ADDRESS_STATES) this.set({ state }, tally.addresses[state]);
    },
  });

  const webhookDeliveries = new Counter({
    name: 'mailvet_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (delivered, retrying, failed).',
    labelNames: ['outcome'] as const,
    registers,
  });

  const httpSeconds = tallyHistogram({
    name: 'mailvet_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (until its headers are ready), in seconds, by method and route.',
    buckets: HTTP_BUCKETS,
    registers,
  });
  const httpCells = labelCells(['method', 'route'], (labels) => httpSeconds.cell(labels));
  // One cell per method, route and status, holding its method and route's histogram cell.
  const requestCounts = labelCells(
    ['method', 'route', 'status'],
    (labels): CountCell & { readonly seconds: HistogramCell } => ({
      labels,
      n: 0,
      seconds: httpCells.at(labels.method as string, labels.route as string),
    }),
  );
  new Counter({
    name: 'mailvet_http_requests_total',
    help: 'HTTP requests answered, by method, route template (none: no route matched) and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
    collect() {
      countInto(this, requestCounts.all());
    },
  });

  const storeSeconds = new Histogram({
    name: 'mailvet_store_query_duration_seconds',
    help: 'Round trip of one job store statement (PostgreSQL or PGlite), in seconds.',
    buckets: ROUND_TRIP_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({
    name: 'mailvet_store_errors_total',
    help: 'Job store statements that failed.',
    registers,
  });
  // One PING per Redis per scrape, shared by the histogram and the error counter.
  const pingOnce = inFlightOnce(() =>
    Promise.all(
      pings.map(async (ping) => {
        const started = performance.now();
        try {
          await withTimeout(ping(), REDIS_PING_TIMEOUT_MS);
          return (performance.now() - started) / 1000;
        } catch {
          return undefined;
        }
      }),
    ),
  );
  new Histogram({
    name: 'mailvet_redis_round_trip_seconds',
    help: "Round trip of a PING to the fleet's Redis, one per scrape, in seconds.",
    buckets: ROUND_TRIP_BUCKETS,
    registers,
    async collect() {
      for (const seconds of await pingOnce()) if (seconds !== undefined) this.observe(seconds);
    },
  });
  new Counter({
    name: 'mailvet_redis_errors_total',
    help: "PINGs to the fleet's Redis that failed or timed out.",
    registers,
    async collect() {
      const failed = (await pingOnce()).filter((seconds) => seconds === undefined).length;
      if (failed > 0) this.inc(failed);
    },
  });

  return {
    registry,
    observer: {
      verified(result, durationMs) {
        // The labels one by one, as verificationLabels makes them: no label object per verification.
        const status = statusLabel(result.status);
        const subStatus = subStatusLabel(result.sub_status);
        verificationCounts.at(status, subStatus, providerLabel(result.smtp_provider)).n += 1;
        observeIn(verificationCell, verificationSeconds.bounds, durationMs / 1000);
      },
      dns: (stats) => void dnsSources.push(stats),
      smtp: (stats) => void smtpSources.push(stats),
    },
    onRequest(record) {
      // The labels one by one, as requestLabels makes them: no label object per request.
      const method = methodLabel(record.method);
      const cell = requestCounts.at(method, record.route ?? NO_ROUTE, statusCodeLabel(record.status));
      cell.n += 1;
      observeIn(cell.seconds, httpSeconds.bounds, record.durationMs / 1000);
    },
    onQuery(durationMs, failed) {
      if (failed) storeErrors.inc();
      else storeSeconds.observe(durationMs / 1000);
    },
    webhookLog(inner) {
      return {
        append(jobId, attempt) {
          webhookDeliveries.inc({ outcome: webhookOutcome(attempt.state) });
          return inner.append(jobId, attempt);
        },
        list: (jobId) => inner.list(jobId),
      };
    },
    watchJobs(jobs) {
      jobSources.push(jobs);
    },
    watchRedis(ping) {
      pings.push(ping);
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
