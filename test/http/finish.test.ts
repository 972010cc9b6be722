import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import type { VerificationResult } from '../../src/result.js';
import { FakeClock, manualVerifier, resultFor, until } from '../bulk/support.js';
import { auth, jsonAuth, KEY_A, KEY_B } from './support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A handler whose jobs greylist `grey*` addresses every time and retry them only after an hour. */
function setup() {
  const clock = new FakeClock(Date.UTC(2026, 10, 27, 9, 30, 0));
  const calls: string[] = [];
  const verifier = {
    async verify(email: string): Promise<VerificationResult> {
      calls.push(email);
      return resultFor(email);
    },
  };
  const jobs = new BulkJobManager({ verifier, clock, greylistRetry: { delaysMs: [3_600_000] } });
  const handler = createHandler({
    verifier,
    jobs,
    apiKeys: [KEY_A, KEY_B],
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
  });
  cleanups.push(async () => {
    await handler.close();
    await jobs.close();
  });
  const call = (path: string, init?: RequestInit) => handler(new Request(`http://localhost${path}`, init));
  const finish = (id: string, key = KEY_A) =>
    call(`/v1/bulk/${id}/finish`, { method: 'POST', headers: auth(key) });
  async function create(body: unknown, key = KEY_A): Promise<Job> {
    const response = await call('/v1/bulk', {
      method: 'POST',
      headers: jsonAuth(key),
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as Job;
  }
  async function job(id: string, key = KEY_A): Promise<Job> {
    return (await (await call(`/v1/bulk/${id}`, { headers: auth(key) })).json()) as Job;
  }
  return { clock, calls, jobs, call, finish, create, job };
}

async function errorOf(response: Response): Promise<{ code: string; message: string }> {
  return ((await response.json()) as { error: { code: string; message: string } }).error;
}

/** Reads an SSE response until `until` appears in it (or the stream ends); returns the text read. */
async function readSse(response: Response, until: string): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(until)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe('POST /v1/bulk/{id}/finish', () => {
  it('completes a job waiting for a retry at once; results say no retry was made; SSE sees complete', async () => {
    const { calls, call, finish, create, job } = setup();
    const created = await create({ emails: ['grey@x.example', 'ok@y.example'] });
    // Waiting for its retry only: the other address is final (not still in flight).
    await until(async () => {
      const { retries, completed } = await job(created.id);
      return retries.waiting === 1 && completed === 1;
    });
    expect(await job(created.id)).toMatchObject({
      status: 'processing',
      completed: 1,
      retries: { waiting: 1, next_retry_at: '2026-11-27T10:30:00.000Z' },
    });
    const events = await call(`/v1/bulk/${created.id}/events`, { headers: auth() });
    expect(events.status).toBe(200);
    const sse = readSse(events, 'event: complete');

    const response = await finish(created.id);
    expect(response.status).toBe(200);
    const finished = (await response.json()) as Job;
    expect(finished).toMatchObject({
      id: created.id,
      status: 'complete',
      completed: 2,
      counts: { valid: 1, unknown: 1 },
      retries: { waiting: 0, next_retry_at: null, delays_ms: [] },
    });
    expect(await sse).toContain('event: complete');

    const results = (await (await call(`/v1/bulk/${created.id}/results`, { headers: auth() })).json()) as {
      results: VerificationResult[];
    };
    expect(results.results[0]).toMatchObject({
      status: 'unknown',
      sub_status: 'greylisted',
      reason: 'greylisted; not retried: the job was finished before the retry due at 10:30 UTC',
    });
    expect(calls).toEqual(['grey@x.example', 'ok@y.example']);

    // Idempotent: finishing the complete job again answers it as it is.
    const again = await finish(created.id);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(finished);
  });

  it('answers 409 conflict with the job for a job not started', async () => {
    const { finish, create, job } = setup();
    const queued = await create({ emails: ['grey@x.example'], auto_start: false });
    const response = await finish(queued.id);
    expect(response.status).toBe(409);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error).toEqual({
      code: 'conflict',
      message: 'the job is queued: only a processing job can be finished',
    });
    expect((await job(queued.id)).status).toBe('queued');
  });

  it('answers 404 for unknown, malformed and unicode ids, and for another tenant’s job', async () => {
    const { finish, create, job } = setup();
    const created = await create({ emails: ['grey@x.example'] });
    for (const id of ['nope', '%E7%94%A8', '%F0%9F%98%80', 'j%C3%B6b', 'a'.repeat(500), '%00', '%2F', '..']) {
      const response = await finish(id);
      expect(response.status, id).toBe(404);
      expect((await errorOf(response)).code).toBe('not_found');
    }
    const other = await finish(created.id, KEY_B);
    expect(other.status).toBe(404);
    expect((await errorOf(other)).message).toBe('no such job');
    expect((await job(created.id)).status).toBe('processing');
  });

  it('answers 405 for another method, 401 without a key, 400 for a query parameter', async () => {
    const { call, create } = setup();
    const created = await create({ emails: ['grey@x.example'] });
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      const response = await call(`/v1/bulk/${created.id}/finish`, { method, headers: auth() });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toContain('POST');
    }
    const anonymous = await call(`/v1/bulk/${created.id}/finish`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
    const query = await call(`/v1/bulk/${created.id}/finish?force=1`, { method: 'POST', headers: auth() });
    expect(query.status).toBe(400);
    expect((await errorOf(query)).code).toBe('invalid_request');
  });

  it('lets verifications in flight finish: a job with work left stays processing, then completes', async () => {
    const verifier = manualVerifier();
    const jobs = new BulkJobManager({ verifier, greylistRetry: { delaysMs: [3_600_000] } });
    const handler = createHandler({ verifier, jobs, apiKeys: [KEY_A] });
    cleanups.push(async () => {
      await verifier.releaseAll();
      await handler.close();
      await jobs.close();
    });
    const created = (await (
      await handler(
        new Request('http://localhost/v1/bulk', {
          method: 'POST',
          headers: jsonAuth(),
          body: JSON.stringify({ emails: ['grey@x.example', 'slow@y.example'] }),
        }),
      )
    ).json()) as Job;
    const get = async () =>
      (await (
        await handler(new Request(`http://localhost/v1/bulk/${created.id}`, { headers: auth() }))
      ).json()) as Job;
    await until(() => verifier.held.length === 2);
    verifier.held.shift()!.resolve();
    await until(async () => (await get()).retries.waiting === 1);
    const response = await handler(
      new Request(`http://localhost/v1/bulk/${created.id}/finish`, { method: 'POST', headers: auth() }),
    );
    expect(await response.json()).toMatchObject({
      status: 'processing',
      completed: 1,
      retries: { waiting: 0 },
    });
    verifier.held.shift()!.resolve();
    await until(async () => (await get()).status === 'complete');
  });
});
