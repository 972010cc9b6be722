/**
 * Serving a fetch-style handler with `node:http`: `toNodeListener` adapts it to `(req, res)`, and
 * `createServer` starts a server with the API. With node-request.ts (a Node request as the fetch world sees it),
 * the only files of the adapter that use `node:*`.
 * @module
 */
import { Buffer } from 'node:buffer';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { OptionsError } from '../errors.js';
import { errorResponse, HttpError, type HttpLogger } from './errors.js';
import { createHandler, type Handler, type HandlerOptions } from './handler.js';
import { lightParts, lightRequest, noteRequest, takeNote } from './light.js';
import { resolveLimits } from './limits.js';
import { discardBody, NodeRequestSource } from './node-request.js';
import { DEFAULT_LIMITS } from './node-runtime.js';
import { randomRequestId } from './request-id.js';
import type { RequestObserver, RequestRecord } from './request-record.js';
import { serializedBody } from './response.js';

/** A fetch-style handler, as `createHandler` makes (any other works too). */
export type FetchHandler = (request: Request) => Promise<Response>;

/** A `node:http` request listener (also what Express middleware and `http.createServer` take). */
export type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Options of {@link toNodeListener}. */
export interface NodeListenerOptions {
  /** Receives errors of handlers that reject (the client gets a 500 `internal_error`). @default console.error */
  readonly logger?: HttpLogger;
  /**
   * Told, for each request the handler answered, the body bytes written once its response ended (or its
   * connection closed first). It must not throw. @default none
   */
  readonly onWritten?: (request: Request, bytes: number) => void;
}

/** While closing, how often connections that finished their response are closed, in ms. */
const CLOSE_SWEEP_MS = 20;
const consoleLogger: HttpLogger = { error: (message, details) => console.error(message, details.error) };

/** Ends the response; when the request body was not read to its end in time, cuts the connection after. */
async function finish(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const ended = await discardBody(req);
  res.end();
  if (!ended) res.once('finish', () => req.socket.destroy());
}

function nodeHeaders(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') out[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}

function drainedOrClosed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Writes `response` to `res` and answers the body bytes written: at once (a number, unless the rest of the request
 * body must be drained) when its body is known text or absent; otherwise streamed by {@link streamBody}, whose
 * promise is returned.
 */
function writeResponse(
  response: Response,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<number> | number {
  const light = lightParts(response);
  const headers: Record<string, string | string[]> = light?.headers ?? nodeHeaders(response.headers);
  const text = light?.text ?? serializedBody(response);
  if (text === undefined && response.body !== null)
    return streamBody(response.body, response.status, headers, req, res);
  const body = text ?? ''; // no body: Node frames it (nothing at all for 204 and HEAD)
  const bytes = text === undefined || req.method === 'HEAD' ? 0 : Buffer.byteLength(body);
  if (text !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  res.writeHead(response.status, headers);
  if (req.complete) {
    res.end(body);
    return bytes;
  }
  res.write(body);
  return finish(req, res).then(() => bytes);
}

/**
 * Writes a response whose body is a stream: chunk by chunk, waiting for `drain` when asked to. Resolves with the
 * body bytes written.
 */
async function streamBody(
  body: ReadableStream<Uint8Array>,
  status: number,
  headers: Record<string, string | string[]>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<number> {
  res.writeHead(status, headers);
  const reader = body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      if (res.destroyed) {
        await reader.cancel();
        return bytes;
      }
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (!res.write(value)) await drainedOrClosed(res);
    }
    await finish(req, res);
  } catch (error) {
    // Headers are sent: the only way left to tell the client that the body is incomplete.
    res.destroy(error instanceof Error ? error : new Error(String(error)));
    await reader.cancel().catch(() => undefined);
  }
  return bytes;
}

/**
 * Adapts a fetch-style handler to a `node:http` listener. The request body is streamed (not buffered) into
 * the `Request`; its `signal` aborts when the client goes away before the response is written; response
 * bodies are streamed with backpressure. A malformed request, or a handler that throws or rejects, gets a
 * JSON error response. Mount it under Express with `app.use(toNodeListener(handler))` (before any body
 * parser); see docs/http.md for Fastify and Hono.
 * @example
 * import { createServer } from 'node:http';
 * createServer(toNodeListener(createHandler({ apiKeys: ['secret'] }))).listen(8080);
 */
export function toNodeListener(handler: FetchHandler, options: NodeListenerOptions = {}): NodeListener {
  const logger = options.logger ?? consoleLogger;
  const onWritten = options.onWritten;
  const failed = (error: unknown, res: ServerResponse): void => {
    logger.error('writing a response failed', { requestId: '', error });
    res.destroy();
  };
  const write = (response: Response, req: IncomingMessage, res: ServerResponse, request?: Request): void => {
    try {
      const written = writeResponse(response, req, res);
      if (typeof written === 'number') {
        if (onWritten !== undefined && request !== undefined) onWritten(request, written);
        return;
      }
      written.then(
        (bytes) => {
          if (onWritten !== undefined && request !== undefined) onWritten(request, bytes);
        },
        (error: unknown) => failed(error, res),
      );
    } catch (error) {
      failed(error, res);
    }
  };
  const writeError = (error: unknown, req: IncomingMessage, res: ServerResponse): void =>
    write(errorResponse(error, randomRequestId(), logger), req, res);
  return (req, res) => {
    let answer: Promise<Response>;
    let request: Request;
    try {
      request = lightRequest(new NodeRequestSource(req, res));
      try {
        answer = Promise.resolve(handler(request));
      } catch (error) {
        writeError(error, req, res);
        return;
      }
    } catch {
      writeError(new HttpError('invalid_request', 'the request target or a header is malformed'), req, res);
      return;
    }
    answer.then(
      (response) => write(response, req, res, request),
      (error: unknown) => writeError(error, req, res),
    );
  };
}

/** Options of {@link createServer}: where to listen, and either a ready handler or the options to make one. */
export interface ServerOptions extends HandlerOptions {
  /** TCP port; `0` picks a free one. @default 8080 */
  readonly port?: number;
  /** Interface to listen on. @default '127.0.0.1' */
  readonly host?: string;
  /** A handler to serve instead of making one from the other options; the caller keeps ownership. */
  readonly handler?: FetchHandler;
  /** How long `close()` lets requests in flight finish before cutting their connections, in ms. @default 10000 */
  readonly shutdownTimeoutMs?: number;
  /** Longest wait for a request's headers, in ms (a slow-headers client is cut off). @default 15000 */
  readonly headersTimeoutMs?: number;
  /**
   * Longest wait for a whole request, body included, in ms. @default enough for the largest list body at
   * 256 KiB/s, and at least 60000 (262144 ms with the default 64 MiB `maxListBytes`)
   */
  readonly requestTimeoutMs?: number;
}

/** The default `requestTimeoutMs`: the largest accepted body at 256 KiB/s, and at least a minute. */
export function defaultRequestTimeoutMs(maxBodyBytes: number): number {
  return Math.max(60_000, Math.ceil(maxBodyBytes / (256 * 1024)) * 1000);
}

function timeoutOption(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 100 || value > 3_600_000) {
    throw new OptionsError(name, 'must be an integer 100-3600000 (milliseconds)');
  }
  return value;
}

/** A request's record, waiting in its request for the bytes its response writes. */
type Waiting = { -readonly [K in keyof RequestRecord]: RequestRecord[K] };

/** Tells `observer` the record kept with `request`, with the bytes its response wrote. */
function tellWritten(observer: RequestObserver, request: Request, bytes: number): void {
  const record = takeNote(request) as Waiting | undefined;
  if (record === undefined) return;
  record.bytes = bytes; // the handler made the record for this observer alone: completed, not copied
  try {
    observer(record, request);
  } catch {
    // An observer's failure must not change the answer.
  }
}

/** A running server. */
export interface RunningServer {
  /** The `node:http` server. */
  readonly server: Server;
  /** Where it listens, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /**
   * Stops accepting connections, ends live streams (job events), lets requests in flight finish (up to
   * `shutdownTimeoutMs`), then closes the handler it made. Idempotent.
   */
  close(): Promise<void>;
}

/**
 * Starts a `node:http` server with the API.
 * @example
 * const { url, close } = await createServer({ port: 0, apiKeys: ['secret'] });
 * // ... fetch(`${url}/v1/verify?email=...`, { headers: { authorization: 'Bearer secret' } })
 * await close();
 */
export async function createServer(options: ServerOptions = {}): Promise<RunningServer> {
  const {
    port = 8080,
    host = '127.0.0.1',
    handler: given,
    shutdownTimeoutMs = 10_000,
    headersTimeoutMs,
    requestTimeoutMs,
    ...handlerOptions
  } = options;
  const headersTimeout = timeoutOption(headersTimeoutMs, 'headersTimeoutMs', 15_000);
  const limits = resolveLimits(handlerOptions.limits, DEFAULT_LIMITS);
  const requestTimeout = timeoutOption(
    requestTimeoutMs,
    'requestTimeoutMs',
    defaultRequestTimeoutMs(Math.max(limits.maxBodyBytes, limits.maxListBytes)),
  );
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new OptionsError('port', 'must be an integer 0-65535');
  if (!Number.isInteger(shutdownTimeoutMs) || shutdownTimeoutMs < 0) {
    throw new OptionsError('shutdownTimeoutMs', 'must be a non-negative integer');
  }
  if (given !== undefined && Object.keys(handlerOptions).length > 0) {
    throw new OptionsError('handler', 'cannot be combined with handler options');
  }
  const observer = handlerOptions.onRequest;
  // The handler's records wait for their response's end, which adds the bytes written: each in its request (the
  // listener's lightweight one), only while someone observes.
  const owned: Handler | undefined =
    given === undefined
      ? createHandler(
          observer === undefined
            ? handlerOptions
            : { ...handlerOptions, onRequest: (record, request) => noteRequest(request, record) },
        )
      : undefined;
  const handler = given ?? (owned as Handler);
  const listener = toNodeListener(handler, {
    ...(handlerOptions.logger === undefined ? {} : { logger: handlerOptions.logger }),
    ...(observer === undefined
      ? {}
      : { onWritten: (request: Request, bytes: number) => tellWritten(observer, request, bytes) }),
  });
  let closing: Promise<void> | undefined;
  const server = createHttpServer(
    {
      headersTimeout,
      requestTimeout: Math.max(requestTimeout, headersTimeout),
      // How often Node checks those timeouts: often enough for the shortest of them to mean what it says.
      connectionsCheckingInterval: Math.min(1000, Math.max(50, Math.floor(headersTimeout / 4))),
    },
    listener,
  );
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await owned?.close();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    server,
    url: `http://${shown}:${address.port}`,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        (handler as Partial<Handler>).drain?.(); // live streams end now rather than hold the close
        server.closeIdleConnections();
        // A keep-alive connection is closed soon after its response is done (a sweep, rather than a listener
        // on every response of the server's life).
        const sweep = setInterval(() => server.closeIdleConnections(), CLOSE_SWEEP_MS);
        const timer = setTimeout(() => server.closeAllConnections(), shutdownTimeoutMs);
        await closed;
        clearInterval(sweep);
        clearTimeout(timer);
        await owned?.close();
      })();
      return closing;
    },
  };
}
