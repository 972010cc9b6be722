/**
 * Webhooks of a stored API key (`mailvet keys`, its secret in the job store) on a fleet: two API nodes
 * (createHandler with `apiKeyStore` over a bullmq-runner manager each, no secret in their options), a worker and a
 * real loopback receiver that checks signatures with `standardwebhooks`. The node that created the job is gone
 * when it completes and the key's secret was rotated meanwhile: the other node signs with the secret the store
 * holds at delivery time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { createHandler } from '../../src/http/handler.js';
import { newApiKey } from '../../src/io/api-key.js';
import { postgresStore } from '../../src/postgres/pg.js';
import { createVerifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { handlerCaller } from '../support/http-call.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { receiver, SECRET, SECRET2 } from '../webhooks/support.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
let dns: DnsTestServer;

beforeAll(async () => {
  if (enabled) dns = await startDnsServer({});
});
afterAll(async () => {
  await dns?.close();
});

describe.skipIf(!enabled)('webhooks of a stored key on a fleet', () => {
  it("signs with the key's current secret from the store, on whichever API node delivers", async () => {
    const hook = await receiver(SECRET2, (_request, response) => {
      response.statusCode = 204;
      response.end();
    });
    const schema = testSchema();
    const prefix = testPrefix();
    const stores = await Promise.all(
      [0, 1, 2].map(() => postgresStore({ connectionString: POSTGRES_URL!, schema })),
    );
    const made = await newApiKey();
    await stores[0]!.apiKeys.create({
      id: made.keyId,
      name: 'fleet-hooks',
      hash: made.hash,
      scopes: ['bulk:read', 'bulk:write'],
      requestsPerSecond: null,
      addressesPerDay: null,
      createdAt: Date.now(),
      webhookSecret: SECRET,
    });
    const managers = [0, 1].map(
      (i) =>
        new BulkJobManager({ store: stores[i]!, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) }),
    );
    const handlers = managers.map((jobs, i) =>
      createHandler({
        jobs,
        apiKeys: [],
        apiKeyStore: stores[i]!.apiKeys,
        console: false,
        webhooks: { keys: {}, allowHttpWebhooks: true, allowAddresses: ['127.0.0.0/8'] },
      }),
    );
    const call = handlerCaller(made.key);
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
      // The key's secret is rotated (no grace), then the creating node goes before the job completes.
      expect(await stores[1]!.apiKeys.setWebhookSecret(made.keyId, SECRET2, null)).toBe(true);
      await handlers[0]!.close();
      await managers[0]!.close();
      worker = await createWorker({ connection: REDIS_URL!, prefix, store: stores[2]!, verifier: v });
      await expect.poll(() => hook.received.length, { timeout: 30_000 }).toBe(1);
      const [delivery] = hook.received;
      expect(delivery!.verified).toBe(true); // by SECRET2, the receiver's secret
      expect(delivery!.headers['webhook-signature']?.split(' ')).toHaveLength(1);
      expect(JSON.parse(delivery!.body)).toMatchObject({
        type: 'bulk.completed',
        data: { id, status: 'complete', completed: 2 },
      });
      const log = await call(handlers[1]!, 'GET', `/v1/bulk/${id}/webhooks`);
      expect(log.body.deliveries.map((d: { state: string }) => d.state)).toEqual(['delivered']);
    } finally {
      await worker?.close();
      for (const handler of handlers) await handler.close();
      for (const jobs of managers) await jobs.close();
      await stores[2]!.close?.();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
      await v.dispose();
      await hook.close();
    }
  }, 60_000);
});
