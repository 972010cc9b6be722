import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeWebhookTransport } from '../../src/webhooks/node-transport.js';
import { signWebhook } from '../../src/webhooks/sign.js';
import { receiver, SECRET } from './support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

function requestTo(port: number, overrides: { timeoutMs?: number; url?: string } = {}) {
  const body = JSON.stringify({ type: 'bulk.completed', timestamp: new Date().toISOString(), data: {} });
  return {
    // The name never resolves: the transport must connect to `address` without a lookup.
    url: new URL(overrides.url ?? `http://hooks.mailvet.invalid:${port}/in?x=1`),
    address: '127.0.0.1',
    port,
    headers: { ...signWebhook([SECRET], 'msg_1', Date.now(), body), 'content-type': 'application/json' },
    body,
    connectTimeoutMs: 5000,
    timeoutMs: overrides.timeoutMs ?? 15000,
    maxResponseBytes: 65536,
  };
}

describe('nodeWebhookTransport', () => {
  it('posts to the checked address with Host from the URL and a signature the package verifies', async () => {
    const hook = await receiver(SECRET, (_req, res) => res.writeHead(204).end());
    closers.push(hook.close);
    const response = await nodeWebhookTransport().send(requestTo(hook.port));
    expect(response).toEqual({ status: 204, bytesRead: 0, truncated: false });
    expect(hook.received).toHaveLength(1);
    expect(hook.received[0]?.verified).toBe(true);
    expect(hook.received[0]?.headers.host).toBe(`hooks.mailvet.invalid:${hook.port}`);
    expect(hook.received[0]?.headers.cookie).toBeUndefined();
    expect(hook.received[0]?.headers.authorization).toBeUndefined();
  });

  it('gives up on a receiver that never answers', async () => {
    const hook = await receiver(SECRET, () => undefined);
    closers.push(hook.close);
    await expect(nodeWebhookTransport().send(requestTo(hook.port, { timeoutMs: 200 }))).rejects.toThrow(
      /no response within 200 ms/,
    );
  });

  it('does not follow a redirect', async () => {
    let hits = 0;
    const other = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const otherPort = (other.address() as AddressInfo).port;
    closers.push(() => new Promise((resolve) => other.close(() => resolve())));
    const hook = await receiver(SECRET, (_req, res) =>
      res.writeHead(307, { location: `http://127.0.0.1:${otherPort}/` }).end(),
    );
    closers.push(hook.close);
    const response = await nodeWebhookTransport().send(requestTo(hook.port));
    expect(response.status).toBe(307);
    expect(hits).toBe(0);
  });

  it('reads at most 64 KiB of a 10 MB response and cuts the connection', async () => {
    let written = 0;
    let closedEarly: boolean | undefined;
    const hook = await receiver(SECRET, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16384, 1);
      const pump = () => {
        while (written < 10 * 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('close', () => {
        closedEarly = !res.writableFinished;
      });
      pump();
    });
    closers.push(hook.close);
    const response = await nodeWebhookTransport().send(requestTo(hook.port));
    expect(response).toEqual({ status: 200, bytesRead: 65536, truncated: true });
    await new Promise<void>((resolve) => {
      const check = () => (closedEarly === undefined ? setImmediate(check) : resolve());
      check();
    });
    expect(closedEarly).toBe(true);
    expect(written).toBeLessThan(10 * 1024 * 1024);
  });

  it('reports a refused connection as an error', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await expect(nodeWebhookTransport().send(requestTo(port))).rejects.toThrow(/ECONNREFUSED/);
  });

  it('speaks TLS to the checked address, verifying the certificate against the URL host name', async () => {
    const cert = readFileSync('fixtures/tls/cert.pem', 'utf8'); // CN and SAN mx.test.local
    const server = createHttpsServer(
      { cert, key: readFileSync('fixtures/tls/key.pem', 'utf8') },
      (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    closers.push(() => new Promise((resolve) => server.close(() => resolve())));
    const transport = nodeWebhookTransport({ ca: cert });
    const good = await transport.send(requestTo(port, { url: `https://mx.test.local:${port}/in` }));
    expect(good).toEqual({ status: 200, bytesRead: 2, truncated: false });
    await expect(
      transport.send(requestTo(port, { url: `https://other.test.local:${port}/in` })),
    ).rejects.toThrow(/altnames|certificate/i);
    await expect(
      nodeWebhookTransport().send(requestTo(port, { url: `https://mx.test.local:${port}/in` })),
    ).rejects.toThrow(/self.signed|certificate/i);
  });
});
