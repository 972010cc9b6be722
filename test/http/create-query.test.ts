/**
 * The query of the routes that create or change: an unknown parameter is a 400 (as an unknown JSON field is), and
 * a list upload sets the greylisting schedule in the query as a JSON body does in a field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import { auth, fakeVerifier, jsonAuth } from './support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup() {
  const verifier = fakeVerifier();
  const jobs = new BulkJobManager({ verifier });
  const handler = createHandler({
    verifier,
    jobs,
    apiKeys: ['test-key-a'],
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
  });
  cleanups.push(async () => {
    await handler.close();
    await jobs.close();
  });
  const call = (path: string, init?: RequestInit) => handler(new Request(`http://localhost${path}`, init));
  const list = (path: string, body: string, type = 'text/plain') =>
    call(path, { method: 'POST', headers: { ...auth(), 'content-type': type }, body });
  const json = (path: string, body: unknown) =>
    call(path, { method: 'POST', headers: jsonAuth(), body: JSON.stringify(body) });
  const total = async () =>
    ((await (await call('/v1/bulk', { headers: auth() })).json()) as { total: number }).total;
  return { call, list, json, total, verifier };
}

async function refusal(response: Response): Promise<string> {
  expect(response.status).toBe(400);
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe('invalid_request');
  return body.error.message;
}

describe('unknown query parameters on the routes that create or change', () => {
  it('refuses a misspelt parameter of a list upload, naming it, and makes no job', async () => {
    const { list, total } = setup();
    expect(await refusal(await list('/v1/bulk?auto_strat=false', 'a@x.example\n'))).toBe(
      'unknown query parameter "auto_strat" (this route takes only name, auto_start, column, fresh, greylist_retry_delays_ms)',
    );
    expect(await total()).toBe(0);
  });

  it('refuses one on a JSON create, an add and a start', async () => {
    const { json, call, list, total } = setup();
    expect(await refusal(await json('/v1/bulk?priority=high', { emails: ['a@x.example'] }))).toMatch(
      /^unknown query parameter "priority"/,
    );
    expect(await total()).toBe(0);
    const job = (await (await json('/v1/bulk', { auto_start: false })).json()) as Job;
    expect(await refusal(await list(`/v1/bulk/${job.id}/emails?colum=email`, 'a@x.example\n'))).toBe(
      'unknown query parameter "colum" (this route takes only column)',
    );
    const start = await call(`/v1/bulk/${job.id}/start?now=1`, { method: 'POST', headers: auth() });
    expect(await refusal(start)).toBe('unknown query parameter "now" (this route takes no query parameters)');
    expect(((await (await call(`/v1/bulk/${job.id}`, { headers: auth() })).json()) as Job).total).toBe(0);
  });

  it('refuses a list-only parameter with a JSON body instead of ignoring it', async () => {
    const { json, total } = setup();
    expect(await refusal(await json('/v1/bulk?auto_start=false', { emails: ['a@x.example'] }))).toBe(
      'the query parameter "auto_start" applies to list bodies (text/plain, text/csv); with JSON, send the field in the body',
    );
    expect(await total()).toBe(0);
  });

  it('leaves reads alone: a cache-busting parameter on a GET is still answered', async () => {
    const { call } = setup();
    expect((await call('/v1/bulk?_=1732700000', { headers: auth() })).status).toBe(200);
  });
});

describe('the greylisting schedule of a list upload', () => {
  it.each([
    ['comma-separated', '?greylist_retry_delays_ms=1000,2000', [1000, 2000]],
    ['repeated', '?greylist_retry_delays_ms=1000&greylist_retry_delays_ms=2000', [1000, 2000]],
    ['empty: no retries', '?greylist_retry_delays_ms=', []],
    ['absent: the server default', '', [60_000, 300_000, 900_000]],
  ])('takes it from the query (%s), for text and CSV', async (_name, query, delays) => {
    const { list } = setup();
    for (const [type, body] of [
      ['text/plain', 'a@x.example\n'],
      ['text/csv', 'email\na@x.example\n'],
    ] as const) {
      const separator = query === '' ? '?' : '&';
      const response = await list(`/v1/bulk${query}${separator}auto_start=false`, body, type);
      expect(response.status, type).toBe(201);
      expect(((await response.json()) as Job).retries.delays_ms).toEqual(delays);
    }
  });

  it.each([
    ['a negative delay', '-1', /^greylist_retry_delays_ms must be integers separated by commas$/],
    ['a word', 'soon', /^greylist_retry_delays_ms must be integers/],
    ['a delay over a day', '86400001', /^greylist_retry_delays_ms entries must be integers 0-86400000$/],
    [
      'eleven delays',
      Array(11).fill('1').join(','),
      /^greylist_retry_delays_ms must be an array of at most 10/,
    ],
  ])('refuses %s and makes no job', async (_name, value, message) => {
    const { list, total } = setup();
    expect(await refusal(await list(`/v1/bulk?greylist_retry_delays_ms=${value}`, 'a@x.example\n'))).toMatch(
      message,
    );
    expect(await total()).toBe(0);
  });
});

describe('fresh on a create', () => {
  it('asks every mail server again: the JSON field and the list query parameter reach the verifier, for the tenant', async () => {
    const { json, list, call, verifier } = setup();
    const created = async (response: Response) => {
      expect(response.status).toBe(201);
      const job = (await response.json()) as Job;
      await expect
        .poll(
          async () => ((await (await call(`/v1/bulk/${job.id}`, { headers: auth() })).json()) as Job).status,
        )
        .toBe('complete');
    };
    await created(await json('/v1/bulk', { emails: ['a@x.example'], fresh: true }));
    await created(await list('/v1/bulk?fresh=true', 'b@x.example\n'));
    await created(await json('/v1/bulk', { emails: ['c@x.example'] }));
    const overrides = Object.fromEntries(verifier.calls.map((made) => [made.email, made.overrides]));
    expect(overrides['a@x.example']).toMatchObject({
      fresh: true,
      knownResultsNamespace: expect.any(String),
    });
    expect(overrides['b@x.example']).toMatchObject({ fresh: true });
    expect(overrides['c@x.example']).toEqual({ knownResultsNamespace: expect.any(String) });
  });

  it('refuses a fresh that is not a boolean, and makes no job', async () => {
    const { json, list, total } = setup();
    for (const fresh of ['maybe', 'trüe', 1, null]) {
      expect(await refusal(await json('/v1/bulk', { emails: ['a@x.example'], fresh }))).toBe(
        'fresh must be a boolean',
      );
    }
    for (const fresh of ['maybe', 'tr%C3%BCe', '', 'TRUE']) {
      expect(await refusal(await list(`/v1/bulk?fresh=${fresh}`, 'a@x.example\n'))).toBe(
        'fresh must be true or false',
      );
    }
    expect(await total()).toBe(0);
  });
});
