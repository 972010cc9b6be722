/**
 * `mailvet worker --redis URL --store postgres://...`: a worker of a fleet, until Ctrl-C or SIGTERM.
 * @module
 */
import { isIP } from 'node:net';
import type { FleetJobStore } from '../bulk/runner.js';
import { errorFields } from '../io/log-text.js';
import { tcpTransport } from '../smtp/tcp.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { type FlagSpec, flagHelp, parseArgs } from './args.js';
import { integer, readSettings, single, VERIFY_FLAGS, verifyOptionsOf } from './config.js';
import { FLEET_FLAGS, fleetChoiceOf, fleetPlace } from './fleet.js';
import { heloWarning } from './helo.js';
import { CliError, type CliIo, EXIT, quote, usageError, write } from './io.js';
import { workerJobLog } from './job-log.js';
import { KNOWN_RESULTS_FLAGS, knownResultsChoiceOf, openKnownResults } from './known-results.js';
import { LOG_FLAGS, logSettingsOf, shutdownTimeoutMsOf } from './log-settings.js';
import {
  createProcessMetrics,
  listenForMetrics,
  METRICS_LISTENER_FLAGS,
  metricsChoiceOf,
  observedOptions,
  watchRedis,
} from './metrics.js';
import { optionsUsageError } from './options-error.js';
import { logWarning, serviceLogger, stopSignal, within } from './service-log.js';
import { openStore, STORE_FLAGS, storeChoiceOf, storeCliError, storePlace } from './store.js';

const FLAGS: readonly FlagSpec[] = [
  ...FLEET_FLAGS,
  ...STORE_FLAGS.filter((flag) => flag.name === 'store'),
  {
    name: 'chunks',
    type: 'string',
    value: '<n>',
    description: 'chunks of jobs verified at once (default 16)',
  },
  {
    name: 'egress',
    type: 'string',
    value: '<ip>',
    description: "local address that SMTP connections leave from (this worker's egress address)",
  },
  {
    name: 'lock-seconds',
    type: 'string',
    value: '<s>',
    description:
      'how long a chunk stays with a worker that stopped answering before another takes it (default 30)',
  },
  { name: 'id', type: 'string', value: '<id>', description: "this worker's id (default host-pid-random)" },
  ...KNOWN_RESULTS_FLAGS,
  ...METRICS_LISTENER_FLAGS,
  ...LOG_FLAGS,
  ...VERIFY_FLAGS,
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet worker`. */
export const WORKER_HELP = `Usage: mailvet worker --redis <redis://...> --store <postgres://...> [flags]

Runs a worker of a fleet until Ctrl-C or SIGTERM: it takes chunks of bulk jobs from the queue (BullMQ on Redis),
verifies them and writes the results to PostgreSQL. API nodes are \`mailvet serve --redis ... --store ...\`.
On SIGTERM it takes no more chunks and finishes those it has (for at most --shutdown-timeout seconds; another
worker takes an unfinished chunk over). It logs to standard output (see docs/operations.md). See docs/scaling.md.

Flags:
${flagHelp(FLAGS)}

Known results are on: a verdict a mail server gave is kept in the job store's database (shared by every worker
and API node on it, one namespace per job owner) and answers the same address again for a while without asking
(docs/known-results.md): --known-results-ttl sets how long, --no-known-results turns it off, a job created with
fresh asks anyway.

With --metrics-port the worker serves GET /metrics (Prometheus text format, see docs/operations.md) on a
listener of its own, 127.0.0.1 by default.

Environment: MAILVET_REDIS, MAILVET_PREFIX, MAILVET_STORE, MAILVET_METRICS_PORT, MAILVET_METRICS_HOST,
MAILVET_KNOWN_RESULTS_TTL, MAILVET_NO_KNOWN_RESULTS, and the MAILVET_* of the verification flags.
Exit codes: 0 stopped, 2 usage error, 3 cannot reach Redis or open the job store.
Example: mailvet worker --redis redis://127.0.0.1:6379 --store postgres://postgres@127.0.0.1/mailvet
`;

/** Runs `mailvet worker`; resolves with the exit code once the worker has stopped. */
export async function runWorker(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet worker');
  if (args.flag('help')) {
    await write(io.stdout, WORKER_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length > 0) {
    throw usageError(`worker takes no arguments, got ${JSON.stringify(args.positionals[0])}`);
  }
  const fleet = fleetChoiceOf(args, io.env);
  if (fleet === undefined) throw usageError('worker needs --redis redis://... (or MAILVET_REDIS)');
  const storeChoice = storeChoiceOf(args, io.env);
  if (storeChoice.kind !== 'postgres')
    throw usageError('worker needs --store postgres://... (or MAILVET_STORE)');
  const chunksSource = single(args, io.env, 'chunks', 'MAILVET_CHUNKS');
  const chunks = chunksSource === undefined ? undefined : integer(chunksSource, 1, 1000);
  const lockSource = single(args, io.env, 'lock-seconds', 'MAILVET_LOCK_SECONDS');
  const lockMs = lockSource === undefined ? undefined : integer(lockSource, 1, 600) * 1000;
  const id = single(args, io.env, 'id', 'MAILVET_WORKER_ID');
  if (id !== undefined && !/^[A-Za-z0-9_-]{1,128}$/.test(id.value)) {
    throw usageError(`${id.label} must be 1-128 characters of A-Z a-z 0-9 _ -, got ${quote(id.value)}`);
  }
  const egress = single(args, io.env, 'egress', 'MAILVET_EGRESS');
  if (egress !== undefined && isIP(egress.value) === 0) {
    throw usageError(`${egress.label} must be an IPv4 or IPv6 address, got ${quote(egress.value)}`);
  }
  const knownChoice = knownResultsChoiceOf(args, io.env, storeChoice);
  const settings = readSettings(args, io.env);
  if (egress !== undefined && settings.proxy !== undefined) {
    throw usageError(
      `${egress.label} and --proxy cannot be used together: a proxy chooses the egress address`,
    );
  }
  const metricsChoice = metricsChoiceOf(args, io.env, false);
  const logSettings = logSettingsOf(args, io.env, io.stdoutIsTTY === true);
  const shutdownTimeoutMs = shutdownTimeoutMsOf(args, io.env);
  const built = verifyOptionsOf(settings);
  const metrics = metricsChoice === undefined ? undefined : await createProcessMetrics();
  let store: FleetJobStore;
  try {
    store = (await openStore(storeChoice, metrics?.onQuery)) as FleetJobStore;
  } catch (error) {
    built.close();
    throw error;
  }
  // Known results live in the store's database, shared by the fleet: the verifier is made once the store is open.
  const known = openKnownResults(knownChoice, store);
  const options = observedOptions(
    {
      ...built.options,
      ...(egress === undefined ? {} : { transport: tcpTransport({ localAddress: egress.value }) }),
      ...(known === undefined ? {} : { knownResults: known.knownResults }),
      ...(knownChoice.kind === 'on' && knownChoice.ttl !== undefined
        ? { knownResultsTtlMs: knownChoice.ttl }
        : {}),
    },
    metrics,
  );
  let verifier: Verifier;
  try {
    verifier = (io.createVerifier ?? createVerifier)(options);
  } catch (error) {
    await known?.close();
    await store.close?.();
    built.close();
    throw optionsUsageError(error) ?? error;
  }
  const release = async (): Promise<void> => {
    await verifier.dispose();
    await known?.close();
    built.close();
  };
  const logger = serviceLogger(logSettings, io);
  const { createWorker } = await import('../bullmq/index.js');
  let worker: Awaited<ReturnType<typeof createWorker>>;
  try {
    worker = await createWorker({
      connection: fleet.url,
      ...(fleet.prefix === undefined ? {} : { prefix: fleet.prefix }),
      store,
      verifier,
      ...(chunks === undefined ? {} : { concurrency: chunks }),
      ...(lockMs === undefined ? {} : { lockMs }),
      ...(id === undefined ? {} : { id: id.value }),
      onError: (error) => {
        logger.log.error({ error: errorFields(error, logger.addresses) }, 'worker error');
      },
      onJob: workerJobLog(logger),
    });
  } catch (error) {
    await store.close?.();
    await release();
    const usage = optionsUsageError(error);
    if (usage !== undefined) throw usage;
    throw new CliError(
      EXIT.io,
      `cannot start the worker: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
  let stopRedisPings: (() => void) | undefined;
  let metricsServer: Awaited<ReturnType<typeof listenForMetrics>> | undefined;
  if (metrics !== undefined && metricsChoice?.listener !== undefined) {
    try {
      stopRedisPings = await watchRedis(metrics, fleet);
      metricsServer = await listenForMetrics(metricsChoice.listener, metrics, io);
    } catch (error) {
      stopRedisPings?.();
      await worker.close();
      await store.close?.();
      await release();
      throw error;
    }
  }
  const helo = heloWarning(settings, io.hostname);
  if (helo !== undefined) logWarning(logger, helo);
  logger.log.info(
    { worker_id: worker.id },
    `mailvet worker ${worker.id} taking chunks from ${fleetPlace(fleet)} (jobs ${storePlace(storeChoice)}); Ctrl-C stops it`,
  );
  if (metricsServer !== undefined)
    logger.log.info({ url: metricsServer.url }, `mailvet metrics on ${metricsServer.url}`);
  await stopSignal(io);
  logger.log.info(
    { worker_id: worker.id, shutdown_timeout_ms: shutdownTimeoutMs },
    'mailvet worker stopping: no new chunks; chunks in flight finish',
  );
  await metricsServer?.close();
  stopRedisPings?.();
  if (!(await within(worker.close(), shutdownTimeoutMs))) {
    logger.log.warn(
      { worker_id: worker.id },
      'chunks in flight did not finish within the shutdown timeout: their locks expire and another worker takes them',
    );
  }
  try {
    await store.close?.();
  } catch (error) {
    await logger.flush();
    throw storeCliError(error);
  } finally {
    await release();
  }
  logger.log.info({ worker_id: worker.id }, 'mailvet worker stopped');
  await logger.flush();
  return EXIT.ok;
}
