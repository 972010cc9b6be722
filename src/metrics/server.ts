/**
 * The metrics listener of `mailvet serve --metrics-port` and `mailvet worker --metrics-port`: a node:http server
 * of its own (loopback by default) that answers `GET /metrics` (and `HEAD`) with the exposition, and nothing else.
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MetricsExposition } from '../http/metrics-source.js';

/** Options of {@link startMetricsServer}. */
export interface MetricsServerOptions {
  /** TCP port; 0 for any free one. */
  readonly port: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** Makes the exposition of each scrape. */
  readonly exposition: () => Promise<MetricsExposition>;
  /** Told about a scrape that failed (answered 500). @default none */
  readonly onError?: (error: unknown) => void;
}

/** A running metrics listener. */
export interface MetricsServer {
  /** `http://host:port/metrics`. */
  readonly url: string;
  /** The port it listens on (the one chosen when `port` was 0). */
  readonly port: number;
  /** Stops listening and closes its connections. */
  close(): Promise<void>;
}

function answer(
  response: ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
) {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...headers });
  response.end(text);
}

/**
 * Listens on `host:port` for scrapes. Rejects with the listen error (its `code`: `EADDRINUSE`, `EACCES`, ...)
 * when the port cannot be had.
 * @example
 * const server = await startMetricsServer({ port: 9464, exposition: metrics.exposition });
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const host = options.host ?? '127.0.0.1';
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return answer(response, 404, 'not found: scrape /metrics\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return answer(response, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    }
    try {
      const { contentType, body } = await options.exposition();
      response.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : body);
    } catch (error) {
      options.onError?.(error);
      answer(response, 500, 'the metrics could not be collected\n');
    }
  });
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}/metrics`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
