import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/bulk/types.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import type { VerificationResult } from '../../src/result.js';
import { waitFor } from '../support/wait-for.js';
import { addresses, auth, fakeVerifier, jsonAuth } from './support.js';

interface ResultsBody {
  job: Job;
  offset: number;
  limit: number | null;
  next_offset: number | null;
  results: VerificationResult[];
}

let server: RunningServer;
let base: string;

beforeAll(async () => {
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: ['test-key-a'],
    verifier: fakeVerifier(),
    limits: { requestsPerSecond: 10_000, burst: 10_000 },
  });
  base = server.url.replace(/\/$/, '');
  expect((server.server.address() as AddressInfo).port).toBeGreaterThan(0);
});
afterAll(async () => {
  await server.close();
});

async function completedJob(emails: string[]): Promise<Job> {
  const created = await fetch(`${base}/v1/bulk`, {
    method: 'POST',
    headers: jsonAuth(),
    body: JSON.stringify({ name: 'whole', emails }),
  });
  const { id } = (await created.json()) as Job;
  return waitFor(
    async () => {
      const job = (await (await fetch(`${base}/v1/bulk/${id}`, { headers: auth() })).json()) as Job;
      return job.status === 'complete' && job;
    },
    { what: `job ${id} to complete` },
  );
}

describe('GET /v1/bulk/{id}/results as JSON, over a real socket', () => {
  it('returns every result of a 4,900-address job by default, streamed, in input order', async () => {
    const emails = addresses(4900);
    const job = await completedJob(emails);
    const response = await fetch(`${base}/v1/bulk/${job.id}/results`, { headers: auth() });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('content-length')).toBeNull(); // streamed, not buffered
    const body = (await response.json()) as ResultsBody;
    expect(body).toMatchObject({ offset: 0, limit: null, next_offset: null });
    expect(body.job).toMatchObject({ id: job.id, total: 4900, status: 'complete' });
    expect(body.results).toHaveLength(4900);
    expect(body.results.map((result) => result.email)).toEqual(emails);
  });

  it('starts at offset, and pages only when a limit is asked for', async () => {
    const emails = addresses(30);
    const job = await completedJob(emails);
    const tail = (await (
      await fetch(`${base}/v1/bulk/${job.id}/results?offset=25`, { headers: auth() })
    ).json()) as ResultsBody;
    expect(tail.results.map((result) => result.email)).toEqual(emails.slice(25));
    expect(tail.next_offset).toBeNull();
    const page = (await (
      await fetch(`${base}/v1/bulk/${job.id}/results?offset=10&limit=7`, { headers: auth() })
    ).json()) as ResultsBody;
    expect(page).toMatchObject({ offset: 10, limit: 7, next_offset: 17 });
    expect(page.results.map((result) => result.email)).toEqual(emails.slice(10, 17));
    const beyond = (await (
      await fetch(`${base}/v1/bulk/${job.id}/results?offset=1000`, { headers: auth() })
    ).json()) as ResultsBody;
    expect(beyond.results).toEqual([]);
  });

  it('returns an empty list for a job with no addresses', async () => {
    const created = (await (
      await fetch(`${base}/v1/bulk`, { method: 'POST', headers: jsonAuth(), body: '{"emails": []}' })
    ).json()) as Job;
    const response = await fetch(`${base}/v1/bulk/${created.id}/results?partial=true`, { headers: auth() });
    const body = (await response.json()) as ResultsBody;
    expect(body.results).toEqual([]);
  });

  it.each([
    ['limit=0', 400],
    ['limit=10001', 400],
    ['limit=abc', 400],
    ['offset=-1', 400],
    [`limit=${'9'.repeat(400)}`, 400],
  ])('answers %s with %i', async (query, status) => {
    const job = await completedJob(addresses(3));
    const response = await fetch(`${base}/v1/bulk/${job.id}/results?${query}`, { headers: auth() });
    expect(response.status).toBe(status);
  });
});
