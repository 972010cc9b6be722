/**
 * The `--observed` side of bench/http.ts: `createServer` with everything issue 29 added turned on, as
 * `mailvet serve --metrics-port ... --data ...` runs it: the prom-client metrics of `createMetrics` (Node's process
 * metrics included) fed by the verifier's observer and by `onRequest`, the JSON request log (pino, `info`, to
 * `/dev/null` through the same batched writer as standard output) and the error log, and a key of the key store
 * (a stored key: looked up by its id, its digest checked, its record cached; the store is a map in memory). Traces
 * are in both sides alike: no SDK is registered, as in `mailvet serve`, so a request makes no span.
 */

/** Loads a compiled mailvet module by its path under `src/`, without its extension. */
export type ModuleLoader = (path: string) => Promise<unknown>;

/** The stored key the observed side's requests send (`mv_<id>_<secret>`, the form `mailvet keys create` prints). */
export const STORED_KEY = `mv_benchkey_${'k'.repeat(43)}`;

/** `createServer`'s `logger` and `onRequest` as `mailvet serve` sets them, logging JSON lines to /dev/null. */
export async function requestLogOptions(module: ModuleLoader) {
  const { createWriteStream, openSync } = await import('node:fs');
  const { createLogger } = (await module('cli/logger')) as {
    createLogger: (settings: object, target: object) => { log: unknown };
  };
  const { requestLog, httpErrorLog } = (await module('http/request-log')) as {
    requestLog: (log: unknown) => (record: unknown, request: unknown) => void;
    httpErrorLog: (log: unknown) => unknown;
  };
  // A file descriptor, as standard output redirected to a file: the logger writes to it asynchronously.
  const sink = createWriteStream('/dev/null', { fd: openSync('/dev/null', 'w') });
  const logger = createLogger({ level: 'info', format: 'json', addresses: false }, { stream: sink });
  return { logger: httpErrorLog(logger.log), onRequest: requestLog(logger.log) };
}

/** A key store in memory holding {@link STORED_KEY} with every scope and no limits of its own. */
async function memoryKeyStore(module: ModuleLoader) {
  const { apiKeyHash } = (await module('io/api-key')) as { apiKeyHash: (key: string) => Promise<string> };
  const record = {
    id: 'benchkey',
    name: 'bench',
    hash: await apiKeyHash(STORED_KEY),
    scopes: ['verify', 'bulk:read', 'bulk:write', 'admin'],
    requestsPerSecond: null,
    addressesPerDay: null,
    createdAt: Date.now(),
    lastUsedAt: null,
    revokedAt: null,
    previousHash: null,
    previousUntil: null,
  };
  return {
    get: async (id: string) => (id === record.id ? record : undefined),
    touch: async () => {},
  };
}

/**
 * The options `createServer` gets on top of the plain side's for the observed side: metrics (verifier observer
 * and `onRequest`), request and error logs, the key store. `/metrics` is not scraped during the run.
 */
export async function observedServerOptions(module: ModuleLoader, verifierOptions: object) {
  const { createMetrics } = (await module('metrics/registry')) as {
    createMetrics: () => { observer: unknown; onRequest: (record: unknown) => void };
  };
  const metrics = createMetrics();
  const { logger, onRequest: log } = await requestLogOptions(module);
  const count = metrics.onRequest;
  return {
    verifierOptions: { ...verifierOptions, observer: metrics.observer },
    apiKeyStore: await memoryKeyStore(module),
    logger,
    // As serve's withMetrics: the request log, then the HTTP series.
    onRequest: (record: unknown, request: unknown) => {
      log(record, request);
      count(record);
    },
  };
}
