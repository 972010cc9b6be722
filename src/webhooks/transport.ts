/**
 * The webhook transport seam: one HTTP POST to an address that was checked already.
 * @module
 */

/** One POST a {@link WebhookTransport} sends. */
export interface WebhookRequest {
  /** The webhook URL (its host goes into `Host` and, for https, SNI and the certificate check). */
  readonly url: URL;
  /** The checked address to connect to; the transport must not resolve the host again. */
  readonly address: string;
  readonly port: number;
  /** Headers to send (signature headers and `content-type`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Time allowed to establish the connection (TCP and TLS), in ms. */
  readonly connectTimeoutMs: number;
  /** Time allowed for the whole exchange, in ms. */
  readonly timeoutMs: number;
  /** Response body bytes read at most (then the connection is cut); the body is discarded. */
  readonly maxResponseBytes: number;
}

/** What the receiver answered. */
export interface WebhookResponse {
  readonly status: number;
  /** Response body bytes read (at most `maxResponseBytes`). */
  readonly bytesRead: number;
  /** True when the body was longer and the connection was cut. */
  readonly truncated: boolean;
}

/**
 * Sends one webhook POST. Implementations connect to `request.address` only, follow no redirects and send no
 * credentials, cookies or proxies from the environment. A failure to get a status line (refused, reset,
 * timeout, TLS) rejects with an `Error` whose message says why.
 */
export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
