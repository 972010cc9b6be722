/**
 * The metrics flags of `mailvet serve` and `mailvet worker` (`--metrics-port`, `--metrics-host`, and serve's
 * `--metrics`), and the wiring of the metrics into a process. prom-client is loaded only when metrics are asked
 * for, so a process without them (and `mailvet verify`) never loads it.
 * @module
 */
import { isIP } from 'node:net';
import { memoryJobStore } from '../bulk/memory-store.js';
import type { BulkJobManagerApi, DurableJobStore, JobRecord, JobStore } from '../bulk/types.js';
import type { MailvetMetrics } from '../metrics/registry.js';
import type { MetricsServer } from '../metrics/server.js';
import type { VerifyOptions } from '../options.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { type Env, integer, single, switched } from './config.js';
import type { FleetChoice } from './fleet.js';
import { CliError, type CliIo, EXIT, quote, usageError } from './io.js';

/** `--metrics-port` and `--metrics-host`: the metrics listener of serve and worker. */
export const METRICS_LISTENER_FLAGS: readonly FlagSpec[] = [
  {
    name: 'metrics-port',
    type: 'string',
    value: '<port>',
    description:
      'serve GET /metrics (Prometheus text format) on a listener of its own on this port, 0 for any',
  },
  {
    name: 'metrics-host',
    type: 'string',
    value: '<address>',
    description: 'interface of the --metrics-port listener (default 127.0.0.1)',
  },
];

/** serve's `--metrics`: `GET /metrics` on the API port, for keys with the admin scope. */
export const METRICS_API_FLAG: FlagSpec = {
  name: 'metrics',
  type: 'boolean',
  description: 'also serve GET /metrics on the API port, to API keys with the admin scope',
};

/** Where the metrics are served, as the flags chose. */
export interface MetricsChoice {
  /** The listener of `--metrics-port`, if given. */
  readonly listener: { readonly port: number; readonly host: string } | undefined;
  /** `--metrics`: on the API port too. */
  readonly onApi: boolean;
}

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * Reads the metrics flags (and MAILVET_METRICS_PORT, MAILVET_METRICS_HOST, MAILVET_METRICS); `undefined` when no
 * metrics are asked for. `api` says whether `--metrics` exists (serve) or not (worker).
 */
export function metricsChoiceOf(args: ParsedArgs, env: Env, api: boolean): MetricsChoice | undefined {
  const portSource = single(args, env, 'metrics-port', 'MAILVET_METRICS_PORT');
  const hostSource = single(args, env, 'metrics-host', 'MAILVET_METRICS_HOST');
  const onApi = api && switched(args, env, 'metrics', 'MAILVET_METRICS');
  const port = portSource === undefined ? undefined : integer(portSource, 0, 65_535);
  if (hostSource !== undefined) {
    const host = hostSource.value;
    if (isIP(host) === 0 && !HOST_NAME.test(host)) {
      throw usageError(`${hostSource.label} must be an IP address or a host name, got ${quote(host)}`);
    }
    if (port === undefined) throw usageError(`${hostSource.label} applies to --metrics-port only`);
  }
  if (port === undefined && !onApi) return undefined;
  return {
    listener: port === undefined ? undefined : { port, host: hostSource?.value ?? '127.0.0.1' },
    onApi,
  };
}

/** Makes the process's metrics (loading prom-client now). */
export async function createProcessMetrics(): Promise<MailvetMetrics> {
  const { createMetrics } = await import('../metrics/registry.js');
  return createMetrics();
}

/** `options` with the metrics' verifier observer. */
export function observedOptions(options: VerifyOptions, metrics: MailvetMetrics | undefined): VerifyOptions {
  return metrics === undefined ? options : { ...options, observer: metrics.observer };
}

/** A job store that lists its jobs: a durable one, or {@link listedMemoryStore}. */
export type ListedJobStore = JobStore & Pick<DurableJobStore, 'listJobs'>;

/**
 * The manager's default memory store, which also lists the records it was given (a memory store keeps no list of
 * its own): the job gauges of a server without a durable store read them.
 */
export function listedMemoryStore(): ListedJobStore {
  const inner = memoryJobStore();
  const records = new Map<string, JobRecord>();
  return {
    ...inner,
    saveJob(record) {
      records.set(record.id, record);
      return inner.saveJob(record);
    },
    deleteJob(id) {
      records.delete(id);
      return inner.deleteJob(id);
    },
    listJobs: async () => [...records.values()],
  };
}

/**
 * Feeds the job gauges every tenant's jobs: the records of `store` (the manager's own `list` shows one tenant's),
 * and for an unfinished job its greylisting retries, from the manager.
 */
export function watchJobs(metrics: MailvetMetrics, jobs: BulkJobManagerApi, store: ListedJobStore): void {
  metrics.watchJobs({
    async jobs() {
      const records = await store.listJobs();
      return Promise.all(
        records.map(async (record) => {
          const unfinished = record.status === 'queued' || record.status === 'processing';
          const job = unfinished
            ? await jobs.get(record.id, record.owner === null ? undefined : { owner: record.owner })
            : undefined;
          return job ?? { ...record, retries: { waiting: 0 } };
        }),
      );
    },
  });
}

/**
 * Pings the fleet's Redis at each scrape, on a connection of its own (made now, closed by the returned function).
 */
export async function watchRedis(metrics: MailvetMetrics, fleet: FleetChoice): Promise<() => void> {
  const { redisPinger } = await import('../bullmq/index.js');
  const pinger = await redisPinger({
    connection: fleet.url,
    ...(fleet.prefix === undefined ? {} : { prefix: fleet.prefix }),
  });
  metrics.watchRedis(pinger.ping);
  return pinger.close;
}

/**
 * Starts the `--metrics-port` listener; a port that cannot be had is exit 3 naming it (the caller releases what it
 * opened).
 */
export async function listenForMetrics(
  listener: NonNullable<MetricsChoice['listener']>,
  metrics: MailvetMetrics,
  io: CliIo,
): Promise<MetricsServer> {
  const { startMetricsServer } = await import('../metrics/server.js');
  try {
    return await startMetricsServer({
      port: listener.port,
      host: listener.host,
      exposition: () => metrics.exposition(),
      onError: (error) => {
        io.stderr.write(`mailvet: metrics: ${error instanceof Error ? error.message : String(error)}\n`);
      },
    });
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const reason =
      code === 'EADDRINUSE'
        ? 'the address is in use'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND'
            ? 'no such local address'
            : String(code ?? error);
    throw new CliError(EXIT.io, `cannot listen for metrics on ${listener.host}:${listener.port}: ${reason}`, {
      cause: error,
    });
  }
}
