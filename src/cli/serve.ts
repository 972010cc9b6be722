/**
 * `mailvet serve [--port --host]`: runs the HTTP API on node:http until Ctrl-C or SIGTERM.
 * @module
 */
import { BulkJobManager } from '../bulk/manager.js';
import type { FleetJobStore, JobRunner } from '../bulk/runner.js';
import type { Resolver } from '../dns/types.js';
import type { DiagnoseOptions } from '../doctor/options.js';
import { keysFromEnv } from '../http/auth.js';
import { createServer, type RunningServer } from '../http/node.js';
import { httpErrorLog, requestLog } from '../http/request-log.js';
import { errorFields } from '../io/log-text.js';
import { createVerifier, type Verifier } from '../verifier.js';
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
import { LOG_FLAGS, logSettingsOf, shutdownTimeoutMsOf } from './log-settings.js';
import type { CliLogger } from './logger.js';
import { optionsUsageError } from './options-error.js';
import { logWarning, serviceLogger, stopSignal } from './service-log.js';
import {
  damageWarnings,
  openStore,
  retentionMsOf,
  STORE_FLAGS,
  storeChoiceOf,
  storeCliError,
  storePlace,
} from './store.js';
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
  {
    name: 'greylist-delays',
    type: 'string',
    value: '<s,s,...|none>',
    description: 'greylisting retry delays in seconds (default 60,300,900); none: no retries',
  },
  ...WEBHOOK_FLAGS,
  ...STORE_FLAGS,
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
function webhookOptionsOf(choice: WebhookChoice, resolver: Resolver | undefined, logger: CliLogger) {
  return {
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
API keys come from MAILVET_API_KEYS (comma-separated); clients send "Authorization: Bearer <key>".
The verification flags below set how the server verifies.

Flags:
${flagHelp(FLAGS)}

Jobs live in memory unless --data DIR (an embedded PostgreSQL, PGlite) or --store postgres://... is given: then
they survive restarts and crashes, and unfinished jobs resume when the server starts (see docs/bulk.md).
With --redis redis://... (and --store) the server is an API node of a worker fleet: \`mailvet worker\` processes
verify the jobs (this one too with --work); see docs/scaling.md.

Environment: MAILVET_API_KEYS (required), MAILVET_PORT, MAILVET_HOST, MAILVET_DIAGNOSTICS=1, MAILVET_DATA,
MAILVET_STORE, MAILVET_RETENTION_DAYS, MAILVET_REDIS, MAILVET_PREFIX, and the MAILVET_* of the flags.
Signed job webhooks (POST /v1/bulk with "webhook": { "url": "https://..." }; see docs/events.md) are on when
--webhook-secrets-file (MAILVET_WEBHOOK_SECRETS_FILE) gives API keys their own whsec_ secrets, or
MAILVET_WEBHOOK_SECRETS (whsec_..., two comma-separated while rotating) one secret for every other key.
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
  if (apiKeys.length === 0) throw usageError('serve needs API keys: set MAILVET_API_KEYS=key1,key2');
  const webhooks = await webhookChoiceOf(args, io.env, apiKeys, io.cwd ?? process.cwd());
  const greylistDelaysMs = greylistDelaysOf(
    single(args, io.env, 'greylist-delays', 'MAILVET_GREYLIST_DELAYS'),
  );
  const storeChoice = storeChoiceOf(args, io.env);
  const fleet = fleetChoiceOf(args, io.env);
  const work = switched(args, io.env, 'work', 'MAILVET_WORK');
  if (fleet !== undefined && storeChoice.kind !== 'postgres') {
    throw usageError('--redis needs --store postgres://...: the fleet keeps its jobs on a PostgreSQL server');
  }
  if (fleet === undefined && work) throw usageError('--work applies to --redis only');
  const retentionMs = retentionMsOf(args, io.env);
  const settings = readSettings(args, io.env);
  const diagnostics = switched(args, io.env, 'diagnostics', 'MAILVET_DIAGNOSTICS');
  const logSettings = logSettingsOf(args, io.env, io.stdoutIsTTY === true);
  const shutdownTimeoutMs = shutdownTimeoutMsOf(args, io.env);
  if (fleet !== undefined) await checkFleetRedis(fleet); // one clear line before anything is opened
  const logger = serviceLogger(logSettings, io);
  const built = verifyOptionsOf(settings);
  let verifier: Verifier;
  try {
    verifier = (io.createVerifier ?? createVerifier)(built.options);
  } catch (error) {
    built.close();
    throw optionsUsageError(error) ?? error;
  }
  let store: Awaited<ReturnType<typeof openStore>>;
  try {
    store = await openStore(storeChoice);
  } catch (error) {
    await verifier.dispose();
    built.close();
    throw error;
  }
  for (const warning of damageWarnings(store)) logWarning(logger, warning);
  const runner = fleet === undefined ? undefined : await fleetRunner(fleet);
  const jobs = new BulkJobManager({
    ...(runner === undefined ? { verifier } : { runner }),
    ...(store === undefined ? {} : { store }),
    ...(retentionMs === undefined ? {} : { retentionMs }),
    ...(greylistDelaysMs === undefined ? {} : { greylistRetry: { delaysMs: greylistDelaysMs } }),
  });
  const stopLogging = logJobs(jobs, logger);
  let worker: { close(): Promise<void> } | undefined;
  const release = async (): Promise<void> => {
    await worker?.close().catch(() => {});
    // A durable store's unfinished jobs stay as they are and their leases are released: the next start resumes them.
    await jobs
      .close()
      .catch((error: unknown) =>
        logger.log.error({ error: errorFields(error, logger.addresses) }, 'closing the jobs failed'),
      );
    stopLogging();
    await verifier.dispose();
    built.close();
  };
  try {
    await jobs.opened(); // unfinished jobs of a durable store resume now
    if (fleet !== undefined && work)
      worker = await fleetWorker(fleet, store as FleetJobStore, verifier, logger);
  } catch (error) {
    await release();
    throw storeCliError(error);
  }

  let running: RunningServer;
  try {
    running = await createServer({
      port,
      host,
      apiKeys,
      verifier,
      jobs,
      ...(webhooks === undefined
        ? {}
        : { webhooks: webhookOptionsOf(webhooks, built.options.resolver, logger) }),
      console: !args.flag('no-console'),
      ...(diagnostics
        ? { diagnostics: { options: diagnoseOptionsOf(settings, built.options.resolver) } }
        : {}),
      logger: httpErrorLog(logger.log, { addresses: logger.addresses }),
      onRequest: requestLog(logger.log, { addresses: logger.addresses }),
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
  const helo = heloWarning(settings, io.hostname);
  if (helo !== undefined) logWarning(logger, helo);
  for (const warning of webhooks?.warnings ?? []) logWarning(logger, warning);

  logger.log.info(
    { url: running.url },
    `mailvet API listening on ${running.url} (${apiKeys.length} API key${apiKeys.length === 1 ? '' : 's'}; jobs ${storePlace(storeChoice)}${fleet === undefined ? '' : `, verified by the fleet on ${fleetPlace(fleet)}${work ? ' (this process works too)' : ''}`}); Ctrl-C stops it`,
  );
  await stopSignal(io);
  logger.log.info(
    { shutdown_timeout_ms: shutdownTimeoutMs },
    'mailvet API stopping: no new connections; requests in flight finish',
  );
  // Stops accepting, ends event streams, lets requests in flight finish (cut after shutdownTimeoutMs).
  await running.close();
  await release();
  logger.log.info('mailvet API stopped');
  await logger.flush();
  return EXIT.ok;
}
