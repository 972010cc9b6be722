import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { DurableJobStore } from '../../src/bulk/types.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import type { VerificationResult } from '../../src/result.js';
import { instantVerifier, manualVerifier, resultFor } from '../bulk/support.js';
import { dropPostgresSchema, POSTGRES_URL, sharedPglite, testSchema } from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';

type Kind = 'pglite' | 'postgres';

/**
 * Two managers on one database, as two `serve --store` behind a load balancer: a job made on one after the other
 * opened is found by the other (read from the database), never a 404, while its holder runs it.
 */
describe.each<Kind>(['pglite', 'postgres'])('two managers on one database (%s)', (kind) => {
  const skip = kind === 'postgres' && POSTGRES_URL === undefined;
  let schema = '';
  const managers: BulkJobManager[] = [];
  const stores: DurableJobStore[] = [];
  const held: ReturnType<typeof manualVerifier>[] = [];

  async function openStore(): Promise<DurableJobStore> {
    const store =
      kind === 'pglite'
        ? await pgliteStore({ db: await sharedPglite(), schema, leaseMs: 1000 })
        : await postgresStore({ connectionString: POSTGRES_URL!, schema, leaseMs: 1000, poolSize: 2 });
    stores.push(store);
    return store;
  }

  afterEach(async () => {
    for (const verifier of held.splice(0)) await verifier.releaseAll();
    for (const jobs of managers.splice(0)) await jobs.close().catch(() => {});
    for (const store of stores.splice(0)) await store.close?.()?.catch?.(() => {});
    if (schema === '') return;
    if (kind === 'pglite') await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    else await dropPostgresSchema(schema);
    schema = '';
  });

  it.skipIf(skip)(
    'finds a job the other made after it opened: get, results and stream answer it, other owners and unknown ids stay 404',
    async () => {
      schema = testSchema();
      const verifier = manualVerifier();
      held.push(verifier);
      const a = new BulkJobManager({ store: await openStore(), verifier, greylistRetry: { delaysMs: [] } });
      const b = new BulkJobManager({ store: await openStore(), verifier: instantVerifier() });
      managers.push(a, b);
      await a.opened();
      await b.opened();

      const emails = ['ann@one.example', 'bob@two.example', 'ann@one.example'];
      const job = await a.create({ emails, owner: 'tenant-1' });
      await waitFor(() => verifier.held.length > 0);

      const seen = await b.get(job.id, { owner: 'tenant-1' });
      expect(seen).toMatchObject({ id: job.id, total: 3, status: 'processing' });
      expect(await b.get(job.id, { owner: 'tenant-2' })).toBeUndefined();
      expect(await b.get(job.id)).toBeUndefined();
      expect(await b.get('no-such-job', { owner: 'tenant-1' })).toBeUndefined();
      await expect(b.results(job.id, { owner: 'tenant-2' })).rejects.toMatchObject({ code: 'job_not_found' });
      // Held by A: read-only on B.
      await expect(b.add(job.id, ['carl@three.example'], { owner: 'tenant-1' })).rejects.toMatchObject({
        code: 'lease_lost',
      });

      const streamed: VerificationResult[] = [];
      const reading = (async () => {
        for await (const result of b.stream(job.id, { owner: 'tenant-1' })) streamed.push(result);
      })();
      await verifier.releaseAll();
      await reading;
      expect(streamed).toEqual(emails.map((email) => resultFor(email)));
      expect(await b.get(job.id, { owner: 'tenant-1' })).toMatchObject({ status: 'complete', completed: 3 });
      expect(await b.results(job.id, { owner: 'tenant-1' })).toEqual(emails.map((email) => resultFor(email)));
    },
    60_000, // the first test of a run opens the shared PGlite (initdb)
  );

  it.skipIf(skip)(
    'streams a job it has not met yet from the first read',
    async () => {
      schema = testSchema();
      const a = new BulkJobManager({ store: await openStore(), verifier: instantVerifier() });
      const b = new BulkJobManager({ store: await openStore(), verifier: instantVerifier() });
      managers.push(a, b);
      await b.opened();
      const emails = ['dan@four.example', 'eve@five.example'];
      const job = await a.create({ emails });
      const streamed: VerificationResult[] = [];
      for await (const result of b.stream(job.id)) streamed.push(result);
      expect(streamed).toEqual(emails.map((email) => resultFor(email)));
      expect(() => b.stream('no-such-job')).not.toThrow(); // the database is asked: the error comes on the first read
      await expect(b.stream('no-such-job')[Symbol.asyncIterator]().next()).rejects.toMatchObject({
        code: 'job_not_found',
      });
    },
    60_000,
  );
});
