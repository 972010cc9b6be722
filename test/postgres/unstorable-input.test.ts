/**
 * Input no PostgreSQL store can keep (a NUL character, a lone surrogate) gets the same answer on every store: a
 * 400 / `invalid_request` naming the address, row or line, before anything is stored; the job it was added to
 * goes on. And a durable store's failed write of one add fails that add only, not a job that was fine.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import type { DurableJobStore, JobStore } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import { instantVerifier, until } from '../bulk/support.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

type Kind = 'memory' | 'pglite' | 'postgres';
const KEY = 'k';

describe.each<Kind>(['memory', 'pglite', 'postgres'])('input no store can keep (%s)', (kind) => {
  const skip = kind === 'postgres' && POSTGRES_URL === undefined;
  let schema = '';
  const managers: BulkJobManager[] = [];

  async function openStore(): Promise<JobStore> {
    schema = testSchema();
    if (kind === 'memory') return memoryJobStore();
    if (kind === 'pglite') return pgliteStore({ db: await sharedPglite(), schema });
    return postgresStore({ connectionString: POSTGRES_URL!, schema, poolSize: 2 });
  }

  async function completeJob(store: JobStore): Promise<{ jobs: BulkJobManager; id: string }> {
    const jobs = new BulkJobManager({ store, verifier: instantVerifier(), greylistRetry: { delaysMs: [] } });
    managers.push(jobs);
    const { id } = await jobs.create({ name: 'fine', emails: ['a@one.example', 'b@two.example'] });
    await until(async () => (await jobs.get(id))?.status === 'complete');
    return { jobs, id };
  }

  afterEach(async () => {
    for (const jobs of managers.splice(0)) await jobs.close().catch(() => {});
    if (kind === 'pglite') await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    if (kind === 'postgres') await dropPostgresSchema(schema);
  });

  it.skipIf(skip)('refuses it in add and create, naming the element; the job stays complete', async () => {
    const { jobs, id } = await completeJob(await openStore());
    const refusals: [() => Promise<unknown>, string, RegExp][] = [
      [
        () => jobs.add(id, ['c@one.example', 'nul\0@one.example']),
        'emails[1]',
        /NUL character \(U\+0000\) at character 4/,
      ],
      [() => jobs.add(id, ['\uD800x@one.example']), 'emails[0]', /lone surrogate \(U\+D800\) at character 1/],
      [() => jobs.add(id, ['x@one.example\uDC00']), 'emails[0]', /lone surrogate \(U\+DC00\)/],
      [() => jobs.create({ emails: ['ok@one.example', '\0'] }), 'emails[1]', /NUL character/],
    ];
    refusals.push([
      () =>
        jobs.add(id, ['c@one.example'], {
          source: { columns: ['email', 'note'], emailColumn: 0, rows: [['c@one.example', 'a\0b']] },
        }),
      'source.rows[0]',
      /has a cell 2 that contains a NUL character/,
    ]);
    for (const [call, field, message] of refusals) {
      await expect(call(), field).rejects.toMatchObject({ code: 'invalid_request', field, message });
    }
    expect(await jobs.get(id)).toMatchObject({ status: 'complete', total: 2, completed: 2 });
    await jobs.add(id, ['c@three.example']);
    await until(async () => (await jobs.get(id))?.status === 'complete');
    expect((await jobs.results(id)).map((result) => result.email)).toEqual([
      'a@one.example',
      'b@two.example',
      'c@three.example',
    ]);
  });

  it.skipIf(skip)(
    'POST /v1/bulk/{id}/emails: a 400 naming the line or the element, for every body',
    async () => {
      const { jobs, id } = await completeJob(await openStore());
      const handler = createHandler({ apiKeys: [KEY], jobs });
      const post = (type: string, body: string) =>
        handler(
          new Request(`http://127.0.0.1/v1/bulk/${id}/emails`, {
            method: 'POST',
            headers: { authorization: `Bearer ${KEY}`, 'content-type': type },
            body,
          }),
        );
      const cases: [string, string, string][] = [
        [
          'text/plain',
          'c@one.example\nd\0@one.example\n',
          'the address at line 2 contains a NUL character (U+0000) at character 2',
        ],
        [
          'text/csv',
          'email,note\r\nc@one.example,fine\r\nd@one.example,exported\0junk\r\n',
          'the CSV row at line 3 has a cell 2 that contains a NUL character (U+0000) at character 9',
        ],
        [
          'text/csv',
          'email,note\r\nc@one.example,fine\r\n\0d@one.example,x\r\n',
          'the address at line 3 contains a NUL character (U+0000) at character 1',
        ],
        [
          'application/json',
          '{"emails":["c@one.example","d\\ud800@one.example"]}',
          'emails[1] contains a lone surrogate (U+D800) at character 2',
        ],
        [
          'application/json',
          '{"emails":["c@one.example\\u0000"]}',
          'emails[0] contains a NUL character (U+0000) at character 14',
        ],
      ];
      for (const [type, body, message] of cases) {
        const response = await post(type, body);
        expect(response.status, `${type} ${JSON.stringify(body)}`).toBe(400);
        expect(await response.json()).toMatchObject({ error: { code: 'invalid_request', message } });
      }
      expect(await jobs.get(id)).toMatchObject({ status: 'complete', total: 2 });
    },
  );

  it.skipIf(skip || kind === 'memory')(
    'a failed write of one add fails that add only: the job stays complete, on the database too',
    async () => {
      const inner = (await openStore()) as DurableJobStore;
      let failNext = false;
      const store: DurableJobStore = Object.assign(Object.create(inner) as DurableJobStore, {
        putInputs(...args: Parameters<DurableJobStore['putInputs']>) {
          if (!failNext) return inner.putInputs(...args);
          failNext = false;
          return Promise.reject(new Error('invalid byte sequence for encoding "UTF8": 0x00'));
        },
      });
      const { jobs, id } = await completeJob(store);
      failNext = true;
      await expect(jobs.add(id, ['c@one.example'])).rejects.toMatchObject({ code: 'store_error' });
      expect(await jobs.get(id)).toMatchObject({ status: 'complete', total: 2, completed: 2, error: null });
      await until(async () => (await inner.getJob(id))?.status === 'complete');
      expect(await inner.getJob(id)).toMatchObject({ total: 2, completed: 2 });
      await jobs.add(id, ['c@three.example']);
      await until(async () => (await jobs.get(id))?.status === 'complete');
      expect(await jobs.get(id)).toMatchObject({ total: 3, completed: 3 });
      expect(await inner.getJob(id)).toMatchObject({ status: 'complete', total: 3, completed: 3 });
    },
  );
});
