/**
 * `mailvet serve [--port --host]`: runs the HTTP API on node:http until Ctrl-C or SIGTERM.
 * @module
 */
import { type RunningServer, startApiServer } from '../api-server.js';
import { BulkJobManager } from '../bulk/manager.js';
import type { FleetJobStore, JobRunner } from '../bulk/runner.js';
import type { Resolver } from '../dns/types.js';
import type { DiagnoseOptions } from '../doctor/options.js';
import { keysFromEnv } from '../io/api-key.js';
import { errorFields } from '../io/log-text.js';
import type { MailvetMetrics } from '../metrics/registry.js';
import type { MetricsServer } from '../metrics/server.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { memoryWebhookLog } from '../webhooks/log.js';
import type { WebhookServerDetail } from '../webhooks/notifier.js';
import { type FlagSpec, flagHelp, parseArgs } from './args.js';
import {
  type CliSettings,
  integer,
  readSettings,
  single,
  switched,
  VERIFY_FLAGS,
  verifyOptionsOf,
} from './config.js';
import { checkFleetRedis, FLEET_FLAGS, type FleetChoice, fleetChoiceOf, fleetPlace } from './fleet.js';
import { greylistDelaysOf } from './greylist.js';
import { heloWarning } from './helo.js';
import { CliError, type CliIo, EXIT, usageError, write } from './io.js';
import { logJobs, workerJobLog } from './job-log.js';
import { KNOWN_RESULTS_FLAGS, knownResultsChoiceOf, openKnownResults } from './known-results.js';
import { LOG_FLAGS, logSettingsOf, shutdownTimeoutMsOf } from './log-settings.js';
import type { CliLogger } from './logger.js';
import {
  createProcessMetrics,
  type ListedJobStore,
  listedMemoryStore,
  listenForMetrics,
  METRICS_API_FLAG,
  METRICS_LISTENER_FLAGS,
  metricsChoiceOf,
  observedOptions,
  watchJobs,
  watchRedis,
} from './metrics.js';
import { optionsUsageError } from './options-error.js';
import { logWarning, serviceLogger, stopSignal } from './service-log.js';
import {
  apiKeysOf,
  damageWarnings,
  openStore,
  retentionMsOf,
  STORE_FLAGS,
  storeChoiceOf,
  storeCliError,
  storePlace,
} from './store.js';
import { serveUsage } from './usage.js';
import {
  WEBHOOK_FLAG_NAMES,
  WEBHOOK_FLAGS,
  type WebhookChoice,
  webhookChoiceOf,
} from './webhook-settings.js';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'port',
    type: 'string',
    value: '<port>',
    description: 'TCP port, 0 for any free one (default 8080)',
  },
  {
    name: 'host',
    type: 'string',
    value: '<address>',
    description: 'interface to listen on (default 127.0.0.1)',
  },
  { name: 'no-console', type: 'boolean', description: 'do not serve the web console at /' },
  {
    name: 'diagnostics',
    type: 'boolean',
    description: 'serve GET /v1/diagnostics, the mailvet doctor report of this host (off by default)',
  },
  ...METRICS_LISTENER_FLAGS,
  METRICS_API_FLAG,
  {
    name: 'greylist-delays',
    type: 'string',
    value: '<s,s,...|none>',
    description: 'greylisting retry delays in seconds (default 60,300,900); none: no retries',
  },
  ...WEBHOOK_FLAGS,
  ...STORE_FLAGS,
  ...KNOWN_RESULTS_FLAGS,
  ...FLEET_FLAGS,
  {
    name: 'work',
    type: 'boolean',
    description:
      'with --redis: this process also works as a worker of the fleet (with the verification flags)',
  },
  ...LOG_FLAGS,
  ...VERIFY_FLAGS,
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** The `webhooks` option of the server: the keys' secrets, the guard's settings named by their flags. */
function webhookOptionsOf(
  choice: WebhookChoice,
  resolver: Resolver | undefined,
  logger: CliLogger,
  metrics: MailvetMetrics | undefined,
) {
  return {
    ...(metrics === undefined ? {} : { log: metrics.webhookLog(memoryWebhookLog()) }),
    keys: choice.keys,
    allowAddresses: choice.allowAddresses,
    allowHttpWebhooks: choice.allowHttp,
    settingNames: WEBHOOK_FLAG_NAMES,
    // What the tenant is not told (the address a host resolved to, a raw transport error) goes to the log.
    onDetail: (detail: WebhookServerDetail) => {
      const job = detail.jobId === null ? '' : ` (job ${detail.jobId})`;
      logger.log.warn({ job_id: detail.jobId, host: detail.host }, `webhook${job}: ${detail.detail}`);
    },
    ...(resolver === undefined ? {} : { resolver }),
  };
}

/** Help text of `mailvet serve`. */
export const SERVE_HELP = `Usage: mailvet serve [flags]

Runs the HTTP API (/v1/verify, /v1/bulk, /v1/openapi.json, /healthz) and the web console (/) until Ctrl-C
or SIGTERM.
API keys come from MAILVET_API_KEYS (comma-separated) and, with --data or --store, from the job store
(mailvet keys create: scopes, limits, revoke, rotate); clients send "Authorization: Bearer <key>".
The verification flags below set how the server verifies.

Flags:
${flagHelp(FLAGS)}

Jobs live in memory unless --data DIR (an embedded PostgreSQL, PGlite) or --store postgres://... is given: then
they survive restarts and crashes, and unfinished jobs resume when the server starts (see docs/bulk.md).
With --redis redis://... (and --store) the server is an API node of a worker fleet: \`mailvet worker\` processes
verify the jobs (this one too with --work); see docs/scaling.md.
With --data or --store, a verdict a mail server gave answers the same API key's next verification of the address
for a while without asking again (docs/known-results.md): --known-results-ttl sets how long, --no-known-results
turns it off, fresh=true in a request asks anyway.

Metrics (Prometheus text format, see docs/operations.md): --metrics-port serves GET /metrics on a listener of its
own (127.0.0.1 by default: keep it off the public network); --metrics serves it on the API port to API keys with
the admin scope (every key of MAILVET_API_KEYS holds it).

Environment: MAILVET_API_KEYS (required without a job store), MAILVET_PORT, MAILVET_HOST, MAILVET_DIAGNOSTICS=1, MAILVET_METRICS_PORT,
MAILVET_METRICS_HOST, MAILVET_METRICS=1, MAILVET_DATA,
MAILVET_STORE, MAILVET_RETENTION_DAYS, MAILVET_REDIS, MAILVET_PREFIX, and the MAILVET_* of the flags.
Signed job webhooks (POST /v1/bulk with "webhook": { "url": "https://..." }; see docs/events.md) are on when
--webhook-secrets-file (MAILVET_WEBHOOK_SECRETS_FILE) gives API keys their own whsec_ secrets, or
MAILVET_WEBHOOK_SECRETS (whsec_..., two comma-separated while rotating) one secret for every other key, and
for the keys of a job store (--data, --store) given a secret by mailvet keys create --webhook-secret or
mailvet keys webhook-secret.
Exit codes: 0 stopped, 2 usage error (no API keys, bad flag), 3 cannot listen, open the job store or use the
fleet's Redis.
Example: MAILVET_API_KEYS=secret mailvet serve --port 8080
`;

/** The options of `GET /v1/diagnostics`: the same host settings the server verifies with. */
function diagnoseOptionsOf(settings: CliSettings, resolver: Resolver | undefined): DiagnoseOptions {
  return {
    allowAddresses: settings.allowAddresses,
    allowTlds: settings.allowTlds,
    ...(resolver === undefined ? {} : { resolver }),
    ...(settings.proxy === undefined ? {} : { proxy: settings.proxy }),
    ...(settings.heloHost === undefined ? {} : { heloHost: settings.heloHost }),
    ...(settings.mailFrom === undefined ? {} : { mailFrom: settings.mailFrom }),
    ...(settings.smtpPort === undefined ? {} : { smtpPort: settings.smtpPort }),
  };
}

/** The runner of an API node of the fleet on `fleet`. */
async function fleetRunner(fleet: FleetChoice): Promise<JobRunner> {
  const { bullmqRunner } = await import('../bullmq/index.js');
  return bullmqRunner({
    connection: fleet.url,
    ...(fleet.prefix === undefined ? {} : { prefix: fleet.prefix }),
  });
}

/** `--work`: a worker of the fleet in this process, with the server's verifier and store. */
async function fleetWorker(
  fleet: FleetChoice,
  store: FleetJobStore,
  verifier: Verifier,
  logger: CliLogger,
): Promise<{ close(): Promise<void> }> {
  const { createWorker } = await import('../bullmq/index.js');
  return createWorker({
    connection: fleet.url,
    ...(fleet.prefix === undefined ? {} : { prefix: fleet.prefix }),
    store,
    verifier,
    onError: (error) => {
      logger.log.error({ error: errorFields(error, logger.addresses) }, 'worker error');
    },
    onJob: workerJobLog(logger),
  });
}

/** Runs `mailvet serve`; resolves with the exit code once the server has stopped. */
export async function runServe(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet serve');
  if (args.flag('help')) {
    await write(io.stdout, SERVE_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length > 0)
    throw usageError(`serve takes no arguments, got ${JSON.stringify(args.positionals[0])}`);
  const portSource = single(args, io.env, 'port', 'MAILVET_PORT');
  const port = portSource === undefined ? 8080 : integer(portSource, 0, 65_535);
  const host = single(args, io.env, 'host', 'MAILVET_HOST')?.value ?? '127.0.0.1';
  const apiKeys = keysFromEnv(io.env);
  const metricsChoice = metricsChoiceOf(args, io.env, true);
  const storeChoice = storeChoiceOf(args, io.env);
  // A job store's keys may hold webhook secrets of their own (mailvet keys webhook-secret): webhooks are on.
  const cwd = io.cwd ?? process.cwd();
  const webhooks = await webhookChoiceOf(args, io.env, apiKeys, cwd, storeChoice.kind !== 'memory');
  const greylistDelaysMs = greylistDelaysOf(
    single(args, io.env, 'greylist-delays', 'MAILVET_GREYLIST_DELAYS'),
  );
  if (apiKeys.length === 0 && storeChoice.kind === 'memory') {
    throw usageError(
      'serve needs API keys: set MAILVET_API_KEYS=key1,key2, or keep keys in a job store (--data or --store, then mailvet keys create)',
    );
  }
  const fleet = fleetChoiceOf(args, io.env);
  const work = switched(args, io.env, 'work', 'MAILVET_WORK');
  if (fleet !== undefined && storeChoice.kind !== 'postgres') {
    throw usageError('--redis needs --store postgres://...: the fleet keeps its jobs on a PostgreSQL server');
  }
  if (fleet === undefined && work) throw usageError('--work applies to --redis only');
  const retentionMs = retentionMsOf(args, io.env);
  const knownChoice = knownResultsChoiceOf(args, io.env, storeChoice);
  const settings = readSettings(args, io.env);
  const diagnostics = switched(args, io.env, 'diagnostics', 'MAILVET_DIAGNOSTICS');
  const logSettings = logSettingsOf(args, io.env, io.stdoutIsTTY === true);
  const shutdownTimeoutMs = shutdownTimeoutMsOf(args, io.env);
  if (fleet !== undefined) await checkFleetRedis(fleet); // one clear line before anything is opened
  const logger = serviceLogger(logSettings, io);
  const built = verifyOptionsOf(settings);
  const metrics = metricsChoice === undefined ? undefined : await createProcessMetrics();
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(storeChoice, metrics?.onQuery);
  } catch (error) {
    built.close();
    throw error;
  }
  // Known results live in the store's database: the verifier is made once the store is open.
  const known = openKnownResults(knownChoice, store);
  let verifier: Verifier;
  try {
    verifier = (io.createVerifier ?? createVerifier)(
      observedOptions(
        {
          ...built.options,
          ...(known === undefined ? {} : { knownResults: known.knownResults }),
          ...(knownChoice.kind === 'on' && knownChoice.ttl !== undefined
            ? { knownResultsTtlMs: knownChoice.ttl }
            : {}),
        },
        metrics,
      ),
    );
  } catch (error) {
    await known?.close();
    await store?.close?.();
    built.close();
    throw optionsUsageError(error) ?? error;
  }
  for (const warning of damageWarnings(store)) logWarning(logger, warning);
  const runner = fleet === undefined ? undefined : await fleetRunner(fleet);
  // Usage and keys' limits: in the job store's database, on the fleet's Redis, or in this process.
  const usage = await serveUsage(store, fleet, (error) => {
    logger.log.warn(
      { error: errorFields(error, logger.addresses) },
      'usage counts not written yet (kept for the next try)',
    );
  });
  // With metrics, the memory store is made here: the job gauges read every tenant's jobs from it.
  const listed =
    metrics === undefined ? undefined : ((store as ListedJobStore | undefined) ?? listedMemoryStore());
  const jobStore = listed ?? store;
  const jobs = new BulkJobManager({
    // A fleet's workers count bulk usage in their commits; this process counts what it verifies.
    ...(runner === undefined ? { verifier, usage: usage.meter } : { runner }),
    ...(jobStore === undefined ? {} : { store: jobStore }),
    ...(retentionMs === undefined ? {} : { retentionMs }),
    ...(greylistDelaysMs === undefined ? {} : { greylistRetry: { delaysMs: greylistDelaysMs } }),
  });
  const stopLogging = logJobs(jobs, logger);
  let worker: { close(): Promise<void> } | undefined;
  let stopRedisPings: (() => void) | undefined;
  const release = async (): Promise<void> => {
    stopRedisPings?.();
    await worker?.close().catch(() => {});
    // A durable store's unfinished jobs stay as they are and their leases are released: the next start resumes them.
    await jobs
      .close()
      .catch((error: unknown) =>
        logger.log.error({ error: errorFields(error, logger.addresses) }, 'closing the jobs failed'),
      );
    stopLogging();
    await usage.close().catch(() => {});
    await verifier.dispose();
    await known?.close();
    built.close();
  };
  try {
    await jobs.opened(); // unfinished jobs of a durable store resume now
    if (fleet !== undefined && work)
      worker = await fleetWorker(fleet, store as FleetJobStore, verifier, logger);
    if (metrics !== undefined) {
      if (listed !== undefined) watchJobs(metrics, jobs, listed);
      if (fleet !== undefined) stopRedisPings = await watchRedis(metrics, fleet);
    }
  } catch (error) {
    await release();
    throw storeCliError(error);
  }

  const keyStore = apiKeysOf(store);
  let running: RunningServer;
  try {
    running = await startApiServer({
      port,
      host,
      apiKeys,
      ...(keyStore === undefined ? {} : { apiKeyStore: keyStore }),
      verifier,
      jobs,
      usage: { store: usage.store, meter: usage.meter, limits: usage.limits },
      ...(webhooks === undefined
        ? {}
        : { webhooks: webhookOptionsOf(webhooks, built.options.resolver, logger, metrics) }),
      ...(metrics !== undefined && metricsChoice?.onApi ? { metrics: () => metrics.exposition() } : {}),
      console: !args.flag('no-console'),
      ...(diagnostics
        ? { diagnostics: { options: diagnoseOptionsOf(settings, built.options.resolver) } }
        : {}),
      log: logger.log,
      addresses: logger.addresses,
      ...(metrics === undefined ? {} : { onRequest: metrics.onRequest }),
      shutdownTimeoutMs,
    });
  } catch (error) {
    await release();
    const usage = optionsUsageError(error);
    if (usage !== undefined) throw usage;
    const code = (error as { code?: unknown } | null)?.code;
    const reason =
      code === 'EADDRINUSE'
        ? 'the address is in use'
        : code === 'EACCES'
          ? 'permission denied'
          : String(code ?? error);
    throw new CliError(EXIT.io, `cannot listen on ${host}:${port}: ${reason}`, { cause: error });
  }
  let metricsServer: MetricsServer | undefined;
  if (metrics !== undefined && metricsChoice?.listener !== undefined) {
    try {
      metricsServer = await listenForMetrics(metricsChoice.listener, metrics, io);
    } catch (error) {
      await running.close();
      await release();
      throw error;
    }
  }
  const helo = heloWarning(settings, io.hostname);
  if (helo !== undefined) logWarning(logger, helo);
  for (const warning of webhooks?.warnings ?? []) logWarning(logger, warning);

  logger.log.info(
    { url: running.url },
    `mailvet API listening on ${running.url} (${apiKeys.length} API key${apiKeys.length === 1 ? '' : 's'}${store === undefined ? '' : ' and the stored keys'}; jobs ${storePlace(storeChoice)}${fleet === undefined ? '' : `, verified by the fleet on ${fleetPlace(fleet)}${work ? ' (this process works too)' : ''}`}); Ctrl-C stops it`,
  );
  if (metricsServer !== undefined)
    logger.log.info({ url: metricsServer.url }, `mailvet metrics on ${metricsServer.url}`);
  await stopSignal(io);
  logger.log.info(
    { shutdown_timeout_ms: shutdownTimeoutMs },
    'mailvet API stopping: no new connections; requests in flight finish',
  );
  await metricsServer?.close();
  // Stops accepting, ends event streams, lets requests in flight finish (cut after shutdownTimeoutMs).
  await running.close();
  await release();
  logger.log.info('mailvet API stopped');
  await logger.flush();
  return EXIT.ok;
}
