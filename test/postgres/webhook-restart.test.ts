/**
 * A job's webhook on a durable store (PGlite, and PostgreSQL when MAILVET_TEST_POSTGRES_URL is set) outlives its
 * manager: the store keeps its URL and events (never the secret), and the next manager on the store watches the
 * webhooks of unfinished jobs again, so their later events are delivered, signed with its secrets.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { DurableJobStore } from '../../src/bulk/types.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { instantVerifier } from '../bulk/support.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { waitFor } from '../support/wait-for.js';
import { recordingTransport, SECRET } from '../webhooks/support.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

const WEBHOOK = { url: 'https://hooks.test/mailvet', events: ['bulk.progress', 'bulk.completed'] } as const;

describe.each(['pglite', 'postgres'] as const)('webhooks over a restart (%s)', (kind) => {
  const skip = kind === 'postgres' && POSTGRES_URL === undefined;
  let schema = '';
  const closers: (() => Promise<unknown>)[] = [];

  async function openStore(): Promise<DurableJobStore> {
    const store =
      kind === 'pglite'
        ? await pgliteStore({ db: await sharedPglite(), schema })
        : await postgresStore({ connectionString: POSTGRES_URL!, schema, poolSize: 2 });
    closers.push(async () => store.close?.());
    return store;
  }

  /** A manager on `store` whose webhooks go to a recording transport. */
  function manager(store: DurableJobStore) {
    const recorded = recordingTransport();
    const jobs = new BulkJobManager({
      store,
      verifier: instantVerifier(),
      webhooks: {
        secrets: [SECRET],
        resolver: staticResolver({ 'hooks.test': { a: ['93.184.215.14'] } }),
        transport: recorded.transport,
      },
    });
    closers.push(() => jobs.close());
    return { jobs, sends: recorded.sends };
  }

  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => {});
    if (schema === '') return;
    if (kind === 'pglite') await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    else await dropPostgresSchema(schema);
    schema = '';
  });

  it.skipIf(skip)(
    "keeps the job's URL and events, and the next manager delivers its events signed with its secret",
    async () => {
      schema = testSchema();
      const store = await openStore();
      const first = manager(store);
      const job = await first.jobs.create({
        emails: ['a@x.example', 'b@x.example'],
        autoStart: false,
        webhook: WEBHOOK,
        owner: 'tenant-a',
      });
      expect(await store.webhookOf?.(job.id)).toEqual({ ...WEBHOOK, owner: 'tenant-a' });
      expect(await store.unfinishedWebhooks?.()).toEqual([{ jobId: job.id, ...WEBHOOK, owner: 'tenant-a' }]);
      const plain = await first.jobs.create({ emails: ['c@x.example'], autoStart: false });
      expect(await store.webhookOf?.(plain.id)).toBeUndefined();
      await first.jobs.close();

      const reopened = await openStore();
      const second = manager(reopened);
      await second.jobs.opened();
      await second.jobs.start(job.id, { owner: 'tenant-a' });
      const completed = await waitFor(
        () => second.sends.find((send) => send.body.includes('"bulk.completed"')),
        { what: 'bulk.completed from the second manager' },
      );
      const event = new Webhook(SECRET).verify(completed.body, completed.headers) as {
        data: { id: string; status: string; completed: number };
      };
      expect(event.data).toMatchObject({ id: job.id, status: 'complete', completed: 2 });
      expect(first.sends).toEqual([]);
      // Finished, the job is no longer listed for the next restart.
      expect(await reopened.unfinishedWebhooks?.()).toEqual([]);
    },
    60_000,
  );
});
