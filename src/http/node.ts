/**
 * Serving a fetch-style handler with `node:http`: `toNodeListener` adapts it to `(req, res)`, and
 * `createServer` starts a server with the API. The only file of the adapter that uses `node:*`.
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
import { type HeaderSource, lightHeaders, lightParts, lightRequest, type RequestSource } from './light.js';
import { resolveLimits } from './limits.js';
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

const HOST = /^[A-Za-z0-9.\-:[\]]{1,255}$/;

/** How long the unread rest of a refused request body is drained before the connection is cut, in ms. */
export const LINGER_MS = 2000;
/** While closing, how often connections that finished their response are closed, in ms. */
const CLOSE_SWEEP_MS = 20;
const consoleLogger: HttpLogger = { error: (message, details) => console.error(message, details.error) };

/** The absolute URL of a request whose target is in origin-form (starts with `/`). */
function originUrl(req: IncomingMessage, target: string, host: string | null): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
  return `${scheme}://${host !== null && HOST.test(host) ? host : 'localhost'}${target}`;
}

function headersOf(req: IncomingMessage): [string, string][] {
  const raw = req.rawHeaders;
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i] as string, raw[i + 1] as string]);
  return pairs;
}

/**
 * The body of `req` as a WHATWG stream that reads only as fast as it is consumed (`req` is paused whenever a
 * chunk is queued). Cancelling it (a body refused as too large, say) stops reading but leaves the socket be,
 * so that the response can still be written.
 */
function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (req.readableEnded) {
        // Another middleware (express.json(), say) read the body first: waiting for it would hang for good.
        controller.error(new HttpError('body_already_read'));
        open = false;
        return;
      }
      req.on('data', (chunk: Buffer) => {
        if (!open) return;
        controller.enqueue(chunk);
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once('end', () => {
        if (open) controller.close();
        open = false;
      });
      // A client that goes away mid-upload is no server error: the body fails with client_closed_request
      // (499), which is neither logged nor, the socket being gone, sent.
      const gone = () => {
        if (open) controller.error(new HttpError('client_closed_request'));
        open = false;
      };
      req.once('error', gone);
      req.once('close', () => {
        if (!req.complete) gone();
      });
      req.pause();
    },
    pull() {
      req.resume();
    },
    cancel() {
      open = false;
      req.pause();
    },
  });
}

/**
 * The headers of a Node request, for lightweight `Headers`. A header sent once is read from `rawHeaders`
 * (without building Node's `req.headers` record); a repeated one from `req.headers`, so that Node's rules for
 * duplicates (keep the first `authorization`, join the others) decide its value.
 */
class NodeHeaderSource implements HeaderSource {
  readonly #req: IncomingMessage;

  constructor(req: IncomingMessage) {
    this.#req = req;
  }

  get(name: string): string | null {
    const raw = this.#req.rawHeaders;
    let found: string | null = null;
    for (let i = 0; i + 1 < raw.length; i += 2) {
      const line = raw[i] as string;
      if (line !== name && (line.length !== name.length || line.toLowerCase() !== name)) continue;
      if (found !== null) return this.#joined(name);
      found = raw[i + 1] as string;
    }
    return found;
  }

  #joined(name: string): string | null {
    const value = this.#req.headers[name];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }

  pairs(): [string, string][] {
    return headersOf(this.#req);
  }
}

/** The parts of a Node request, for a lightweight `Request`. */
class NodeRequestSource implements RequestSource {
  readonly method: string;
  readonly target: string;
  readonly headers: Headers;
  readonly hasBody: boolean;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #source: NodeHeaderSource;
  #url: string | undefined;

  /** Throws on a malformed request target. */
  constructor(req: IncomingMessage, res: ServerResponse) {
    this.#req = req;
    this.#res = res;
    this.method = req.method ?? 'GET';
    const target = req.url ?? '/';
    // Absolute-form (RFC 9112 3.2.2) is parsed now, so that a malformed one is refused; origin-form on first use.
    this.#url = target.startsWith('/') ? undefined : new URL(target).href;
    this.target = target;
    this.#source = new NodeHeaderSource(req);
    this.headers = lightHeaders(this.#source);
    this.hasBody =
      this.method !== 'GET' &&
      this.method !== 'HEAD' &&
      (req.headers['transfer-encoding'] !== undefined ||
        (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0'));
  }

  get url(): string {
    this.#url ??= originUrl(this.#req, this.target, this.#source.get('host'));
    return this.#url;
  }

  get remoteAddress(): string | undefined {
    return this.#req.socket.remoteAddress;
  }

  body(): ReadableStream<Uint8Array> {
    return bodyOf(this.#req);
  }

  watch(abort: () => void): void {
    const res = this.#res;
    if (res.writableFinished) return;
    if (this.#req.socket.destroyed) abort();
    else res.once('close', () => res.writableFinished || abort());
  }
}

/**
 * Reads and drops the unread rest of a request body (one refused as too large, or of the wrong type), for at
 * most {@link LINGER_MS}. The response is held open meanwhile: closing a socket with unread input makes the
 * peer see a reset, often before it has read the response. Resolves `true` when the body ended.
 */
function discardBody(req: IncomingMessage): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      req.off('end', done);
      req.off('close', done);
      resolve(req.complete);
    };
    const timer = setTimeout(done, LINGER_MS);
    req.once('end', done);
    req.once('close', done);
    req.removeAllListeners('data');
    req.on('data', () => undefined);
    req.resume();
  });
}

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

/** Tells `observer` the record of `request`, with the bytes its response wrote. */
function tellWritten(
  records: WeakMap<Request, RequestRecord>,
  observer: RequestObserver,
  request: Request,
  bytes: number,
): void {
  const record = records.get(request);
  if (record === undefined) return;
  records.delete(request);
  try {
    observer({ ...record, bytes }, request);
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
  const limits = resolveLimits(handlerOptions.limits);
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
  // The handler's records wait for their response's end, which adds the bytes written (one WeakMap entry per
  // request in flight, only while someone observes).
  const records = observer === undefined ? undefined : new WeakMap<Request, RequestRecord>();
  const owned: Handler | undefined =
    given === undefined
      ? createHandler(
          records === undefined
            ? handlerOptions
            : { ...handlerOptions, onRequest: (record, request) => records.set(request, record) },
        )
      : undefined;
  const handler = given ?? (owned as Handler);
  const listener = toNodeListener(handler, {
    ...(handlerOptions.logger === undefined ? {} : { logger: handlerOptions.logger }),
    ...(observer === undefined || records === undefined
      ? {}
      : { onWritten: (request: Request, bytes: number) => tellWritten(records, observer, request, bytes) }),
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
