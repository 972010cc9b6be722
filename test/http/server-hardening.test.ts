import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createServer, defaultRequestTimeoutMs } from '../../src/http/node.js';
import { fakeVerifier, KEY_A } from './support.js';

describe('createServer timeouts', () => {
  it('cuts off a client that never finishes its headers', async () => {
    const server = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY_A],
      verifier: fakeVerifier(),
      headersTimeoutMs: 300,
    });
    try {
      const { port } = new URL(server.url);
      const started = Date.now();
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        const socket = connect(Number(port), '127.0.0.1', () =>
          socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n'),
        );
        socket.on('data', (chunk) => {
          text += chunk.toString();
        });
        socket.on('close', () => resolve(text));
        socket.on('error', () => undefined);
      });
      expect(answer.startsWith('HTTP/1.1 408') || answer === '').toBe(true);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await server.close();
    }
  });

  it('derives the request timeout from the body limits, and validates both', async () => {
    expect(defaultRequestTimeoutMs(64 * 1024 * 1024)).toBe(256_000);
    expect(defaultRequestTimeoutMs(1024)).toBe(60_000);
    for (const bad of [0, 99, 1.5, 3_600_001, '1000'])
      await expect(
        createServer({ port: 0, apiKeys: [KEY_A], verifier: fakeVerifier(), headersTimeoutMs: bad as never }),
      ).rejects.toMatchObject({ code: 'invalid_option', option: 'headersTimeoutMs' });
  });
});

describe('failed authentications per client address', () => {
  it('answers 429 with Retry-After once an address has failed too often, whatever key it sends then', async () => {
    const server = await createServer({
      port: 0,
      host: '127.0.0.1',
      apiKeys: [KEY_A],
      verifier: fakeVerifier(),
      limits: { failedAuthPerMinute: 3 },
    });
    try {
      const url = `${server.url.replace(/\/$/, '')}/v1/verify?email=a@example.com`;
      const ok = await fetch(url, { headers: { authorization: `Bearer ${KEY_A}` } });
      expect(ok.status).toBe(200);
      for (let i = 0; i < 3; i++) {
        expect((await fetch(url, { headers: { authorization: `Bearer guess-${i}` } })).status).toBe(401);
      }
      const blocked = await fetch(url, { headers: { authorization: 'Bearer guess-4' } });
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await blocked.json()) as { error: { message: string } }).error.message).toContain(
        'failed authentications',
      );
      // Even the right key is refused from that address until the bucket refills: no oracle for guesses.
      expect((await fetch(url, { headers: { authorization: `Bearer ${KEY_A}` } })).status).toBe(429);
      // Routes without a key are not affected.
      expect((await fetch(`${server.url.replace(/\/$/, '')}/healthz`)).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
