import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/http/auth.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { REQUEST_ID_HEADER } from '../../src/http/request-id.js';
import type { RequestRecord } from '../../src/http/request-record.js';
import { auth, fakeVerifier, KEY_A } from './support.js';

const handlers: Handler[] = [];
afterEach(async () => {
  for (const handler of handlers.splice(0)) await handler.close();
});

function observed(onRequest: (record: RequestRecord) => void): Handler {
  const handler = createHandler({ verifier: fakeVerifier(), apiKeys: [KEY_A], console: false, onRequest });
  handlers.push(handler);
  return handler;
}

describe('onRequest', () => {
  it('gets the route template, status, tenant and the request id answered to the client', async () => {
    const records: RequestRecord[] = [];
    const handler = observed((record) => records.push(record));
    const response = await handler(
      new Request('http://localhost/v1/bulk/00000000-0000-4000-8000-000000000000?x=1', {
        headers: auth(KEY_A),
      }),
    );
    expect(response.status).toBe(404);
    expect(records).toHaveLength(1);
    const [record] = records;
    expect(record).toMatchObject({
      method: 'GET',
      route: '/v1/bulk/{id}',
      status: 404,
      requestId: response.headers.get(REQUEST_ID_HEADER),
      tenant: await sha256Hex(KEY_A),
    });
    expect(record?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('names no route and no tenant for an unknown path without a key', async () => {
    const records: RequestRecord[] = [];
    const handler = observed((record) => records.push(record));
    const response = await handler(new Request('http://localhost/v1/nope%00%F0%9F%92%A5'));
    expect(response.status).toBe(401);
    expect(records[0]).toMatchObject({ route: null, tenant: undefined, status: 401 });
  });

  it('reports HEAD as HEAD, with the GET route', async () => {
    const records: RequestRecord[] = [];
    const handler = observed((record) => records.push(record));
    await handler(new Request('http://localhost/healthz', { method: 'HEAD' }));
    expect(records[0]).toMatchObject({ method: 'HEAD', route: '/healthz', status: 200 });
  });

  it('does not change the answer when the observer throws', async () => {
    const handler = observed(() => {
      throw new Error('observer bug');
    });
    const response = await handler(new Request('http://localhost/healthz'));
    expect(response.status).toBe(200);
  });

  it('carries the tenant and key id of a principal that authenticate answers', async () => {
    const records: RequestRecord[] = [];
    const handler = createHandler({
      verifier: fakeVerifier(),
      console: false,
      authenticate: () => ({ tenant: 'tenant-1', keyId: 'mv_abc123' }),
      onRequest: (record) => records.push(record),
    });
    handlers.push(handler);
    const response = await handler(new Request('http://localhost/v1/bulk'));
    expect(response.status).toBe(200);
    expect(records[0]).toMatchObject({ route: '/v1/bulk', tenant: 'tenant-1', keyId: 'mv_abc123' });
  });

  it('answers 401 when authenticate answers a principal with an empty tenant', async () => {
    const handler = createHandler({
      verifier: fakeVerifier(),
      console: false,
      authenticate: () => ({ tenant: '' }),
    });
    handlers.push(handler);
    expect((await handler(new Request('http://localhost/v1/bulk'))).status).toBe(401);
  });

  it('is refused when it is not a function', () => {
    expect(() =>
      createHandler({ verifier: fakeVerifier(), apiKeys: [KEY_A], onRequest: 'log' as never }),
    ).toThrow(/onRequest must be a function/);
  });
});
