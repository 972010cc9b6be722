import { afterEach, describe, expect, it } from 'vitest';
import { memoryUsageStore } from '../../src/bulk/usage-memory.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import type { Principal } from '../../src/http/principal.js';
import { waitFor } from '../support/wait-for.js';
import { fakeVerifier } from './support.js';

/** Keys of the tests: `plain` (no own limits), `quota5` (5 addresses a day), `slow` (1 request a second). */
const PRINCIPALS: Record<string, Principal> = {
  plain: { tenant: 'tenant-plain', keyId: 'k-plain' },
  quota5: { tenant: 'tenant-q', keyId: 'k-q5', addressesPerDay: 5 },
  slow: { tenant: 'tenant-slow', keyId: 'k-slow', requestsPerSecond: 1 },
  zero: { tenant: 'tenant-zero', keyId: 'k-zero', addressesPerDay: 0 },
  nan: { tenant: 'tenant-nan', keyId: 'k-nan', addressesPerDay: Number.NaN, requestsPerSecond: -5 },
  fraction: { tenant: 'tenant-fraction', keyId: 'k-fraction', addressesPerDay: 1.9 },
  text: { tenant: 'tenant-text', keyId: 'k-text', addressesPerDay: '10' as unknown as number },
};

function authenticate(request: Request): Principal | null {
  const key = request.headers.get('authorization')?.replace(/^Bearer /, '') ?? '';
  return PRINCIPALS[key] ?? null;
}

let time = Date.UTC(2026, 10, 27, 12);
const handlers: Handler[] = [];
afterEach(async () => {
  for (const handler of handlers.splice(0)) await handler.close();
});

function handler(options: Parameters<typeof createHandler>[0] = {}): Handler {
  const made = createHandler({
    authenticate,
    verifier: fakeVerifier(),
    console: false,
    clock: () => time,
    ...options,
  });
  handlers.push(made);
  return made;
}

function call(h: Handler, key: string, path: string, init: RequestInit = {}): Promise<Response> {
  return h(
    new Request(`http://localhost${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, ...(init.headers as Record<string, string>) },
    }),
  );
}

function createBulk(h: Handler, key: string, emails: string[]): Promise<Response> {
  return call(h, key, '/v1/bulk', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ emails }),
  });
}

describe('GET /v1/usage', () => {
  it('counts a single verification and the addresses of a small bulk job, by status and day', async () => {
    time = Date.UTC(2026, 10, 27, 12);
    const h = handler();
    expect((await call(h, 'plain', '/v1/verify?email=a@example.com')).status).toBe(200);
    expect((await call(h, 'plain', '/v1/verify?email=bad@example.com')).status).toBe(200);
    const created = await createBulk(h, 'plain', ['x@example.com', 'y@example.com', 'bad@example.com']);
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitFor(async () => {
      const job = (await (await call(h, 'plain', `/v1/bulk/${id}`)).json()) as { status: string };
      return job.status === 'complete';
    });
    const response = await call(h, 'plain', '/v1/usage');
    expect(response.status).toBe(200);
    const usage = (await response.json()) as Record<string, unknown>;
    const zero = { valid: 0, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 };
    expect(usage).toEqual({
      from: '2026-10-29',
      to: '2026-11-27',
      days: [
        {
          date: '2026-11-27',
          single: { ...zero, valid: 1, invalid: 1 },
          bulk: { ...zero, valid: 2, invalid: 1 },
          total: 5,
        },
      ],
      totals: {
        single: { ...zero, valid: 1, invalid: 1 },
        bulk: { ...zero, valid: 2, invalid: 1 },
        total: 5,
      },
      quota: null,
    });
    // Another tenant sees none of it.
    const other = (await (await call(h, 'quota5', '/v1/usage')).json()) as {
      days: unknown[];
      quota: unknown;
    };
    expect(other.days).toEqual([]);
    expect(other.quota).toEqual({ day: '2026-11-27', limit: 5, used: 0, remaining: 5 });
  });

  it('splits usage at midnight UTC (injected clock) and reads a range', async () => {
    time = Date.UTC(2026, 0, 1, 23, 59, 59);
    const h = handler();
    await call(h, 'plain', '/v1/verify?email=a@example.com');
    time += 2000;
    await call(h, 'plain', '/v1/verify?email=b@example.com');
    await call(h, 'plain', '/v1/verify?email=bad@example.com');
    const usage = (await (await call(h, 'plain', '/v1/usage?from=2025-12-31&to=2026-01-02')).json()) as {
      days: { date: string; total: number }[];
      totals: { total: number };
    };
    expect(usage.days.map((day) => [day.date, day.total])).toEqual([
      ['2026-01-01', 1],
      ['2026-01-02', 2],
    ]);
    expect(usage.totals.total).toBe(3);
    const first = (await (await call(h, 'plain', '/v1/usage?from=2026-01-01&to=2026-01-01')).json()) as {
      totals: { total: number };
    };
    expect(first.totals.total).toBe(1);
  });

  it.each([
    ['from=2026-02-30', /from must be a date as YYYY-MM-DD/],
    ['to=yesterday', /to must be a date as YYYY-MM-DD.*"yesterday"/],
    ['from=2026-01-05&to=2026-01-01', /from \(2026-01-05\) must not be after to \(2026-01-01\)/],
    ['from=2024-01-01&to=2026-01-01', /covers 732 days; ask for at most 366/],
    ['from=2026-01-01&from=2026-01-02', /from must be given at most once/],
    ['since=2026-01-01', /unknown query parameter "since" \(this route takes only from, to\)/],
    [`from=${encodeURIComponent('２０２６-01-01')}`, /from must be a date/],
    [`to=${encodeURIComponent('2026-01-01\u202e')}`, /to must be a date/],
    [`from=${'9'.repeat(100_000)}`, /from must be a date as YYYY-MM-DD \(a real UTC day\), got "9{32}"$/],
    [`${'x'.repeat(5000)}=1`, /unknown query parameter "x{64}"/],
  ])('answers 400 to ?%s with a clear message', async (query, message) => {
    const h = handler();
    const response = await call(h, 'plain', `/v1/usage?${query}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toMatch(message);
  });

  it('answers 401 without a key', async () => {
    const h = handler();
    expect((await h(new Request('http://localhost/v1/usage'))).status).toBe(401);
  });
});

describe('a key with a daily address quota', () => {
  it('spends it on single verifications and refuses the sixth with 429, Retry-After and RateLimit headers', async () => {
    time = Date.UTC(2026, 10, 27, 23, 0, 0);
    const h = handler();
    for (let i = 0; i < 5; i++)
      expect((await call(h, 'quota5', `/v1/verify?email=a${i}@x.test`)).status).toBe(200);
    const refused = await call(h, 'quota5', '/v1/verify?email=a@x.test');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3600');
    expect(refused.headers.get('ratelimit-limit')).toBe('5');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('3600');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('limit_exceeded');
    expect(body.error.message).toMatch(/5 addresses per UTC day, 0 remain today and this request needs 1/);
    // The next UTC day has a fresh quota.
    time += 3_600_000;
    expect((await call(h, 'quota5', '/v1/verify?email=a@x.test')).status).toBe(200);
  });

  it('refuses a bulk create that would pass it whole, before a job exists, saying how many remain', async () => {
    time = Date.UTC(2026, 10, 27, 12);
    const h = handler();
    expect((await call(h, 'quota5', '/v1/verify?email=a@x.test')).status).toBe(200);
    const refused = await createBulk(h, 'quota5', [
      'a@x.test',
      'b@x.test',
      'c@x.test',
      'd@x.test',
      'e@x.test',
    ]);
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(
      /4 remain today and this request needs 5/,
    );
    const list = (await (await call(h, 'quota5', '/v1/bulk')).json()) as { total: number };
    expect(list.total).toBe(0);
    // What fits is accepted; an add past the rest is refused before any address is added.
    const created = await call(h, 'quota5', '/v1/bulk', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['a@x.test', 'b@x.test'], auto_start: false }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const add = await call(h, 'quota5', `/v1/bulk/${id}/emails`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'c@x.test\nd@x.test\ne@x.test\n',
    });
    expect(add.status).toBe(429);
    expect(((await add.json()) as { error: { message: string } }).error.message).toMatch(/2 remain today/);
    const job = (await (await call(h, 'quota5', `/v1/bulk/${id}`)).json()) as { total: number };
    expect(job.total).toBe(2);
    const usage = (await (await call(h, 'quota5', '/v1/usage')).json()) as { quota: unknown };
    expect(usage.quota).toEqual({ day: '2026-11-27', limit: 5, used: 3, remaining: 2 });
  });

  it('gives the units back when the request fails after the reservation', async () => {
    time = Date.UTC(2026, 10, 27, 12);
    const h = handler();
    const add = await call(h, 'quota5', '/v1/bulk/no-such-job/emails', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ emails: ['a@x.test', 'b@x.test', 'c@x.test'] }),
    });
    expect(add.status).toBe(404);
    const usage = (await (await call(h, 'quota5', '/v1/usage')).json()) as { quota: { used: number } };
    expect(usage.quota.used).toBe(0);
  });

  it('fails closed on a quota that is not a number of addresses, and counts whole addresses of a fraction', async () => {
    const h = handler();
    for (const key of ['nan', 'text']) {
      expect((await call(h, key, '/v1/verify?email=a@x.test')).status).toBe(429);
    }
    expect((await call(h, 'fraction', '/v1/verify?email=a@x.test')).status).toBe(200);
    expect((await call(h, 'fraction', '/v1/verify?email=a@x.test')).status).toBe(429);
    // A rate that is not a positive number leaves the handler's limit in force.
    const answer = await call(h, 'nan', '/v1/usage');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('ratelimit-limit')).toBe('100');
  });

  it('with a quota of 0 refuses every address', async () => {
    const h = handler();
    const refused = await call(h, 'zero', '/v1/verify?email=a@x.test');
    expect(refused.status).toBe(429);
    expect((await call(h, 'zero', '/v1/usage')).status).toBe(200);
  });
});

describe("a key's own request rate", () => {
  it('replaces the handler limit: 429 with Retry-After and the RateLimit headers past its bucket', async () => {
    time = Date.UTC(2026, 10, 27, 12);
    const h = handler({ limits: { requestsPerSecond: 1000, burst: 1000 } });
    const first = await call(h, 'slow', '/v1/usage');
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-limit')).toBe('2');
    expect(first.headers.get('ratelimit-remaining')).toBe('1');
    expect((await call(h, 'slow', '/v1/usage')).status).toBe(200);
    const refused = await call(h, 'slow', '/v1/verify?email=a@x.test');
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(refused.headers.get('ratelimit-reset')).toBe('2');
    time += 1000;
    expect((await call(h, 'slow', '/v1/usage')).status).toBe(200);
    // A key without its own rate keeps the handler's (large) bucket.
    for (let i = 0; i < 5; i++) expect((await call(h, 'plain', '/v1/usage')).status).toBe(200);
  });

  it('answers 503 when the shared counters do not answer', async () => {
    const limits = {
      ...memoryUsageStore(),
      takeToken: async () => {
        throw new Error('redis down');
      },
    };
    const h = handler({ usage: { limits } });
    const response = await call(h, 'slow', '/v1/usage');
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /rate and quota counters do not answer/,
    );
  });
});

describe('the usage option', () => {
  it('names a bad field', () => {
    expect(() => createHandler({ authenticate, usage: { nope: 1 } as never })).toThrow(
      /usage\.nope is not a known option/,
    );
    expect(() => createHandler({ authenticate, usage: { store: {} as never } })).toThrow(
      /usage\.store must have/,
    );
    expect(() => createHandler({ authenticate, usage: { limits: {} as never } })).toThrow(
      /usage\.limits must have/,
    );
    expect(() => createHandler({ authenticate, usage: { flushMs: -1 } })).toThrow(
      /flushMs must be an integer/,
    );
  });
});
