import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type RunningServer } from '../../src/http/node.js';
import { fakeVerifier, KEY_A } from './support.js';

const logged: unknown[] = [];
let server: RunningServer;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: [KEY_A],
    verifier: fakeVerifier(),
    logger: { error: (_message, details) => logged.push(details.error) },
  });
});
afterAll(async () => {
  await server.close();
});

describe('a client that disconnects mid-upload', () => {
  it('is a client abort, not an internal error: nothing is logged and the server goes on', async () => {
    const { port } = new URL(server.url);
    for (const path of ['/v1/bulk', '/v1/bulk?name=list']) {
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write(
            `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\n` +
              `Content-Type: ${path.includes('name') ? 'text/plain' : 'application/json'}\r\nContent-Length: 100000\r\n\r\n` +
              '{"emails": ["a@x.example", ',
          );
          setTimeout(() => socket.destroy(), 50);
        });
        socket.on('close', () => resolve());
        socket.on('error', () => undefined);
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(logged).toEqual([]);
    const health = await fetch(`${server.url.replace(/\/$/, '')}/healthz`);
    expect(health.status).toBe(200);
  });
});
