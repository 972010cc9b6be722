/**
 * What the handler tells its `onRequest` observer about each answered request: the one record that request
 * logs and HTTP metrics are made from.
 * @module
 */

/** One answered request, as `HandlerOptions.onRequest` receives it. Never carries a key or a query string. */
export interface RequestRecord {
  /** The request id, as answered in the `Request-Id` header. */
  readonly requestId: string;
  /** The request method (`HEAD` for a HEAD request). */
  readonly method: string;
  /**
   * The route's path template (`/v1/bulk/{id}`), or `null` when no route matched (a console file, an unknown
   * path): a bounded label, never the request's own path.
   */
  readonly route: string | null;
  /** The response status. */
  readonly status: number;
  /** Milliseconds from the request's arrival at the handler to its response (headers) being ready. */
  readonly durationMs: number;
  /**
   * The response body's length: from its `content-length` when known to the handler (a stream has none); the
   * bytes written, for every response, when `createServer` serves it.
   */
  readonly bytes: number | undefined;
  /** The tenant the request acted for, when it was authenticated. */
  readonly tenant: string | undefined;
  /** The public id of the API key used, when the authentication named one (never the key itself). */
  readonly keyId: string | undefined;
}

/**
 * Receives one {@link RequestRecord} per answered request, with the request itself (to read what a record never
 * carries, such as a query parameter an operator chose to log). It must not throw; an error it throws is ignored.
 */
export type RequestObserver = (record: RequestRecord, request: Request) => void;
