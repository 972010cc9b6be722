/**
 * The default {@link WebhookTransport}: `node:http` / `node:https`, connecting to the checked address.
 * @module
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookRequest, WebhookResponse, WebhookTransport } from './transport.js';

/** Options of {@link nodeWebhookTransport}. */
export interface NodeWebhookTransportOptions {
  /** Extra CA certificates for https receivers (PEM), e.g. a test CA. @default Node's bundled roots */
  readonly ca?: string | readonly string[];
}

/**
 * Creates the transport that sends webhooks with `node:http` / `node:https`: no agent (no pooled connection, no
 * environment proxy), the TCP connection to `request.address` (no DNS lookup), `Host` and TLS server name from the
 * URL, redirects returned as they are (3xx is a failed attempt), the response body read up to
 * `maxResponseBytes` and discarded.
 * @example
 * const notifier = createWebhookNotifier(jobs, { transport: nodeWebhookTransport(), secrets: [secret] });
 */
export function nodeWebhookTransport(options: NodeWebhookTransportOptions = {}): WebhookTransport {
  const ca = options.ca === undefined ? undefined : ([] as string[]).concat(options.ca);
  return { send: (request) => send(request, ca) };
}

function send(request: WebhookRequest, ca: string[] | undefined): Promise<WebhookResponse> {
  const { url } = request;
  const secure = url.protocol === 'https:';
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<WebhookResponse>((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | null, response?: WebhookResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(total);
      clearTimeout(connect);
      if (error !== null) {
        req.destroy();
        reject(error);
      } else resolve(response as WebhookResponse);
    };
    const common = {
      host: request.address,
      port: request.port,
      method: 'POST',
      path: `${url.pathname}${url.search}`,
      agent: false as const,
      headers: {
        ...request.headers,
        host: url.host,
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': 'mailvet-webhooks',
      },
    };
    const req = secure
      ? httpsRequest({ ...common, servername: host, ...(ca === undefined ? {} : { ca }) })
      : httpRequest(common);
    const total = setTimeout(
      () => finish(new Error(`no response within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    );
    const connect = setTimeout(
      () => finish(new Error(`could not connect within ${request.connectTimeoutMs} ms`)),
      request.connectTimeoutMs,
    );
    req.once('socket', (socket) => {
      const connected = secure ? 'secureConnect' : 'connect';
      if (!socket.connecting && !secure) clearTimeout(connect);
      else socket.once(connected, () => clearTimeout(connect));
    });
    req.once('error', (error) => finish(new Error(error.message)));
    req.once('response', (res) => {
      let bytesRead = 0;
      res.on('data', (chunk: Buffer) => {
        bytesRead += chunk.length;
        if (bytesRead >= request.maxResponseBytes) {
          const status = res.statusCode ?? 0;
          finish(null, { status, bytesRead: request.maxResponseBytes, truncated: true });
          res.destroy();
        }
      });
      res.once('end', () => finish(null, { status: res.statusCode ?? 0, bytesRead, truncated: false }));
      res.once('error', (error) => finish(new Error(error.message)));
    });
    req.end(request.body);
  });
}
