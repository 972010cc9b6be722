/**
 * A durable store's add that fails after event-loop turns is undone whole, and the adds and the start called
 * after it wait for it (issue 30): they apply to the job as it was, not to a job broken by a half-done add.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { DurableJobStore } from '../../src/bulk/types.js';
import { pgliteStore } from '../../src/postgres/index.js';
import { instantVerifier, until } from '../bulk/support.js';
import { openSharedPglite, PGLITE_OPEN_MS, sharedPglite, testSchema } from '../support/databases.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS);

describe('a durable add that fails after its turns (pglite)', () => {
  let schema = '';
  const managers: BulkJobManager[] = [];

  afterEach(async () => {
    for (const jobs of managers.splice(0)) await jobs.close().catch(() => {});
    await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });

  it('is undone whole; the add and the start called after it apply to the job as it was', async () => {
    schema = testSchema();
    const inner = await pgliteStore({ db: await sharedPglite(), schema });
    let failNext = false;
    let turnsBeforeFailing = 0;
    const store: DurableJobStore = Object.assign(Object.create(inner) as DurableJobStore, {
      async putInputs(...args: Parameters<DurableJobStore['putInputs']>) {
        if (!failNext) return inner.putInputs(...args);
        failNext = false;
        // The write takes several turns of the event loop (as a large one does), then fails.
        for (; turnsBeforeFailing < 5; turnsBeforeFailing++) await new Promise((r) => setImmediate(r));
        throw new Error('could not extend file: No space left on device');
      },
    });
    const jobs = new BulkJobManager({ store, verifier: instantVerifier(), yieldAfterMs: 1 });
    managers.push(jobs);
    const { id } = await jobs.create({ autoStart: false, emails: ['a@one.example', 'b@two.example'] });
    failNext = true;
    const large = Array.from({ length: 20_000 }, (_, i) => `u${i}@d${i % 50}.example`);
    const failing = jobs.add(id, large);
    const next = jobs.add(id, ['n@three.example']);
    const started = jobs.start(id);
    await expect(failing).rejects.toMatchObject({ code: 'store_error' });
    expect(turnsBeforeFailing).toBe(5);
    expect(await next).toMatchObject({ total: 3 });
    expect(await started).toMatchObject({ total: 3 });
    await until(async () => (await jobs.get(id))?.status === 'complete');
    expect(await jobs.get(id)).toMatchObject({ status: 'complete', total: 3, completed: 3, error: null });
    expect((await jobs.results(id)).map((result) => result.email)).toEqual([
      'a@one.example',
      'b@two.example',
      'n@three.example',
    ]);
    expect(await inner.getJob(id)).toMatchObject({ status: 'complete', total: 3, completed: 3 });
  });
});
