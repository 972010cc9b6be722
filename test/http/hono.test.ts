import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { parse } from 'csv-parse/sync';
import { Hono } from 'hono';
import { mount } from 'hono/mount';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/bulk/types.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { auth, fakeVerifier, jsonAuth, KEY_A, KEY_B } from './support.js';

/** The API mounted under /mailvet in a Hono app served by @hono/node-server, next to the app's own routes. */
describe('mounted in Hono (@hono/node-server, real socket)', () => {
  let handler: Handler;
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    handler = createHandler({
      apiKeys: [KEY_A, KEY_B],
      verifier: fakeVerifier(),
      limits: { requestsPerSecond: 1000, burst: 1000 },
    });
    const app = new Hono();
    app.get('/', (c) => c.text('the host app'));
    app.all('/mailvet/*', mount(handler));
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const started = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close();
    await handler.close();
  });

  it('leaves the host app its routes and answers under the mount path', async () => {
    expect(await (await fetch(`${base}/`)).text()).toBe('the host app');
    const health = await fetch(`${base}/mailvet/healthz`);
    expect(await health.json()).toEqual({ status: 'ok', store: 'memory' });
    expect(health.headers.get('x-request-id')).not.toBeNull();
    const verify = await fetch(`${base}/mailvet/v1/verify?email=${encodeURIComponent('ünï@exämple.org')}`, {
      headers: auth(),
    });
    expect(verify.status).toBe(200);
    expect(verify.headers.get('ratelimit-limit')).toBe('1000');
    expect(await verify.json()).toMatchObject({ email: 'ünï@exämple.org', status: 'valid' });
    expect((await fetch(`${base}/mailvet/v1/verify?email=a@b.example`)).status).toBe(401);
  });

  it('runs the bulk flow; the relative Location resolves under the mount path', async () => {
    const created = await fetch(`${base}/mailvet/v1/bulk`, {
      method: 'POST',
      headers: jsonAuth(),
      body: JSON.stringify({ emails: ['a@x.example', 'bad@x.example', '+1@x.example'] }),
    });
    expect(created.status).toBe(201);
    const job = (await created.json()) as Job;
    const location = new URL(created.headers.get('location') as string, created.url);
    expect(location.pathname).toBe(`/mailvet/v1/bulk/${job.id}`);
    let status = '';
    for (let i = 0; i < 500 && status !== 'complete'; i++) {
      status = ((await (await fetch(location, { headers: auth() })).json()) as Job).status;
    }
    expect(status).toBe('complete');
    expect((await fetch(location, { headers: auth(KEY_B) })).status).toBe(404);
    const csv = await fetch(`${location}/results`, { headers: auth(KEY_A, { accept: 'text/csv' }) });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => [row.email, row.status])).toEqual([
      ['a@x.example', 'valid'],
      ['bad@x.example', 'invalid'],
      ["'+1@x.example", 'valid'],
    ]);
    const bad = await fetch(`${base}/mailvet/v1/bulk`, { method: 'POST', headers: jsonAuth(), body: '{' });
    expect(await bad.json()).toEqual({
      error: { code: 'invalid_request', message: 'the request body is not valid JSON' },
    });
  });
});
