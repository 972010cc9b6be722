import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/bulk/types.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import type { VerificationResult } from '../../src/result.js';
import type { Verifier } from '../../src/verifier.js';
import { waitFor } from '../support/wait-for.js';
import { auth, jsonAuth } from './support.js';

/** A verifier whose answers wait until the test lets them through, so "during" and "after" are exact. */
function gatedVerifier() {
  let open = false;
  const waiting: (() => void)[] = [];
  const verifier: Pick<Verifier, 'verify'> = {
    async verify(email) {
      if (!open) await new Promise<void>((resolve) => waiting.push(resolve));
      return {
        email,
        normalized: email,
        user: email.split('@')[0] ?? null,
        domain: email.split('@')[1] ?? null,
        status: 'valid',
        sub_status: null,
        score: 100,
        disposable: false,
        role: false,
        free: false,
        accept_all: false,
        did_you_mean: null,
        mx_record: null,
        smtp_provider: null,
      } satisfies VerificationResult;
    },
  };
  return {
    verifier,
    hold: () => {
      open = false;
    },
    release: () => {
      open = true;
      for (const resolve of waiting.splice(0)) resolve();
    },
    waiting: () => waiting.length,
  };
}

let server: RunningServer;
let base: string;
const gate = gatedVerifier();

beforeAll(async () => {
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: ['test-key-a'],
    verifier: gate.verifier,
    limits: { requestsPerSecond: 10_000, burst: 10_000 },
  });
  base = server.url.replace(/\/$/, '');
});
afterAll(async () => {
  gate.release();
  await server.close();
});

async function send(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? auth() : jsonAuth(),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function poll(id: string): Promise<Job> {
  return (await (await send('GET', `/v1/bulk/${id}`)).json()) as Job;
}

function pollUntilComplete(id: string): Promise<Job> {
  return waitFor(
    async () => {
      const job = await poll(id);
      return job.status === 'complete' && job;
    },
    { what: `job ${id} to complete` },
  );
}

describe("the spec's bulk flow over a real socket: create, add, poll until complete, download", () => {
  it('succeeds with adds before processing, during it and after completion, and never shows complete early', async () => {
    gate.hold();
    // Before: the job waits (auto_start false), takes an add, then starts.
    const created = await send('POST', '/v1/bulk', {
      name: 'spec flow',
      emails: ['a@one.example'],
      auto_start: false,
    });
    expect(created.status).toBe(201);
    const job = (await created.json()) as Job;
    expect(job).toMatchObject({ name: 'spec flow', status: 'queued', total: 1 });
    expect(
      await (await send('POST', `/v1/bulk/${job.id}/emails`, { emails: ['b@one.example'] })).json(),
    ).toMatchObject({
      status: 'queued',
      total: 2,
    });
    expect((await send('POST', `/v1/bulk/${job.id}/start`)).status).toBe(200);
    await waitFor(() => gate.waiting() === 2);

    // During: verifications are in flight; an add grows the job, which stays processing.
    const during = (await (
      await send('POST', `/v1/bulk/${job.id}/emails`, { emails: ['c@two.example'] })
    ).json()) as Job;
    expect(during).toMatchObject({ status: 'processing', total: 3, completed: 0 });
    expect((await poll(job.id)).status).toBe('processing');
    expect((await send('GET', `/v1/bulk/${job.id}/results`)).status).toBe(409);
    gate.release();
    expect(await pollUntilComplete(job.id)).toMatchObject({ total: 3, completed: 3, progress: 1 });

    // After completion: the add reopens the job; no poll shows complete until the new address is done.
    gate.hold();
    const after = (await (
      await send('POST', `/v1/bulk/${job.id}/emails`, { emails: ['d@three.example'] })
    ).json()) as Job;
    expect(after).toMatchObject({ status: 'processing', total: 4, completed: 3, completed_at: null });
    await waitFor(() => gate.waiting() === 1);
    for (let i = 0; i < 5; i += 1)
      expect(await poll(job.id)).toMatchObject({ status: 'processing', completed: 3 });
    gate.release();
    expect(await pollUntilComplete(job.id)).toMatchObject({ total: 4, completed: 4 });

    // Download: every address, in input order, as JSON and as CSV.
    const results = (await (await send('GET', `/v1/bulk/${job.id}/results`)).json()) as {
      results: VerificationResult[];
    };
    const emails = ['a@one.example', 'b@one.example', 'c@two.example', 'd@three.example'];
    expect(results.results.map((result) => result.email)).toEqual(emails);
    const csv = await (await send('GET', `/v1/bulk/${job.id}/results?format=csv`)).text();
    expect(csv.trim().split('\r\n')).toHaveLength(5);
  });

  it('ends polling for a job created empty, and the add after it still works', async () => {
    gate.release();
    const job = (await (await send('POST', '/v1/bulk', { name: 'empty first' })).json()) as Job;
    expect(job).toMatchObject({ status: 'queued', total: 0 }); // the creation response
    expect(await poll(job.id)).toMatchObject({ status: 'complete', total: 0 });
    expect((await send('POST', `/v1/bulk/${job.id}/emails`, { emails: ['e@four.example'] })).status).toBe(
      200,
    );
    expect(await pollUntilComplete(job.id)).toMatchObject({ total: 1, completed: 1 });
  });
});
