import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import { createServer, type RunningServer, toNodeListener } from '../../src/http/node.js';
import type { VerificationResult } from '../../src/result.js';
import { deferred } from '../support/deferred.js';
import { waitFor } from '../support/wait-for.js';
import { addresses, auth, fakeVerifier, jsonAuth, KEY_A, KEY_B } from './support.js';

const quiet = { error: () => undefined };
const UNLIMITED = { requestsPerSecond: Number.POSITIVE_INFINITY };

/** A raw HTTP/1.1 exchange over a socket: what a client library would hide. */
function raw(url: string, text: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString('utf8');
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
  });
}

/** Streams `size` bytes of a JSON string as a chunked upload, and reports how much the server took. */
function upload(
  url: string,
  size: number,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; sent: number }> {
  return new Promise((resolve, reject) => {
    // A connection of its own: after a refusal the server drains (or cuts) the rest of the body.
    const req = httpRequest(url, { method: 'POST', headers: { ...jsonAuth(), ...headers }, agent: false });
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    req.on('response', (res: IncomingMessage) => {
      let body = '';
      res.on('data', (data) => {
        body += data;
      });
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body, sent });
        req.destroy();
      });
    });
    req.on('error', reject);
    const pump = (): void => {
      while (sent < size) {
        sent += chunk.length;
        if (!req.write(sent === chunk.length ? Buffer.concat([Buffer.from('{"name":"'), chunk]) : chunk)) {
          req.once('drain', pump);
          return;
        }
      }
      req.end('"}');
    };
    if (headers['content-length'] === undefined) pump();
    else req.end();
  });
}

describe('createServer over a real socket', () => {
  let server: RunningServer;
  const verifier = fakeVerifier();
  let reads = 0;

  beforeAll(async () => {
    const jobs = new BulkJobManager({ verifier });
    const counting = new Proxy(jobs, {
      get(target, property, receiver) {
        if (property === 'results') {
          return (...args: Parameters<BulkJobManager['results']>) => {
            reads++;
            return target.results(...args);
          };
        }
        const value = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    server = await createServer({
      port: 0,
      apiKeys: [KEY_A, KEY_B],
      verifier,
      jobs: counting,
      limits: UNLIMITED,
    });
    afterAll(async () => {
      await server.close();
      await jobs.close();
    });
  });

  const get = (path: string, key = KEY_A, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${path}`, { headers: auth(key, headers) });
  const post = (path: string, body: unknown, key = KEY_A) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: jsonAuth(key), body: JSON.stringify(body) });

  /** Every state 8 concurrent pollers saw, round after round without a pause, until one saw it complete. */
  async function poll(id: string): Promise<Job[]> {
    const seen: Job[] = [];
    await waitFor(
      async () => {
        const round = await Promise.all(
          Array.from({ length: 8 }, () => get(`/v1/bulk/${id}`).then((r) => r.json() as Promise<Job>)),
        );
        seen.push(...round);
        return round.some((job) => job.status === 'complete');
      },
      { what: `job ${id} to complete`, intervalMs: 0 },
    );
    return seen;
  }

  it('listens on loopback and answers /healthz', async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('content-length')).toBe(String('{"status":"ok","store":"memory"}'.length));
  });

  it('runs the whole bulk flow: create → add 10k chunks → start → concurrent polls → json, csv, ndjson', async () => {
    const created = await post('/v1/bulk', { name: 'Größe 20k', auto_start: false });
    expect(created.status).toBe(201);
    const job = (await created.json()) as Job;
    const first = addresses(10_000);
    const second = addresses(10_000).map((email) => `x${email}`);
    const [a, b] = await Promise.all([
      post(`/v1/bulk/${job.id}/emails`, { emails: first }),
      post(`/v1/bulk/${job.id}/emails`, { emails: second }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(await (await get(`/v1/bulk/${job.id}`)).json()).toMatchObject({ status: 'queued', total: 20_000 });
    expect(
      (await fetch(`${server.url}/v1/bulk/${job.id}/start`, { method: 'POST', headers: auth() })).status,
    ).toBe(200);

    const seen = await poll(job.id);
    for (const snapshot of seen) {
      expect(['queued', 'processing', 'complete']).toContain(snapshot.status);
      expect(snapshot.progress).toBeCloseTo(
        snapshot.total === 0 ? 0 : snapshot.completed / snapshot.total,
        12,
      );
    }
    const done = seen.find((s) => s.status === 'complete') as Job;
    expect(done).toMatchObject({ total: 20_000, completed: 20_000, progress: 1 });

    const page = (await (await get(`/v1/bulk/${job.id}/results?offset=9999&limit=2`)).json()) as {
      results: VerificationResult[];
    };
    expect(page.results.map((r) => r.email)).toEqual([first[9999], second[0]]);

    const csv = await get(`/v1/bulk/${job.id}/results`, KEY_A, { accept: 'text/csv' });
    expect(csv.headers.get('transfer-encoding')).toBe('chunked');
    const rows = parse(await csv.text(), { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => row.email)).toEqual([...first, ...second]);

    const ndjson = await get(`/v1/bulk/${job.id}/results?format=ndjson`);
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as VerificationResult).email)).toEqual([
      ...first,
      ...second,
    ]);
  });

  it('frames bodiless answers right: 204 without Content-Length, HEAD without a body', async () => {
    const job = (await (await post('/v1/bulk', {})).json()) as Job;
    const head = await raw(
      server.url,
      `HEAD /v1/bulk/${job.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nConnection: close\r\n\r\n`,
    );
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.endsWith('\r\n\r\n')).toBe(true);
    const deleted = await raw(
      server.url,
      `DELETE /v1/bulk/${job.id} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nConnection: close\r\n\r\n`,
    );
    expect(deleted).toMatch(/^HTTP\/1\.1 204/);
    expect(deleted.toLowerCase()).not.toContain('content-length');
    expect(deleted.toLowerCase()).not.toContain('transfer-encoding');
  });

  it('isolates tenants and answers 401 over the wire', async () => {
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    expect((await get(`/v1/bulk/${job.id}`, KEY_B)).status).toBe(404);
    expect((await get(`/v1/bulk/${job.id}`, KEY_A)).status).toBe(200);
    const anonymous = await fetch(`${server.url}/v1/bulk/${job.id}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('answers bad JSON with 400 and a wrong content type with 415', async () => {
    const bad = await fetch(`${server.url}/v1/bulk`, {
      method: 'POST',
      headers: jsonAuth(),
      body: '{"emails":',
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 'invalid_request', message: 'the request body is not valid JSON' },
    });
    const form = await fetch(`${server.url}/v1/bulk`, {
      method: 'POST',
      headers: auth(KEY_A, { 'content-type': 'multipart/form-data; boundary=x' }),
      body: '--x--',
    });
    expect(form.status).toBe(415);
  });

  it('refuses a huge body: at once from Content-Length, early from a chunked stream', async () => {
    const declared = await upload(`${server.url}/v1/bulk`, 0, { 'content-length': String(11 * 1024 * 1024) });
    expect(declared.status).toBe(413);
    const streamed = await upload(`${server.url}/v1/bulk`, 64 * 1024 * 1024, {});
    expect(streamed.status).toBe(413);
    expect(streamed.sent).toBeLessThan(48 * 1024 * 1024); // the answer came before the upload ended
    expect(JSON.parse(streamed.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('keeps unicode intact both ways', async () => {
    const email = 'josé.müller@bücher.example';
    const response = await get(`/v1/verify?email=${encodeURIComponent(email)}`);
    expect(await response.json()).toMatchObject({ email, domain: 'bücher.example' });
    const job = (await (
      await post('/v1/bulk', { name: '名前 🚀', emails: [email, '用户@例子.广告'] })
    ).json()) as Job;
    expect(job.name).toBe('名前 🚀');
    const text = await (await get(`/v1/bulk/${job.id}/results?format=csv&partial=true`)).text();
    expect(text).toContain(email);
  });

  it('answers a malformed request target with a JSON 400', async () => {
    const response = await raw(
      server.url,
      'GET http://[::1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    expect(response).toMatch(/^HTTP\/1\.1 400/);
    expect(response).toContain('"code":"invalid_request"');
  });

  it('reads headers as Node does: a single line as sent (any case), repeated lines by Node’s rules', async () => {
    const send = (lines: string) =>
      raw(
        server.url,
        `GET /v1/verify?email=a%40b.c HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n\r\n`,
      );
    const once = await send(`AUTHORIZATION: Bearer ${KEY_A}\r\nX-REQUEST-ID: given-1\r\n`);
    expect(once).toMatch(/^HTTP\/1\.1 200/);
    expect(once).toContain('x-request-id: given-1\r\n');
    // Node keeps the first of repeated Authorization lines, and joins repeated X-Request-Id lines with ", "
    // (no longer a usable id: a new one is made).
    const twice = await send(
      `Authorization: Bearer ${KEY_A}\r\nauthorization: Bearer wrong\r\nX-Request-Id: a\r\nx-request-id: b\r\n`,
    );
    expect(twice).toMatch(/^HTTP\/1\.1 200/);
    expect(twice).toMatch(/x-request-id: [0-9a-f-]{36}\r\n/);
    const wrongFirst = await send(`Authorization: Bearer wrong\r\nAuthorization: Bearer ${KEY_A}\r\n`);
    expect(wrongFirst).toMatch(/^HTTP\/1\.1 401/);
  });

  it('splits an origin-form target whose query holds "://" at its "?"', async () => {
    const response = await get(`/v1/verify?next=${'http://x/y'}&email=a%40b.c`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as VerificationResult).email).toBe('a@b.c');
  });

  it('streams a large NDJSON download with backpressure: a paused client stops the reads', async () => {
    const job = (await (await post('/v1/bulk', { auto_start: false })).json()) as Job;
    for (let i = 0; i < 10; i++) {
      await post(`/v1/bulk/${job.id}/emails`, { emails: addresses(10_000).map((e) => `${i}${e}`) });
    }
    await fetch(`${server.url}/v1/bulk/${job.id}/start`, { method: 'POST', headers: auth() });
    await poll(job.id);
    reads = 0;
    const lines = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(
        `${server.url}/v1/bulk/${job.id}/results?format=ndjson`,
        { headers: auth() },
        (res) => {
          res.pause();
          setTimeout(() => {
            expect(reads).toBeLessThan(50); // 100 reads of 1,000 would be the whole job
            let count = 0;
            res.on('data', (chunk: Buffer) => {
              for (const byte of chunk) if (byte === 0x0a) count++;
            });
            res.on('end', () => resolve(count));
            res.resume();
          }, 300);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(lines).toBe(100_000);
    expect(reads).toBe(100);
  });
});

describe('the Node listener', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('aborts the request signal when the client goes away, also when it is read only after', async () => {
    const signals: AbortSignal[] = [];
    const lateEntered = deferred();
    let readLate: () => void = () => undefined;
    const late = new Promise<void>((resolve) => {
      readLate = resolve;
    });
    const direct = await startListener(
      toNodeListener(async (request) => {
        if (new URL(request.url).pathname === '/late') {
          lateEntered.resolve();
          await late;
        }
        signals.push(request.signal);
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
        return new Response('never sent');
      }),
    );
    const leave = (path: string) => {
      const client = httpRequest(`${direct.url}${path}`, { agent: false });
      client.on('error', () => undefined);
      client.end();
      return client;
    };
    const early = leave('/early');
    while (signals.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(signals[0]?.aborted).toBe(false);
    early.destroy();
    while (!signals[0]?.aborted) await new Promise((resolve) => setImmediate(resolve));

    const gone = leave('/late');
    await lateEntered.promise; // the request has reached the handler
    gone.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50)); // and the close reach the server
    readLate();
    while (signals.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(signals[1]?.aborted).toBe(true);
    await direct.close();
  });

  it('gives handlers a full Request: body methods, clone, instanceof', async () => {
    const direct = await startListener(
      toNodeListener(async (request) => {
        const copy = request.clone();
        const text = await request.text();
        return Response.json({
          isRequest: request instanceof Request,
          method: request.method,
          type: request.headers.get('content-type'),
          text,
          copied: await copy.text(),
          used: request.bodyUsed,
          bodyOfGet: request.method === 'GET' ? request.body : 'n/a',
        });
      }),
    );
    const posted = await fetch(`${direct.url}/x?y=1`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: 'héllo 🌍',
    });
    expect(await posted.json()).toEqual({
      isRequest: true,
      method: 'POST',
      type: 'text/plain; charset=utf-8',
      text: 'héllo 🌍',
      copied: 'héllo 🌍',
      used: true,
      bodyOfGet: 'n/a',
    });
    const got = await fetch(`${direct.url}/`);
    expect(await got.json()).toMatchObject({ method: 'GET', text: '', bodyOfGet: null });
    await direct.close();
  });

  it('lets requests in flight finish on close(), then stops listening', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const verifier = fakeVerifier(gate);
    const server = await createServer({ port: 0, apiKeys: [KEY_A], verifier, limits: UNLIMITED });
    const pending = fetch(`${server.url}/v1/verify?email=a@b.example`, { headers: auth() });
    while (verifier.calls.length === 0) await new Promise((resolve) => setImmediate(resolve));
    const closing = server.close();
    open();
    expect((await pending).status).toBe(200);
    await closing;
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('turns a rejecting handler into a JSON 500 and passes every Set-Cookie', async () => {
    const logged: unknown[] = [];
    const listener = toNodeListener(
      async (request) => {
        if (new URL(request.url).pathname === '/fail') throw new Error('db at 10.0.0.9 down');
        const headers = new Headers();
        headers.append('set-cookie', 'a=1');
        headers.append('set-cookie', 'b=2');
        return new Response('ok', { headers });
      },
      { logger: { error: (_m, details) => logged.push(details.error) } },
    );
    const direct = await startListener(listener);
    const failed = await fetch(`${direct.url}/fail`);
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    expect(String(logged[0])).toContain('10.0.0.9');
    const ok = await fetch(`${direct.url}/`);
    expect(ok.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await ok.text()).toBe('ok');
    await direct.close();
  });

  it('cuts the connection when a streamed body fails midway', async () => {
    const listener = toNodeListener(async () => {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) return controller.error(new Error('store lost'));
          sent = true;
          controller.enqueue(new TextEncoder().encode('{"partial":'));
        },
      });
      return new Response(body, { headers: { 'content-type': 'application/json' } });
    });
    const direct = await startListener(listener);
    const outcome = await fetch(`${direct.url}/`)
      .then((response) => response.text())
      .then(
        () => 'complete',
        () => 'failed',
      );
    expect(outcome).toBe('failed');
    await direct.close();
  });

  it('writes the headers a wrapping middleware adds to the handler’s response', async () => {
    const handler = createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier(), limits: UNLIMITED });
    const direct = await startListener(
      toNodeListener(async (request) => {
        const response = await handler(request);
        response.headers.set('access-control-allow-origin', '*');
        return response;
      }),
    );
    const response = await fetch(`${direct.url}/v1/verify?email=a@b.example`, { headers: auth() });
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    expect(response.headers.get('x-request-id')).not.toBeNull();
    expect(await response.json()).toMatchObject({ email: 'a@b.example', status: 'valid' });
    await direct.close();
    await handler.close();
  });

  it('serves a given handler and leaves it open on close()', async () => {
    const handler = createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier() });
    const server = await createServer({ port: 0, handler });
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.close();
    expect((await handler(new Request('http://localhost/healthz'))).status).toBe(200);
    await handler.close();
  });

  it('serves the real offline verifier', async () => {
    const server = await createServer({
      port: 0,
      apiKeys: [KEY_A],
      verifierOptions: { dns: false, smtp: false },
    });
    servers.push(server);
    const response = await fetch(`${server.url}/v1/verify?email=${encodeURIComponent('not an address')}`, {
      headers: auth(),
    });
    expect(await response.json()).toMatchObject({ status: 'invalid', sub_status: 'failed_syntax_check' });
  });

  it('refuses bad server options and reports a port in use', async () => {
    await expect(createServer({ port: -1, apiKeys: [KEY_A] })).rejects.toThrow(/port must be an integer/);
    await expect(
      createServer({
        port: 0,
        handler: createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier() }),
        apiKeys: [KEY_A],
      }),
    ).rejects.toThrow(/handler cannot be combined/);
    const first = await createServer({ port: 0, apiKeys: [KEY_A], verifier: fakeVerifier(), logger: quiet });
    servers.push(first);
    const port = Number(new URL(first.url).port);
    await expect(createServer({ port, apiKeys: [KEY_A], verifier: fakeVerifier() })).rejects.toThrow(
      /EADDRINUSE/,
    );
  });
});

async function startListener(
  listener: ReturnType<typeof toNodeListener>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const { createServer: createHttpServer } = await import('node:http');
  const server = createHttpServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
