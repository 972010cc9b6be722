/**
 * The byte budgets of the bulk routes (`maxBytesPerKey`, `maxBytesHeld`): refused with 429 before a job is created
 * or rows are added, counted as the job manager counts what its jobs hold.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { requestBytes, requestBytesInSlices } from '../../src/http/byte-quota.js';
import { ByteReservations } from '../../src/http/byte-reservations.js';
import { createHandler } from '../../src/http/handler.js';
import { resolveLimits } from '../../src/http/limits.js';
import { DEFAULT_LIMITS, defaultMaxBytesHeld, defaultMaxBytesPerKey } from '../../src/http/node-runtime.js';
import { addresses, auth, fakeVerifier, jsonAuth, KEY_A, KEY_B } from './support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(limits: { maxBytesPerKey?: number; maxBytesHeld?: number }) {
  const verifier = fakeVerifier();
  const jobs = new BulkJobManager({ verifier });
  const handler = createHandler({
    verifier,
    jobs,
    apiKeys: [KEY_A, KEY_B],
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY, ...limits },
  });
  cleanups.push(async () => {
    await handler.close();
    await jobs.close();
  });
  const call = (path: string, init?: RequestInit) => handler(new Request(`http://localhost${path}`, init));
  const csv = (path: string, body: string, key = KEY_A) =>
    call(path, { method: 'POST', headers: { ...auth(key), 'content-type': 'text/csv' }, body });
  const json = (path: string, body: unknown, key = KEY_A) =>
    call(path, { method: 'POST', headers: jsonAuth(key), body: JSON.stringify(body) });
  const total = async (key = KEY_A) =>
    ((await (await call('/v1/bulk', { headers: auth(key) })).json()) as { total: number }).total;
  return { jobs, call, csv, json, total };
}

/** A CSV of `count` rows whose second cell has `width` characters. */
function wideCsv(count: number, width: number, from = 0): string {
  const cell = 'x'.repeat(width);
  const rows = Array.from({ length: count }, (_, i) => `user${from + i}@d.example,${cell}`);
  return `email,notes\n${rows.join('\n')}\n`;
}

async function refusal(response: Response): Promise<string> {
  expect(response.status).toBe(429);
  const { error } = (await response.json()) as { error: { code: string; message: string } };
  expect(error.code).toBe('limit_exceeded');
  return error.message;
}

describe('bytes held per API key', () => {
  it('counts a request as the manager counts what it then holds', async () => {
    const { jobs, csv } = setup({});
    expect((await csv('/v1/bulk?name=wide&auto_start=false', wideCsv(3, 1000))).status).toBe(201);
    const rows = [0, 1, 2].map((i) => [`user${i}@d.example`, 'x'.repeat(1000)]);
    const expected = requestBytes({
      name: 'wide',
      emails: rows.map((row) => row[0]!),
      source: { columns: ['email', 'notes'], emailColumn: 0, rows },
    });
    expect(expected).toBe(8 + 3 * (256 + 2 * 15 + 2 * (15 + 1 + 1000)));
    expect(jobs.heldBytes().total).toBe(expected);
  });

  it('refuses wide rows past maxBytesPerKey before a job is created, and a delete makes room', async () => {
    // 10 rows of 10,000 characters: 10 × (256 + 2 × 15 + 2 × 10,016) = 203,180 bytes (user0-9), 203,220 (user10-29).
    const { csv, call, total } = setup({ maxBytesPerKey: 450_000 });
    const first = await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000));
    expect(first.status).toBe(201);
    const { id } = (await first.json()) as { id: string };
    expect((await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000, 10))).status).toBe(201);
    expect(await refusal(await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000, 20)))).toBe(
      'at most 450000 bytes held per API key (maxBytesPerKey; its jobs hold 406400, this request adds 203220); delete finished jobs to make room',
    );
    expect(await total()).toBe(2); // the refused list left no job behind
    // An add of rows to an existing job is refused before anything is added.
    expect(await refusal(await csv(`/v1/bulk/${id}/emails`, wideCsv(10, 10_000, 20)))).toContain(
      'its jobs hold 406400, this request adds 203220',
    );
    const job = (await (await call(`/v1/bulk/${id}`, { headers: auth() })).json()) as { total: number };
    expect(job.total).toBe(10);
    await call(`/v1/bulk/${id}`, { method: 'DELETE', headers: auth() });
    expect((await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000, 20))).status).toBe(201);
  });

  it('refuses JSON creates and adds too', async () => {
    const { json, total } = setup({ maxBytesPerKey: 50_000 });
    const emails = addresses(100); // about 290 bytes each
    const created = await json('/v1/bulk', { emails, auto_start: false });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    expect(await refusal(await json(`/v1/bulk/${id}/emails`, { emails }))).toMatch(
      /^at most 50000 bytes held per API key \(maxBytesPerKey; its jobs hold \d+, this request adds \d+\)/,
    );
    expect(await refusal(await json('/v1/bulk', { emails }))).toContain('bytes held per API key');
    expect(await total()).toBe(1);
  });

  it('counts what concurrent uploads of one key are about to add', async () => {
    const { csv, total } = setup({ maxBytesPerKey: 300_000 });
    const statuses = await Promise.all([
      csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000)),
      csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000, 10)),
    ]).then((responses) => responses.map((response) => response.status));
    expect(statuses.sort()).toEqual([201, 429]);
    expect(await total()).toBe(1);
    // Once the requests are over, nothing stays reserved: the held job alone counts.
    expect((await csv('/v1/bulk?auto_start=false', wideCsv(4, 10_000, 20))).status).toBe(201);
  });

  it('refuses past maxBytesHeld what every key holds together, each under its own budget', async () => {
    const { csv, total } = setup({ maxBytesPerKey: 300_000, maxBytesHeld: 450_000 });
    expect((await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000), KEY_A)).status).toBe(201);
    expect((await csv('/v1/bulk?auto_start=false', wideCsv(10, 10_000), KEY_B)).status).toBe(201);
    expect(await refusal(await csv('/v1/bulk?auto_start=false', wideCsv(1, 30_000), KEY_B))).toBe(
      'at most 450000 bytes held by all jobs of this server (maxBytesHeld; they hold 406360, this request adds 60318); try again once jobs are deleted',
    );
    expect(await total(KEY_B)).toBe(1);
  });
});

describe('ByteReservations', () => {
  it('sums per tenant and in all, and frees each reservation once', () => {
    const reservations = new ByteReservations();
    const first = reservations.reserve('a', 100);
    reservations.reserve('a', 20);
    const other = reservations.reserve('b', 5);
    expect([reservations.of('a'), reservations.of('b'), reservations.total]).toEqual([120, 5, 125]);
    first();
    first();
    other();
    expect([reservations.of('a'), reservations.of('b'), reservations.total]).toEqual([20, 0, 20]);
  });
});

describe('byte budget defaults', () => {
  it('derive from the heap limit, and a bad value is refused', () => {
    expect(defaultMaxBytesPerKey(4 * 2 ** 30)).toBe(2 ** 30);
    expect(defaultMaxBytesHeld(4 * 2 ** 30)).toBe(2 * 2 ** 30);
    expect(defaultMaxBytesPerKey(2 ** 20)).toBe(16 * 2 ** 20);
    expect(defaultMaxBytesHeld(2 ** 20)).toBe(16 * 2 ** 20);
    expect(resolveLimits({ maxBytesHeld: 1000 }, DEFAULT_LIMITS).maxBytesHeld).toBe(1000);
    expect(() => resolveLimits({ maxBytesPerKey: 0 }, DEFAULT_LIMITS)).toThrow(
      'limits.maxBytesPerKey must be a positive integer',
    );
    expect(() => resolveLimits({ maxBytesHeld: 1.5 }, DEFAULT_LIMITS)).toThrow(
      'limits.maxBytesHeld must be a positive integer',
    );
  });
});

describe('requestBytesInSlices', () => {
  it('counts a large list as requestBytes does, with rows or without, across its slices', async () => {
    const emails = Array.from({ length: 40_000 }, (_, i) => `user${i}@d${i % 7}.example`);
    const rows = emails.map((email, i) => [email, `note, "${i}"`, 'ünïcode']);
    const source = { columns: ['email', 'note', 'more'], emailColumn: 0, rows };
    for (const request of [
      { emails, name: 'n' },
      { emails, source },
      { emails: [] },
      { emails: undefined },
    ]) {
      expect(await requestBytesInSlices(request, 1)).toBe(requestBytes(request));
    }
  });
});
