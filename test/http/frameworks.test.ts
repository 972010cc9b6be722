import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/bulk/types.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { toNodeListener } from '../../src/http/node.js';
import { auth, fakeVerifier, jsonAuth, KEY_A } from './support.js';

function handlerForTest(): Handler {
  return createHandler({
    apiKeys: [KEY_A],
    verifier: fakeVerifier(),
    limits: { requestsPerSecond: 1000, burst: 1000 },
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

async function createJob(base: string): Promise<Response> {
  return fetch(`${base}/v1/bulk`, {
    method: 'POST',
    headers: jsonAuth(),
    body: JSON.stringify({ name: 'framework', emails: ['a@x.example'] }),
  });
}

/** The Express snippet of docs/http.md, as written there (mailvet before the body parser). */
describe('mounted in Express (docs/http.md), real socket', () => {
  let handler: Handler;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    handler = handlerForTest();
    const app = express();
    app.use('/mailvet', toNodeListener(handler)); // Express strips /mailvet from req.url
    app.use(express.json()); // your own routes' parsers come after
    app.post('/echo', (request, response) => {
      response.json({ got: request.body as unknown });
    });
    server = await new Promise<Server>((resolve) => {
      const started = app.listen(0, '127.0.0.1', () => resolve(started));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await closeServer(server);
    await handler.close();
  });

  it('serves the API under the mount path and leaves the app its own parsed routes', async () => {
    const created = await createJob(`${base}/mailvet`);
    expect(created.status).toBe(201);
    const job = (await created.json()) as Job;
    expect(job).toMatchObject({ name: 'framework', total: 1 });
    const polled = await fetch(`${base}/mailvet/v1/bulk/${job.id}`, { headers: auth() });
    expect(polled.status).toBe(200);
    const echo = await fetch(`${base}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await echo.json()).toEqual({ got: { a: 1 } });
  });
});

describe('mounted in Express after express.json() (the mistake)', () => {
  let handler: Handler;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    handler = handlerForTest();
    const app = express();
    app.use(express.json());
    app.use(toNodeListener(handler));
    server = await new Promise<Server>((resolve) => {
      const started = app.listen(0, '127.0.0.1', () => resolve(started));
    });
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await closeServer(server);
    await handler.close();
  });

  it('answers 500 body_already_read naming the cause instead of hanging', async () => {
    const response = await createJob(base);
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('body_already_read');
    expect(body.error.message).toMatch(/express\.json\(\).*mount mailvet before/);
  });

  it('still serves routes without a body', async () => {
    const response = await fetch(`${base}/healthz`);
    expect(response.status).toBe(200);
  });
});

/** The Fastify snippet of docs/http.md, compiled under the project's strict settings. */
describe('mounted in Fastify (docs/http.md), real socket', () => {
  let handler: Handler;
  let base: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    handler = handlerForTest();
    const listener = toNodeListener(handler);
    const app = Fastify();
    await app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null)); // leave the body unread
      const forward = (request: FastifyRequest, reply: FastifyReply) => {
        reply.hijack();
        listener(request.raw, reply.raw);
      };
      scope.all('/v1/*', forward);
      scope.get('/healthz', forward);
    });
    app.get('/', async () => ({ app: 'own route' }));
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
  });
  afterAll(async () => {
    await close();
    await handler.close();
  });

  it('serves the API with bodies, and the app its own routes', async () => {
    const created = await createJob(base);
    expect(created.status).toBe(201);
    const job = (await created.json()) as Job;
    const added = await fetch(`${base}/v1/bulk/${job.id}/emails`, {
      method: 'POST',
      headers: jsonAuth(),
      body: JSON.stringify({ emails: ['b@x.example'] }),
    });
    expect([200, 409]).toContain(added.status);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok', store: 'memory' });
    expect(await (await fetch(`${base}/`)).json()).toEqual({ app: 'own route' });
  });
});
