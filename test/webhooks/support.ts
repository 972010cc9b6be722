/**
 * Loopback webhook receivers (node:http on 127.0.0.1) that verify signatures with `standardwebhooks`, and a
 * transport that records every send.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { WebhookRequest, WebhookResponse, WebhookTransport } from '../../src/webhooks/transport.js';

/** One request a receiver got. */
export interface Received {
  readonly headers: Record<string, string>;
  readonly body: string;
  /** True when the signature verified with the receiver's secret. */
  readonly verified: boolean;
}

/** A receiver on 127.0.0.1 that answers with `reply`. */
export async function receiver(
  secret: string,
  reply: (request: IncomingMessage, response: ServerResponse, index: number) => void,
) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([key, value]) => [key, String(value)]),
      );
      let verified = true;
      try {
        new Webhook(secret).verify(body, headers);
      } catch {
        verified = false;
      }
      received.push({ headers, body, verified });
      reply(req, res, received.length - 1);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    received,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A transport that records sends and answers 204 without any network. */
export function recordingTransport(inner?: WebhookTransport) {
  const sends: WebhookRequest[] = [];
  const transport: WebhookTransport = {
    async send(request): Promise<WebhookResponse> {
      sends.push(request);
      if (inner !== undefined) return inner.send(request);
      return { status: 204, bytesRead: 0, truncated: false };
    },
  };
  return { sends, transport };
}

/** A fixed test secret. */
export const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
/** A second secret, for rotation. */
export const SECRET2 = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
