import { parse } from 'csv-parse/sync';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { BulkJobManagerApi, Job, JobStore } from '../../src/bulk/types.js';
import { HttpError, type HttpLogger } from '../../src/http/errors.js';
import { createHandler, type Handler, type HandlerOptions } from '../../src/http/handler.js';
import { ROUTES } from '../../src/http/routes.js';
import { CSV_COLUMNS } from '../../src/io/result-csv.js';
import type { VerificationResult } from '../../src/result.js';
import { addresses, auth, fakeVerifier, jsonAuth, KEY_A, KEY_B } from './support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  handler: Handler;
  jobs: BulkJobManagerApi;
  verifier: ReturnType<typeof fakeVerifier>;
  logged: unknown[];
  call(path: string, init?: RequestInit): Promise<Response>;
  post(path: string, body: unknown, key?: string): Promise<Response>;
  complete(id: string, key?: string): Promise<Job>;
}

function setup(options: HandlerOptions = {}, store?: JobStore): Setup {
  const verifier = fakeVerifier();
  const jobs = new BulkJobManager({ verifier, ...(store === undefined ? {} : { store }) });
  const logged: unknown[] = [];
  const logger: HttpLogger = { error: (_message, details) => logged.push(details.error) };
  const handler = createHandler({
    verifier,
    jobs,
    apiKeys: [KEY_A, KEY_B],
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
    logger,
    ...options,
  });
  cleanups.push(async () => {
    await handler.close();
    await jobs.close();
  });
  const call = (path: string, init?: RequestInit) => handler(new Request(`http://localhost${path}`, init));
  const post = (path: string, body: unknown, key = KEY_A) =>
    call(path, { method: 'POST', headers: jsonAuth(key), body: JSON.stringify(body) });
  async function complete(id: string, key = KEY_A): Promise<Job> {
    for (let i = 0; i < 1000; i++) {
      const job = (await (await call(`/v1/bulk/${id}`, { headers: auth(key) })).json()) as Job;
      if (job.status === 'complete' || job.status === 'failed') return job;
      await new Promise((resolve) => setImmediate(resolve));
    }
    throw new Error(`job ${id} did not finish`);
  }
  return { handler, jobs, verifier, logged, call, post, complete };
}

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message']);
  return body.error;
}

describe('health and request ids', () => {
  it('answers /healthz without a key, with a request id', async () => {
    const { call } = setup();
    const response = await call('/healthz');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', store: 'memory' });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('answers HEAD like GET, without a body', async () => {
    const { call } = setup();
    const response = await call('/healthz', { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.text()).toBe('');
  });

  it('reuses a safe incoming X-Request-Id and replaces an unsafe one', async () => {
    const { call } = setup({ requestId: () => 'generated-1' });
    const id = async (value: string) =>
      (await call('/healthz', { headers: { 'x-request-id': value } })).headers.get('x-request-id');
    expect(await id('proxy-abc:123.x_y')).toBe('proxy-abc:123.x_y');
    expect(await id('has space')).toBe('generated-1');
    expect(await id('x'.repeat(129))).toBe('generated-1');
    expect(await id('<script>')).toBe('generated-1');
  });

  it('puts a request id on every error too', async () => {
    const { call } = setup({ requestId: () => 'rid-7' });
    for (const response of [
      await call('/nowhere'),
      await call('/v1/verify'),
      await call('/v1/verify', { headers: auth() }),
      await call('/v1/verify', { method: 'POST', headers: auth() }),
    ]) {
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('x-request-id')).toBe('rid-7');
    }
  });
});

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate for a missing or wrong key', async () => {
    const { call } = setup();
    for (const headers of [{}, auth('wrong-key'), { authorization: `Basic ${btoa('x:y')}` }]) {
      const response = await call('/v1/verify?email=a@b.example', { headers });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect((await errorOf(response)).code).toBe('unauthorized');
    }
  });

  it('asks for a key before saying whether a /v1 path exists', async () => {
    const { call } = setup();
    expect((await call('/v1/nothing-here')).status).toBe(401);
    expect((await call('/v1/nothing-here', { headers: auth() })).status).toBe(404);
    expect((await call('/elsewhere')).status).toBe(404);
  });

  it('protects the OpenAPI document and serves it to a key holder', async () => {
    const { call } = setup();
    expect((await call('/v1/openapi.json')).status).toBe(401);
    const response = await call('/v1/openapi.json', { headers: auth() });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ openapi: '3.1.0' });
  });

  it('reads keys from MAILVET_API_KEYS when none are given', async () => {
    const saved = process.env.MAILVET_API_KEYS;
    process.env.MAILVET_API_KEYS = 'env-key-1, env-key-2';
    try {
      const verifier = fakeVerifier();
      const handler = createHandler({ verifier, jobs: new BulkJobManager({ verifier }) });
      cleanups.push(() => handler.close());
      const call = (key: string) =>
        handler(new Request('http://localhost/v1/verify?email=a@b.example', { headers: auth(key) }));
      expect((await call('env-key-2')).status).toBe(200);
      expect((await call(KEY_A)).status).toBe(401);
      process.env.MAILVET_API_KEYS = ' , ';
      expect(() => createHandler({ verifier })).toThrow(/apiKeys must hold at least one key/);
    } finally {
      if (saved === undefined) delete process.env.MAILVET_API_KEYS;
      else process.env.MAILVET_API_KEYS = saved;
    }
  });

  it('refuses bad options at construction', () => {
    const verifier = fakeVerifier();
    expect(() => createHandler({ verifier, apiKeys: ['a'], authenticate: () => 't' })).toThrow(
      /apiKeys cannot be combined with authenticate/,
    );
    expect(() => createHandler({ verifier, apiKeys: ['bad key'] })).toThrow(/apiKeys\[0\]/);
    expect(() => createHandler({ verifier, apiKeys: ['a'], limits: { burst: 0 } })).toThrow(/limits.burst/);
    expect(() => createHandler({ verifier, apiKeys: ['a'], limits: { rps: 1 } as never })).toThrow(
      /limits.rps is not a known option/,
    );
    expect(() => createHandler({ verifier, apiKeys: ['a'], limits: { requestsPerSecond: -1 } })).toThrow(
      /requestsPerSecond/,
    );
    expect(() => createHandler({ verifier, apiKeys: ['a'], keys: [] } as never)).toThrow(
      /keys is not a known option/,
    );
  });

  it('lets a host plug its own authentication', async () => {
    const { call } = setup({
      apiKeys: undefined as never,
      authenticate: (request) => {
        const user = request.headers.get('x-user');
        if (user === 'banned') throw new HttpError('unauthorized', 'this account is suspended');
        if (user === 'crash') throw new Error('session store down at 10.1.2.3');
        return user;
      },
    });
    expect((await call('/v1/verify?email=a@b.example', { headers: { 'x-user': 'ann' } })).status).toBe(200);
    expect((await call('/v1/verify?email=a@b.example')).status).toBe(401);
    const banned = await call('/v1/verify?email=a@b.example', { headers: { 'x-user': 'banned' } });
    expect(await errorOf(banned)).toEqual({ code: 'unauthorized', message: 'this account is suspended' });
    const crash = await call('/v1/verify?email=a@b.example', { headers: { 'x-user': 'crash' } });
    expect(crash.status).toBe(500);
    expect(await errorOf(crash)).toEqual({ code: 'internal_error', message: 'internal error' });
  });
});

describe('GET /v1/verify', () => {
  it('returns the verification result and passes the timeout in milliseconds', async () => {
    const { call, verifier } = setup();
    const response = await call('/v1/verify?email=ann@example.com', { headers: auth() });
    expect(response.status).toBe(200);
    expect(response.headers.get('ratelimit-limit')).toBeNull(); // limiting is off in this setup
    expect(await response.json()).toMatchObject({ email: 'ann@example.com', status: 'valid', score: 100 });
    expect(verifier.calls[0]?.overrides).toEqual({
      timeoutMs: 10_000,
      connectTimeoutMs: 10_000,
      replyTimeoutMs: 10_000,
      knownResultsNamespace: expect.any(String), // the tenant: see 'keeps each tenant's known results apart'
    });
    await call('/v1/verify?email=ann@example.com&timeout=2.5', { headers: auth() });
    expect(verifier.calls[1]?.overrides?.timeoutMs).toBe(2500);
    await call('/v1/verify?email=ann@example.com&timeout=60', { headers: auth() });
    expect(verifier.calls[2]?.overrides?.timeoutMs).toBe(60_000);
  });

  it('gives every timeout its own budget, past the number of budgets the route keeps, and again after', async () => {
    const { call, verifier } = setup();
    const seconds = Array.from({ length: 60 }, (_, i) => i + 1).concat([1.5, 2.25, 59.999, 1, 60, 10]);
    for (const timeout of seconds) {
      const response = await call(`/v1/verify?email=ann@example.com&timeout=${timeout}`, { headers: auth() });
      expect(response.status).toBe(200);
    }
    expect(verifier.calls.map((made) => made.overrides)).toEqual(
      seconds.map((timeout) => {
        const ms = Math.round(timeout * 1000);
        return {
          timeoutMs: ms,
          connectTimeoutMs: ms,
          replyTimeoutMs: ms,
          knownResultsNamespace: verifier.calls[0]?.overrides?.knownResultsNamespace,
        };
      }),
    );
    expect(verifier.calls.every((made) => Object.isFrozen(made.overrides))).toBe(true);
  });

  it("keeps each tenant's known results apart (the tenant is their namespace) and passes fresh=true", async () => {
    const { call, verifier } = setup();
    await call('/v1/verify?email=ann@example.com', { headers: auth(KEY_A) });
    await call('/v1/verify?email=ann@example.com', { headers: auth(KEY_B) });
    await call('/v1/verify?email=ann@example.com&fresh=true', { headers: auth(KEY_A) });
    await call('/v1/verify?email=ann@example.com&fresh=false', { headers: auth(KEY_A) });
    const [a, b, fresh, notFresh] = verifier.calls.map((made) => made.overrides);
    expect(typeof a?.knownResultsNamespace).toBe('string');
    expect(b?.knownResultsNamespace).not.toBe(a?.knownResultsNamespace);
    expect(fresh).toMatchObject({ fresh: true, knownResultsNamespace: a?.knownResultsNamespace });
    expect(notFresh).toBe(a); // the same frozen object: split once by the verifier
    expect('fresh' in (a ?? {})).toBe(false);
  });

  it('passes unicode addresses through', async () => {
    const { call } = setup();
    const email = '用户@例子.广告';
    const response = await call(`/v1/verify?email=${encodeURIComponent(email)}`, { headers: auth() });
    expect(await response.json()).toMatchObject({ email, domain: '例子.广告' });
  });

  it.each([
    ['', 'email is required'],
    ['?email=', 'email is required'],
    ['?email=%20%20', 'email is required'],
    ['?email=a@b.example&email=c@d.example', 'email must be given at most once'],
    ['?email=a@b.example&timeout=0', 'timeout must be a number from 1 to 60'],
    ['?email=a@b.example&timeout=61', 'timeout must be a number from 1 to 60'],
    ['?email=a@b.example&timeout=ten', 'timeout must be a number from 1 to 60'],
    ['?email=a@b.example&timeout=', 'timeout must be a number from 1 to 60'],
    ['?email=a@b.example&fresh=maybe', 'fresh must be true or false'],
    ['?email=a@b.example&fresh=TRUE', 'fresh must be true or false'],
    ['?email=a@b.example&fresh=', 'fresh must be true or false'],
    ['?email=a@b.example&fresh=tr%C3%BCe', 'fresh must be true or false'],
    ['?email=a@b.example&fresh=true&fresh=true', 'fresh must be given at most once'],
  ])('answers 400 for %j', async (query, message) => {
    const { call, verifier } = setup();
    const response = await call(`/v1/verify${query}`, { headers: auth() });
    expect(response.status).toBe(400);
    expect(await errorOf(response)).toEqual({ code: 'invalid_request', message });
    expect(verifier.calls).toHaveLength(0);
  });

  it('hides an engine failure behind internal_error, logs it, and keeps serving', async () => {
    const { call, logged } = setup({ requestId: () => 'rid-boom' });
    const response = await call('/v1/verify?email=boom@example.com', { headers: auth() });
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    expect(response.headers.get('x-request-id')).toBe('rid-boom');
    expect(String(logged[0])).toContain('hunter2');
    expect((await call('/v1/verify?email=ok@example.com', { headers: auth() })).status).toBe(200);
  });

  it('answers 405 with Allow for other methods', async () => {
    const { call } = setup();
    const response = await call('/v1/verify', { method: 'DELETE', headers: auth() });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
    expect((await errorOf(response)).code).toBe('method_not_allowed');
    const bulk = await call('/v1/bulk/abc', { method: 'PUT', headers: auth() });
    expect(bulk.headers.get('allow')).toBe('GET, DELETE, HEAD');
  });
});

describe('rate limiting', () => {
  it('refuses a tenant past its burst with 429 and Retry-After, until tokens refill', async () => {
    let now = 0;
    const { call } = setup({ limits: { requestsPerSecond: 2, burst: 2 }, clock: () => now });
    const verify = (key = KEY_A) => call('/v1/verify?email=a@b.example', { headers: auth(key) });
    const first = await verify();
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await verify()).status).toBe(200);
    const refused = await verify();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect((await errorOf(refused)).code).toBe('rate_limited');
    expect((await verify(KEY_B)).status).toBe(200);
    expect((await call('/healthz')).status).toBe(200);
    now += 500;
    expect((await verify()).status).toBe(200);
    expect((await verify()).status).toBe(429);
  });

  it('limits by default (documented 50/s, bursts of 100)', async () => {
    const { call } = setup({ limits: {} });
    const response = await call('/v1/verify?email=a@b.example', { headers: auth() });
    expect(response.headers.get('ratelimit-limit')).toBe('100');
  });
});

describe('POST /v1/bulk', () => {
  it('creates a job: 201, Location, status queued', async () => {
    const { post } = setup();
    const response = await post('/v1/bulk', {
      name: 'Liste März',
      emails: ['a@x.example'],
      auto_start: false,
    });
    expect(response.status).toBe(201);
    const job = (await response.json()) as Job;
    expect(job).toMatchObject({ name: 'Liste März', status: 'queued', total: 1, completed: 0, progress: 0 });
    expect(response.headers.get('location')).toBe(`bulk/${job.id}`);
    expect(new URL(response.headers.get('location') as string, 'http://h/v1/bulk').pathname).toBe(
      `/v1/bulk/${job.id}`,
    );
  });

  it('takes a greylisting schedule per job (greylist_retry_delays_ms) and shows it in the job', async () => {
    const { post } = setup();
    const own = await post('/v1/bulk', { auto_start: false, greylist_retry_delays_ms: [1000, 2000] });
    expect(own.status).toBe(201);
    expect(((await own.json()) as Job).retries).toEqual({
      waiting: 0,
      next_retry_at: null,
      delays_ms: [1000, 2000],
    });
    const fallback = (await (await post('/v1/bulk', { auto_start: false })).json()) as Job;
    expect(fallback.retries.delays_ms).toEqual([60_000, 300_000, 900_000]);
    for (const bad of [[-1], [1.5], 'soon', new Array(11).fill(0), [86_400_001], [null]]) {
      const refused = await post('/v1/bulk', { greylist_retry_delays_ms: bad });
      expect(refused.status, JSON.stringify(bad)).toBe(400);
      expect((await errorOf(refused)).message).toMatch(/^greylist_retry_delays_ms /);
    }
  });

  it('accepts "name": null as no name', async () => {
    const { call } = setup();
    const response = await call('/v1/bulk', {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: '{"name": null, "emails": ["a@x.example"], "auto_start": false}',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ status: 'queued', total: 1, name: '' });
  });

  it('creates an empty job from a request without a body', async () => {
    const { call } = setup();
    const response = await call('/v1/bulk', { method: 'POST', headers: auth() });
    expect(response.status).toBe(201);
    // The creation response is queued (as the specification says); started and empty, the job is complete
    // right after, so that polling it ends; an add reopens it.
    const created = (await response.json()) as Job;
    expect(created).toMatchObject({ status: 'queued', total: 0, name: '' }); // the spec types name as a string
    const polled = await call(`/v1/bulk/${created.id}`, { headers: auth() });
    expect(await polled.json()).toMatchObject({ status: 'complete', total: 0 });
  });

  it.each([
    ['malformed JSON', '{"emails": [', 400, 'the request body is not valid JSON'],
    ['an array', '["a@x.example"]', 400, 'the request body must be a JSON object'],
    ['a string', '"hello"', 400, 'the request body must be a JSON object'],
    ['null', 'null', 400, 'the request body must be a JSON object'],
    ['an unknown field', '{"autoStart": false}', 400, 'unknown field "autoStart"'],
    ['a non-string name', '{"name": 5}', 400, 'name must be a string or null'],
    ['a name that is an object', '{"name": {"first": "x"}}', 400, 'name must be a string or null'],
    ['emails as a string', '{"emails": "a@x.example"}', 400, 'emails must be an array of strings'],
    ['a non-string address', '{"emails": ["a@x.example", 7]}', 400, 'emails[1] must be a string'],
    [
      'a nested array',
      `{"emails": [${'['.repeat(5000)}${']'.repeat(5000)}]}`,
      400,
      'emails[0] must be a string',
    ],
    ['a non-boolean auto_start', '{"auto_start": "yes"}', 400, 'auto_start must be a boolean'],
  ])('answers 400 for %s', async (_, body, status, message) => {
    const { call } = setup();
    const response = await call('/v1/bulk', { method: 'POST', headers: jsonAuth(), body });
    expect(response.status).toBe(status);
    expect(await errorOf(response)).toEqual({ code: 'invalid_request', message });
  });

  it('answers 400 with the job manager’s message for a name it refuses', async () => {
    const { post } = setup();
    const response = await post('/v1/bulk', { name: 'a\u0000b' });
    expect(response.status).toBe(400);
    expect((await errorOf(response)).message).toMatch(/^name must be/);
  });

  it('answers 415 for a body that is not JSON', async () => {
    const { call } = setup();
    for (const type of [
      'text/html',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'text/csv; charset=latin1',
    ]) {
      const response = await call('/v1/bulk', {
        method: 'POST',
        headers: auth(KEY_A, { 'content-type': type }),
        body: '{}',
      });
      expect(response.status).toBe(415);
      expect((await errorOf(response)).code).toBe('unsupported_media_type');
    }
  });

  it('answers 413 for a body over the limit and for too many addresses', async () => {
    const { call, post } = setup({
      limits: { maxBodyBytes: 1000, maxEmailsPerRequest: 3, requestsPerSecond: Number.POSITIVE_INFINITY },
    });
    const big = await call('/v1/bulk', {
      method: 'POST',
      headers: jsonAuth(),
      body: JSON.stringify({ name: 'x'.repeat(2000) }),
    });
    expect(big.status).toBe(413);
    expect(await errorOf(big)).toEqual({
      code: 'payload_too_large',
      message: 'the request body exceeds 1000 bytes',
    });
    const many = await post('/v1/bulk', {
      emails: ['a@x.example', 'b@x.example', 'c@x.example', 'd@x.example'],
    });
    expect(many.status).toBe(413);
    expect((await errorOf(many)).message).toBe('at most 3 addresses per request (got 4)');
    expect((await post('/v1/bulk', { emails: ['a@x.example', 'b@x.example', 'c@x.example'] })).status).toBe(
      201,
    );
  });

  it('caps the jobs of one key, counting concurrent creations, and frees a place on delete', async () => {
    const { post, call } = setup({
      limits: { maxJobsPerKey: 2, requestsPerSecond: Number.POSITIVE_INFINITY },
    });
    const statuses = (await Promise.all([1, 2, 3, 4, 5].map(() => post('/v1/bulk', {})))).map(
      (r) => r.status,
    );
    expect(statuses.sort()).toEqual([201, 201, 429, 429, 429]);
    const refused = await post('/v1/bulk', {});
    expect(await errorOf(refused)).toEqual({
      code: 'limit_exceeded',
      message: 'at most 2 jobs per API key; delete finished jobs to make room',
    });
    expect((await post('/v1/bulk', {}, KEY_B)).status).toBe(201);
    const { jobs } = (await (await call('/v1/bulk', { headers: auth() })).json()) as { jobs: Job[] };
    expect((await call(`/v1/bulk/${jobs[0]?.id}`, { method: 'DELETE', headers: auth() })).status).toBe(204);
    expect((await post('/v1/bulk', {})).status).toBe(201);
  });
});

describe('the bulk flow', () => {
  it('create → add → start → poll → results (json pages, csv, ndjson), in input order', async () => {
    const { post, call, complete } = setup();
    const created = (await (
      await post('/v1/bulk', { emails: ['a@x.example', 'bad@x.example'], auto_start: false })
    ).json()) as Job;
    const added = await post(`/v1/bulk/${created.id}/emails`, {
      emails: ['=cmd@x.example', 'a@x.example', '用户@例子.广告'],
    });
    expect(added.status).toBe(200);
    expect(await added.json()).toMatchObject({ status: 'queued', total: 5 });
    const started = await call(`/v1/bulk/${created.id}/start`, { method: 'POST', headers: auth() });
    expect(started.status).toBe(200);
    const job = await complete(created.id);
    expect(job).toMatchObject({ status: 'complete', total: 5, completed: 5, progress: 1 });
    expect(job.counts).toMatchObject({ valid: 4, invalid: 1 });

    const page = await call(`/v1/bulk/${created.id}/results?limit=2&offset=1`, { headers: auth() });
    expect(page.headers.get('vary')).toBe('Accept');
    const body = (await page.json()) as {
      job: Job;
      results: VerificationResult[];
      next_offset: number | null;
    };
    expect(body.job.id).toBe(created.id);
    expect(body.results.map((r) => r.email)).toEqual(['bad@x.example', '=cmd@x.example']);
    expect(body.next_offset).toBe(3);
    const last = (await (
      await call(`/v1/bulk/${created.id}/results?offset=3`, { headers: auth() })
    ).json()) as typeof body;
    expect(last.results.map((r) => r.email)).toEqual(['a@x.example', '用户@例子.广告']);
    expect(last.next_offset).toBeNull();

    const csv = await call(`/v1/bulk/${created.id}/results?format=csv`, { headers: auth() });
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="mailvet-${created.id}.csv"`);
    const text = await csv.text();
    expect(text.split('\r\n')[0]).toBe(CSV_COLUMNS.join(','));
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows.map((row) => row.email)).toEqual([
      'a@x.example',
      'bad@x.example',
      "'=cmd@x.example",
      'a@x.example',
      '用户@例子.广告',
    ]);
    expect(rows[1]).toMatchObject({ status: 'invalid', sub_status: 'failed_syntax_check', normalized: '' });

    const ndjson = await call(`/v1/bulk/${created.id}/results`, {
      headers: auth(KEY_A, { accept: 'application/x-ndjson' }),
    });
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await ndjson.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((line) => (JSON.parse(line) as VerificationResult).email)).toEqual([
      'a@x.example',
      'bad@x.example',
      '=cmd@x.example',
      'a@x.example',
      '用户@例子.广告',
    ]);
    const tail = await call(`/v1/bulk/${created.id}/results?format=ndjson&offset=3&limit=1`, {
      headers: auth(),
    });
    expect((await tail.text()).trim().split('\n')).toHaveLength(1);
  });

  it('answers 409 job_not_complete with the progress before completion, unless partial=true', async () => {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const verifier = fakeVerifier(gate);
    const { post, call, complete } = setup({ verifier, jobs: new BulkJobManager({ verifier }) });
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example', 'b@x.example'] })).json()) as Job;
    const early = await call(`/v1/bulk/${job.id}/results`, { headers: auth() });
    expect(early.status).toBe(409);
    const body = (await early.json()) as { error: { code: string }; job: Job };
    expect(body.error.code).toBe('job_not_complete');
    expect(body.job).toMatchObject({ id: job.id, total: 2, completed: 0, progress: 0 });
    const partial = await call(`/v1/bulk/${job.id}/results?partial=true`, { headers: auth() });
    expect(partial.status).toBe(200);
    expect(await partial.json()).toMatchObject({ results: [] });
    const partialCsv = await call(`/v1/bulk/${job.id}/results?partial=true&format=csv`, { headers: auth() });
    expect(await partialCsv.text()).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    open();
    await complete(job.id);
    expect((await call(`/v1/bulk/${job.id}/results`, { headers: auth() })).status).toBe(200);
  });

  it('answers 409 job_failed for a failed job, and partial=true gives what it produced', async () => {
    const memory = memoryJobStore();
    const store: JobStore = {
      saveJob: (record) => memory.saveJob(record),
      putResults: () => {
        throw new Error('disk full on /var/lib/secret');
      },
      getResults: (id, offset, limit) => memory.getResults(id, offset, limit),
      deleteJob: (id) => memory.deleteJob(id),
    };
    const { post, call, complete } = setup({}, store);
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    expect((await complete(job.id)).status).toBe('failed');
    const response = await call(`/v1/bulk/${job.id}/results`, { headers: auth() });
    expect(response.status).toBe(409);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { code: 'job_failed' }, job: { status: 'failed' } });
    expect((await call(`/v1/bulk/${job.id}/results?partial=true`, { headers: auth() })).status).toBe(200);
  });

  it('reopens a complete job on an add (the spec flow, whatever the timing); refuses a failed one', async () => {
    const { post, call, complete } = setup();
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    await complete(job.id);
    const add = await post(`/v1/bulk/${job.id}/emails`, { emails: ['b@x.example'] });
    expect(add.status).toBe(200);
    expect(await add.json()).toMatchObject({ total: 2 });
    const done = await complete(job.id);
    expect(done).toMatchObject({ status: 'complete', total: 2, completed: 2 });
    const results = await call(`/v1/bulk/${job.id}/results`, { headers: auth() });
    const body = (await results.json()) as { results: VerificationResult[] };
    expect(body.results.map((result) => result.email)).toEqual(['a@x.example', 'b@x.example']);
    expect((await call(`/v1/bulk/${job.id}/start`, { method: 'POST', headers: auth() })).status).toBe(200);
  });

  it('checks the body of POST /v1/bulk/{id}/emails', async () => {
    const { post, call } = setup();
    const job = (await (await post('/v1/bulk', { auto_start: false })).json()) as Job;
    expect(await errorOf(await post(`/v1/bulk/${job.id}/emails`, {}))).toEqual({
      code: 'invalid_request',
      message: 'emails is required',
    });
    expect((await call(`/v1/bulk/${job.id}/emails`, { method: 'POST', headers: auth() })).status).toBe(400);
    expect((await post(`/v1/bulk/${job.id}/emails`, { emails: [], name: 'x' })).status).toBe(400);
  });

  it('takes 10,000 addresses in one request, and refuses 10,001 (default limit)', async () => {
    const { post, complete, call } = setup();
    const job = (await (await post('/v1/bulk', { auto_start: false })).json()) as Job;
    const chunk = addresses(10_000);
    const added = await post(`/v1/bulk/${job.id}/emails`, { emails: chunk });
    expect(await added.json()).toMatchObject({ total: 10_000 });
    expect((await post(`/v1/bulk/${job.id}/emails`, { emails: addresses(10_001) })).status).toBe(413);
    await call(`/v1/bulk/${job.id}/start`, { method: 'POST', headers: auth() });
    expect(await complete(job.id)).toMatchObject({ completed: 10_000 });
    const ndjson = await (await call(`/v1/bulk/${job.id}/results?format=ndjson`, { headers: auth() })).text();
    const emails = ndjson
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as VerificationResult).email);
    expect(emails).toEqual(chunk);
  });

  it('lists the caller’s jobs, oldest first, in pages', async () => {
    const { post, call } = setup();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(((await (await post('/v1/bulk', { name: `job ${i}` })).json()) as Job).id);
    const list = async (query: string) =>
      (await (await call(`/v1/bulk${query}`, { headers: auth() })).json()) as {
        jobs: Job[];
        total: number;
        offset: number;
        limit: number;
      };
    expect((await list('')).jobs.map((job) => job.id)).toEqual(ids);
    expect(await list('?limit=2')).toMatchObject({
      total: 3,
      offset: 0,
      limit: 2,
      jobs: [{ id: ids[0] }, { id: ids[1] }],
    });
    expect((await list('?offset=2&limit=2')).jobs.map((job) => job.id)).toEqual([ids[2]]);
    expect((await call('/v1/bulk?limit=0', { headers: auth() })).status).toBe(400);
    expect((await call('/v1/bulk?limit=1001', { headers: auth() })).status).toBe(400);
    expect((await call('/v1/bulk?offset=-1', { headers: auth() })).status).toBe(400);
  });

  it('deletes a job: 204, then 404', async () => {
    const { post, call } = setup();
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    const deleted = await call(`/v1/bulk/${job.id}`, { method: 'DELETE', headers: auth() });
    expect(deleted.status).toBe(204);
    expect(deleted.headers.get('x-request-id')).not.toBeNull();
    expect(await deleted.text()).toBe('');
    expect((await call(`/v1/bulk/${job.id}`, { headers: auth() })).status).toBe(404);
    expect((await call(`/v1/bulk/${job.id}`, { method: 'DELETE', headers: auth() })).status).toBe(404);
  });

  it('answers 404 for unknown and malformed job ids', async () => {
    const { call, post } = setup();
    for (const id of ['nope', '%E7%94%A8', 'a'.repeat(500), '%00', '%2F']) {
      const response = await call(`/v1/bulk/${id}`, { headers: auth() });
      expect(response.status, id).toBe(404);
      expect(await errorOf(response)).toEqual({ code: 'not_found', message: 'no such job' });
    }
    expect((await call('/v1/bulk/nope/results', { headers: auth() })).status).toBe(404);
    expect((await call('/v1/bulk/nope/start', { method: 'POST', headers: auth() })).status).toBe(404);
    expect((await post('/v1/bulk/nope/emails', { emails: [] })).status).toBe(404);
  });

  it('answers 400 for a bad results query', async () => {
    const { post, call, complete } = setup();
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    await complete(job.id);
    for (const query of [
      'format=xml',
      'partial=yes',
      'limit=0',
      'limit=10001',
      'offset=x',
      'format=csv&format=json',
    ]) {
      const response = await call(`/v1/bulk/${job.id}/results?${query}`, { headers: auth() });
      expect(response.status, query).toBe(400);
    }
    const csv = await call(`/v1/bulk/${job.id}/results?format=csv&limit=50000`, { headers: auth() });
    expect(csv.status).toBe(200);
  });

  it('answers HEAD on a job like GET, without a body', async () => {
    const { post, call } = setup();
    const job = (await (await post('/v1/bulk', {})).json()) as Job;
    const response = await call(`/v1/bulk/${job.id}`, { method: 'HEAD', headers: auth() });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('');
  });
});

describe('tenants', () => {
  it('hides one key’s jobs from another: 404 everywhere, absent from the list', async () => {
    const { post, call, complete } = setup();
    const job = (await (await post('/v1/bulk', { emails: ['a@x.example'] })).json()) as Job;
    await complete(job.id);
    const asB = auth(KEY_B);
    for (const [method, path] of [
      ['GET', `/v1/bulk/${job.id}`],
      ['GET', `/v1/bulk/${job.id}/results`],
      ['GET', `/v1/bulk/${job.id}/results?partial=true&format=csv`],
      ['POST', `/v1/bulk/${job.id}/start`],
      ['DELETE', `/v1/bulk/${job.id}`],
    ] as const) {
      expect((await call(path, { method, headers: asB })).status, `${method} ${path}`).toBe(404);
    }
    expect((await post(`/v1/bulk/${job.id}/emails`, { emails: ['x@y.example'] }, KEY_B)).status).toBe(404);
    expect(await (await call('/v1/bulk', { headers: asB })).json()).toMatchObject({ jobs: [], total: 0 });
    expect((await call(`/v1/bulk/${job.id}`, { headers: auth(KEY_A) })).status).toBe(200);
  });
});

describe('every route answers through the handler', () => {
  it.each(ROUTES.map((route) => [route.method, route.path, route.auth] as const))(
    '%s %s',
    async (method, path) => {
      const { call } = setup();
      const response = await call(path.replace('{id}', 'some-id'), {
        method,
        headers: jsonAuth(),
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(response.status).not.toBe(405);
      const text = await response.text();
      expect(text).not.toContain('no such route');
    },
  );
});

describe('close()', () => {
  it('answers 503 afterwards and releases the verifier and job manager it made', async () => {
    const handler = createHandler({ apiKeys: [KEY_A], verifierOptions: { dns: false, smtp: false } });
    const ok = await handler(
      new Request('http://localhost/v1/verify?email=ann@example.com', { headers: auth() }),
    );
    expect(await ok.json()).toMatchObject({
      email: 'ann@example.com',
      status: 'unknown',
      sub_status: 'smtp_not_checked',
    });
    await handler.close();
    await handler.close();
    const after = await handler(new Request('http://localhost/healthz'));
    expect(after.status).toBe(503);
    expect((await errorOf(after)).code).toBe('service_unavailable');
  });

  it('leaves a given verifier and manager to their owner', async () => {
    const { handler, jobs, post } = setup();
    await handler.close();
    expect(await jobs.create({})).toMatchObject({ status: 'queued', total: 0 });
    expect((await post('/v1/bulk', {})).status).toBe(503);
  });
});

describe('the wire types of the specification', () => {
  it('sends domain and mx_record as strings, "" when absent, and a job name as "" when none', async () => {
    const { call, post } = setup();
    const result = (await (await call('/v1/verify?email=nobody', { headers: auth() })).json()) as Record<
      string,
      unknown
    >;
    expect(result).toMatchObject({ email: 'nobody', domain: '', mx_record: '', status: 'invalid' });
    expect(result.user).toBeNull(); // mailvet's own fields keep null
    const job = (await (await post('/v1/bulk', { emails: ['nobody'] })).json()) as Job;
    expect(job.name).toBe('');
    const listed = (await (await call('/v1/bulk', { headers: auth() })).json()) as { jobs: Job[] };
    expect(listed.jobs.map((listedJob) => listedJob.name)).toEqual(['']);
  });
});
