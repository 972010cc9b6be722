/**
 * Signed job webhooks with a fleet: two API nodes (createHandler over a bullmq-runner manager each) with the same
 * webhook settings, a worker, and a real loopback receiver. The event is decided by a worker in the database and
 * heard by both nodes; the receiver gets one delivery sequence (a failed attempt, then its retry with the same
 * `webhook-id`), each signed with the key's secret.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createHandler } from '../../src/http/handler.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { createVerifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { handlerCaller } from '../support/http-call.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { receiver, SECRET } from '../webhooks/support.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
const KEY = 'fleet-webhook-key';
let dns: DnsTestServer;

beforeAll(async () => {
  if (enabled) dns = await startDnsServer({});
});
afterAll(async () => {
  await dns?.close();
});

const call = handlerCaller(KEY);

/**
 * Two API nodes of one fleet (a manager and a handler each, with webhooks signed by SECRET) and a third store
 * for a worker, all on a schema and a key prefix of their own. `close` closes them all and deletes the schema
 * and the keys; close the worker first.
 */
async function apiNodes(retryDelaysMs?: readonly number[]) {
  const schema = testSchema();
  const prefix = testPrefix();
  const stores = await Promise.all(
    [0, 1, 2].map(() => postgresStore({ connectionString: POSTGRES_URL!, schema })),
  );
  const managers = [0, 1].map(
    (i) =>
      new BulkJobManager({ store: stores[i]!, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) }),
  );
  const handlers = managers.map((jobs) =>
    createHandler({
      jobs,
      apiKeys: [KEY],
      console: false,
      webhooks: {
        keys: { [KEY]: { secrets: [SECRET] } },
        allowHttpWebhooks: true,
        allowAddresses: ['127.0.0.0/8'],
        ...(retryDelaysMs === undefined ? {} : { retryDelaysMs }),
      },
    }),
  );
  async function close(): Promise<void> {
    for (const handler of handlers) await handler.close();
    for (const jobs of managers) await jobs.close();
    await stores[2]!.close?.();
    await deletePrefix(prefix);
    await dropPostgresSchema(schema);
  }
  return { prefix, stores, managers, handlers, close };
}

describe.skipIf(!enabled)('job webhooks on a fleet', () => {
  it('delivers bulk.completed once, signed, whichever API nodes hear it', async () => {
    const hook = await receiver(SECRET, (_request, response, index) => {
      response.statusCode = index === 0 ? 503 : 204; // the first attempt fails: its retry follows
      response.end();
    });
    const nodes = await apiNodes([300, 300]);
    const { prefix, stores, managers, handlers } = nodes;
    const v = createVerifier({ resolver: nodeResolver({ servers: [dns.address] }), allowTlds: ['test'] });
    let worker: FleetWorker | undefined;
    try {
      for (const jobs of managers) await jobs.opened();
      worker = await createWorker({ connection: REDIS_URL!, prefix, store: stores[2]!, verifier: v });
      const emails = Array.from({ length: 50 }, (_, i) => `user${i}@d${i % 5}.hook.test`);
      const created = await call(handlers[0]!, 'POST', '/v1/bulk', {
        emails,
        webhook: { url: `http://127.0.0.1:${hook.port}/hook`, events: ['bulk.completed', 'bulk.failed'] },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      await expect
        .poll(async () => (await call(handlers[1]!, 'GET', `/v1/bulk/${id}`)).body.status, {
          timeout: 30_000,
        })
        .toBe('complete');
      await expect.poll(() => hook.received.length, { timeout: 10_000 }).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 1000)); // room for a duplicate to show up
      expect(hook.received).toHaveLength(2);
      expect(hook.received.every((received) => received.verified)).toBe(true);
      const [first, retry] = hook.received;
      expect(retry!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      const payload = JSON.parse(retry!.body);
      expect(payload).toMatchObject({
        type: 'bulk.completed',
        data: { id, status: 'complete', completed: 50 },
      });
      // The node that claimed the event logged both attempts; the other none.
      const logs = await Promise.all(
        handlers.map(
          async (handler) => (await call(handler, 'GET', `/v1/bulk/${id}/webhooks`)).body.deliveries,
        ),
      );
      const states = logs.map((log: { state: string }[]) => log.map((d) => d.state).join(','));
      expect(states.sort()).toEqual(['', 'retrying,delivered']);
    } finally {
      await worker?.close();
      await nodes.close();
      await v.dispose();
      await hook.close();
    }
  }, 60_000);

  it('delivers the event from another API node when the one that created the job is gone', async () => {
    const hook = await receiver(SECRET, (_request, response) => {
      response.statusCode = 204;
      response.end();
    });
    const nodes = await apiNodes();
    const { prefix, stores, managers, handlers } = nodes;
    const v = createVerifier({ resolver: nodeResolver({ servers: [dns.address] }), allowTlds: ['test'] });
    let worker: FleetWorker | undefined;
    try {
      for (const jobs of managers) await jobs.opened();
      const created = await call(handlers[0]!, 'POST', '/v1/bulk', {
        emails: ['a@d0.hook.test', 'b@d1.hook.test'],
        webhook: { url: `http://127.0.0.1:${hook.port}/hook` },
      });
      expect(created.status).toBe(201);
      const id = created.body.id as string;
      await handlers[0]!.close();
      await managers[0]!.close(); // the creating node is gone before the job completes
      worker = await createWorker({ connection: REDIS_URL!, prefix, store: stores[2]!, verifier: v });
      await expect.poll(() => hook.received.length, { timeout: 30_000 }).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]!.verified).toBe(true);
      expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
        type: 'bulk.completed',
        data: { id, status: 'complete', completed: 2 },
      });
      const log = await call(handlers[1]!, 'GET', `/v1/bulk/${id}/webhooks`);
      expect(log.body.deliveries.map((d: { state: string }) => d.state)).toEqual(['delivered']);
      // Deleting the job leaves no key of its own (its claim included).
      expect((await call(handlers[1]!, 'DELETE', `/v1/bulk/${id}`)).status).toBe(204);
      const redis = new Redis(REDIS_URL!);
      try {
        await expect.poll(() => redis.keys(`${prefix}:*${id}*`), { timeout: 10_000 }).toEqual([]);
      } finally {
        redis.disconnect();
      }
    } finally {
      await worker?.close();
      await nodes.close();
      await v.dispose();
      await hook.close();
    }
  }, 60_000);
});
