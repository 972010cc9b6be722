/**
 * A `node:http` request as the fetch world sees it: its absolute URL, its header pairs and its body as a WHATWG
 * stream read only as fast as it is consumed, and the draining of a body left unread.
 * @module
 */
import type { Buffer } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HttpError } from './errors.js';
import { type HeaderSource, lightHeaders, type RequestSource } from './light.js';

const HOST = /^[A-Za-z0-9.\-:[\]]{1,255}$/;

/** How long the unread rest of a refused request body is drained before the connection is cut, in ms. */
export const LINGER_MS = 2000;

/** The absolute URL of a request whose target is in origin-form (starts with `/`). */
export function originUrl(req: IncomingMessage, target: string, host: string | null): string {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
  return `${scheme}://${host !== null && HOST.test(host) ? host : 'localhost'}${target}`;
}

/** The request's headers as name-value pairs, in the order and case they came. */
export function headersOf(req: IncomingMessage): [string, string][] {
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
export function bodyOf(req: IncomingMessage): ReadableStream<Uint8Array> {
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
export class NodeRequestSource implements RequestSource {
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
export function discardBody(req: IncomingMessage): Promise<boolean> {
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
