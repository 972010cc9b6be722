/**
 * `GET /metrics` on the API: off (404) without the handler's `metrics` option; with it, 401 without a key, 403
 * for a key without the admin scope (the message names it), 200 with the exposition for one that holds it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import type { Principal } from '../../src/http/principal.js';

const EXPOSITION = {
  contentType: 'text/plain; version=0.0.4; charset=utf-8',
  body: '# HELP mailvet_up test\n# TYPE mailvet_up gauge\nmailvet_up 1\n',
};

const PRINCIPALS: Record<string, Principal> = {
  'admin-key': { tenant: 'ops', scopes: ['admin'] },
  'verify-key': { tenant: 'app', scopes: ['verify', 'bulk:read'] },
  'all-key': { tenant: 'legacy' }, // no scopes: every scope
};

let handler: Handler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
});

function make(metrics = true): Handler {
  handler = createHandler({
    authenticate: (request) => PRINCIPALS[(request.headers.get('authorization') ?? '').slice(7)] ?? null,
    verifierOptions: { dns: false, smtp: false },
    console: false,
    ...(metrics ? { metrics: async () => EXPOSITION } : {}),
  });
  return handler;
}

const get = (h: Handler, key?: string, method = 'GET') =>
  h(
    new Request('http://localhost/metrics', {
      method,
      headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
    }),
  );

describe('GET /metrics on the API', () => {
  it('answers the exposition, as text, to a key with the admin scope or with every scope', async () => {
    const h = make();
    for (const key of ['admin-key', 'all-key']) {
      const response = await get(h, key);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe(EXPOSITION.contentType);
      expect(response.headers.get('x-request-id')).toBeTruthy();
      expect(await response.text()).toBe(EXPOSITION.body);
    }
  });

  it('HEAD answers the headers without the body', async () => {
    const response = await get(make(), 'admin-key', 'HEAD');
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });

  it('is 401 without a key or with an unknown one', async () => {
    const h = make();
    for (const key of [undefined, 'nope', 'ünïcödé'.repeat(500)]) {
      const response = await get(h, key);
      expect(response.status).toBe(401);
      expect(await response.text()).not.toContain('mailvet_up');
    }
  });

  it('is 403 naming the missing scope for a key without admin', async () => {
    const response = await get(make(), 'verify-key');
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toMatch(/admin/);
  });

  it('is 404 while off, and 405 for another method', async () => {
    const off = await get(make(false), 'admin-key');
    expect(off.status).toBe(404);
    expect(((await off.json()) as { error: { message: string } }).error.message).toMatch(/--metrics/);
    await handler?.close();
    const post = await get(make(), 'admin-key', 'POST');
    expect(post.status).toBe(405);
  });

  it('a failing source is a 500 internal_error that reveals nothing', async () => {
    const errors: unknown[] = [];
    handler = createHandler({
      apiKeys: ['k'],
      verifierOptions: { dns: false, smtp: false },
      console: false,
      logger: { error: (_, details) => errors.push(details.error) },
      metrics: async () => {
        throw new Error('registry exploded at /secret/path');
      },
    });
    const response = await get(handler, 'k');
    expect(response.status).toBe(500);
    expect(await response.text()).not.toContain('secret');
    expect(errors).toHaveLength(1);
  });

  it.each([['text'], [{ body: 'x' }], [42]])('metrics: %j is an OptionsError naming it', (metrics) => {
    expect(() =>
      createHandler({ apiKeys: ['k'], verifierOptions: { dns: false }, metrics: metrics as never }),
    ).toThrow(OptionsError);
  });
});
