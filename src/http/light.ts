/**
 * Lightweight `Request` and `Response` objects for the Node listener's hot path (the technique of
 * `@hono/node-server`). Building an undici `Request` with an abort signal, or a `Response` with a body stream,
 * costs more than the rest of a `GET /v1/verify`. These objects are real instances (`instanceof` holds,
 * every member works): the cheap members (method, url, headers, signal; status, headers) are served
 * directly, and every other member builds the real object on first use and delegates to it.
 *
 * A lightweight response is only made for a lightweight request, i.e. when the Node listener will write it:
 * then its serialized body is written as is. Other hosts always get ordinary objects.
 * @module
 */

const SOURCE = Symbol('mailvet.lightSource');
const REAL = Symbol('mailvet.real');
const CONTROLLER = Symbol('mailvet.controller');
const HEADERS = Symbol('mailvet.headers');
const NOTE = Symbol('mailvet.note');

/** Where lightweight headers read from. */
export interface HeaderSource {
  /** The value of header `name` (lower case), or `null`; several lines of one header joined with `, `. */
  get(name: string): string | null;
  /** Every header line as a name/value pair, in arrival order (to build the real `Headers`). */
  pairs(): [string, string][];
}

/** The parts of a request, as the Node listener reads them. */
export interface RequestSource {
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  /** The request target as received: origin-form (`/path?query`), else anything else `url` is built from. */
  readonly target: string;
  readonly headers: Headers;
  /** Whether the request has a body (`body()` is only called then). */
  readonly hasBody: boolean;
  /** Makes the body stream; called at most once. */
  body(): ReadableStream<Uint8Array>;
  /**
   * Called once, when the request's `signal` is first read: arrange for `abort` to be called if the client
   * goes away before the response is written (at once if it has gone already).
   */
  watch(abort: () => void): void;
  /** The client's IP address (the TCP peer), when the listener knows it. */
  readonly remoteAddress?: string | undefined;
}

interface LightRequestState {
  [SOURCE]: RequestSource;
  [REAL]?: Request;
  [CONTROLLER]?: AbortController;
  /** What the request's maker keeps with it ({@link noteRequest}). */
  [NOTE]: unknown;
}

/** What a lightweight response is made of; `headers` belongs to it. */
export interface LightParts {
  readonly status: number;
  readonly text: string;
  readonly headers: Record<string, string>;
}

interface LightHeadersState {
  [SOURCE]: HeaderSource;
  [REAL]?: Headers;
}

interface LightResponseState {
  [SOURCE]: LightParts;
  [REAL]?: Response;
  [HEADERS]?: Headers;
}

function controllerOf(state: LightRequestState): AbortController {
  if (state[CONTROLLER] === undefined) {
    const controller = new AbortController();
    state[CONTROLLER] = controller;
    state[SOURCE].watch(() => controller.abort());
  }
  return state[CONTROLLER];
}

function realRequest(state: LightRequestState): Request {
  if (state[REAL] === undefined) {
    const source = state[SOURCE];
    const init: RequestInit & { duplex?: 'half' } = {
      method: source.method,
      headers: source.headers,
      signal: controllerOf(state).signal,
    };
    if (source.hasBody) {
      init.body = source.body();
      init.duplex = 'half';
    }
    state[REAL] = new Request(source.url, init);
  }
  return state[REAL];
}

function realHeaders(state: LightHeadersState): Headers {
  state[REAL] ??= new Headers(state[SOURCE].pairs());
  return state[REAL];
}

function realResponse(state: LightResponseState): Response {
  if (state[REAL] === undefined) {
    const { status, text } = state[SOURCE];
    state[REAL] = new Response(text, { status, headers: headersOf(state) });
  }
  return state[REAL];
}

function headersOf(state: LightResponseState): Headers {
  state[HEADERS] ??= new Headers(state[SOURCE].headers);
  return state[HEADERS];
}

/** Defines on `proto` every member of `base` not defined yet, delegating to the real object. */
function delegate<T extends object>(proto: object, base: object, real: (self: never) => T): void {
  for (const name of Reflect.ownKeys(base)) {
    if (name === 'constructor' || Object.hasOwn(proto, name)) continue;
    const descriptor = Object.getOwnPropertyDescriptor(base, name);
    if (descriptor?.get !== undefined) {
      Object.defineProperty(proto, name, {
        get(this: never) {
          return Reflect.get(real(this), name);
        },
      });
    } else if (typeof descriptor?.value === 'function') {
      Object.defineProperty(proto, name, {
        value(this: never, ...args: unknown[]) {
          const target = real(this);
          return (Reflect.get(target, name) as (...a: unknown[]) => unknown).apply(target, args);
        },
      });
    }
  }
}

const HEADERS_PROTO: object = Object.create(Headers.prototype, {
  get: {
    value(this: LightHeadersState, name: string) {
      return this[REAL] === undefined ? this[SOURCE].get(String(name).toLowerCase()) : this[REAL].get(name);
    },
  },
  has: {
    value(this: LightHeadersState, name: string) {
      return this[REAL] === undefined
        ? this[SOURCE].get(String(name).toLowerCase()) !== null
        : this[REAL].has(name);
    },
  },
});
delegate(HEADERS_PROTO, Headers.prototype, realHeaders);

const REQUEST_PROTO: object = Object.create(Request.prototype, {
  method: {
    get(this: LightRequestState) {
      return this[SOURCE].method;
    },
  },
  url: {
    get(this: LightRequestState) {
      return this[SOURCE].url;
    },
  },
  headers: {
    get(this: LightRequestState) {
      return this[REAL]?.headers ?? this[SOURCE].headers;
    },
  },
  signal: {
    get(this: LightRequestState) {
      return controllerOf(this).signal;
    },
  },
  body: {
    get(this: LightRequestState) {
      return this[SOURCE].hasBody ? realRequest(this).body : null;
    },
  },
  bodyUsed: {
    get(this: LightRequestState) {
      return this[REAL]?.bodyUsed ?? false;
    },
  },
});
delegate(REQUEST_PROTO, Request.prototype, realRequest);

const RESPONSE_PROTO: object = Object.create(Response.prototype, {
  status: {
    get(this: LightResponseState) {
      return this[SOURCE].status;
    },
  },
  ok: {
    get(this: LightResponseState) {
      return this[SOURCE].status >= 200 && this[SOURCE].status < 300;
    },
  },
  headers: {
    get(this: LightResponseState) {
      return this[REAL]?.headers ?? headersOf(this);
    },
  },
});
delegate(RESPONSE_PROTO, Response.prototype, realResponse);

/**
 * A `Headers` that answers `get` and `has` from `source`, and builds the undici one (then used for everything)
 * for any other member. Values are the host's: Node, for one, keeps only the first line of a repeated
 * single-value header (`authorization`, `content-type`, ...) where `Headers` would join them.
 */
export function lightHeaders(source: HeaderSource): Headers {
  const state = Object.create(HEADERS_PROTO) as LightHeadersState;
  state[SOURCE] = source;
  return state as unknown as Headers;
}

/**
 * A `Request` that builds the undici one only when a member other than method, url, headers, signal is used;
 * its abort signal is only made (and watched) when read.
 */
export function lightRequest(source: RequestSource): Request {
  const state = Object.create(REQUEST_PROTO) as LightRequestState;
  state[SOURCE] = source;
  state[NOTE] = undefined;
  return state as unknown as Request;
}

/**
 * Keeps `note` with a request made by {@link lightRequest} until {@link takeNote} (the Node listener keeps there
 * a request's record while its response is written: cheaper than a map from requests). Ignored for any other
 * request.
 */
export function noteRequest(request: Request, note: unknown): void {
  if (isLightRequest(request)) (request as unknown as LightRequestState)[NOTE] = note;
}

/** What {@link noteRequest} kept with `request` (`undefined` for none), which it keeps no longer. */
export function takeNote(request: Request): unknown {
  if (!isLightRequest(request)) return undefined;
  const state = request as unknown as LightRequestState;
  const note = state[NOTE];
  state[NOTE] = undefined;
  return note;
}

/**
 * The path and query of `request` as an origin-form target (`/v1/verify?email=...`) when the Node listener made
 * it (its absolute URL is then not built), otherwise its absolute `url`: either suits `pathAndQuery`.
 */
export function targetOf(request: Request): string {
  if (!isLightRequest(request)) return request.url;
  const source = (request as unknown as LightRequestState)[SOURCE];
  return source.target.startsWith('/') ? source.target : source.url;
}

/** True for a request made by {@link lightRequest}. */
export function isLightRequest(request: Request): boolean {
  return Object.hasOwn(request, SOURCE);
}

/** The client's IP address of a request made by the Node listener, or `undefined` (other hosts do not tell). */
export function clientAddressOf(request: Request): string | undefined {
  return isLightRequest(request)
    ? (request as unknown as LightRequestState)[SOURCE].remoteAddress
    : undefined;
}

/**
 * A `Response` of `text` that builds the undici one only when its body (or a member other than status and
 * headers) is used. It takes ownership of `headers` (lower-case names): the Node listener completes the record
 * with `content-length` and hands it to `writeHead`.
 */
export function lightJsonResponse(status: number, text: string, headers: Record<string, string>): Response {
  const state = Object.create(RESPONSE_PROTO) as LightResponseState;
  state[SOURCE] = { status, text, headers };
  return state as unknown as Response;
}

/**
 * What the Node listener needs to write a lightweight response without building it: status, text and the
 * header record; `undefined` for any other response, or once its headers object exists (it may have been
 * changed, so the listener reads it instead).
 */
export function lightParts(response: Response): LightParts | undefined {
  if (!Object.hasOwn(response, SOURCE)) return undefined;
  const state = response as unknown as LightResponseState;
  return state[HEADERS] === undefined && state[REAL] === undefined ? state[SOURCE] : undefined;
}

/** The serialized body of a lightweight response, or `undefined`. */
export function lightText(response: Response): string | undefined {
  return Object.hasOwn(response, SOURCE)
    ? (response as unknown as LightResponseState)[SOURCE].text
    : undefined;
}
