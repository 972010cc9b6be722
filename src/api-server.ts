/**
 * The HTTP API as `mailvet serve` runs it: `mailvet/http`'s `createServer`, with a log line per answered request and
 * per error a client saw only as `internal_error`, on any logger of pino's shape. It sits outside the layers, as
 * verifier.ts does: it puts the HTTP adapter's parts together for the CLI, so that neither adapter imports the
 * other; nothing in the layers imports it.
 * @module
 */
import { createServer, type RunningServer, type ServerOptions } from './http/node.js';
import { httpErrorLog, type LineLogger, requestLog } from './http/request-log.js';
import type { RequestObserver } from './http/request-record.js';

export type { RunningServer } from './http/node.js';

/** Options of {@link startApiServer}: those of `createServer`, but the log lines go to `log`. */
export interface ApiServerOptions extends Omit<ServerOptions, 'logger' | 'onRequest'> {
  /** Receives the request lines and the error lines (a pino `Logger` will do). */
  readonly log: LineLogger;
  /** Let the lines carry email addresses (a `GET /v1/verify` line its `email`). @default false */
  readonly addresses?: boolean;
  /** Told about every answered request too, after its line is logged (HTTP metrics). @default none */
  readonly onRequest?: RequestObserver;
}

/**
 * Starts the API on `node:http` with its request and error logs; resolves once it listens (rejects as
 * `createServer` does: a bad option, an address in use).
 */
export function startApiServer(options: ApiServerOptions): Promise<RunningServer> {
  const { log, addresses = false, onRequest, ...server } = options;
  const logged = requestLog(log, { addresses });
  return createServer({
    ...server,
    logger: httpErrorLog(log, { addresses }),
    onRequest:
      onRequest === undefined
        ? logged
        : (record, request) => {
            logged(record, request);
            onRequest(record, request);
          },
  });
}
