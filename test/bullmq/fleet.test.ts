/**
 * The fleet as a library: a manager with the bullmq runner and two in-process workers verify a job against
 * loopback DNS and SMTP servers; every position has exactly one result, equal to the in-process runner's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { Job } from '../../src/bulk/types.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker, type FleetWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import { postgresStore } from '../../src/postgres/pg.js';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
const COUNT = 3000;
const DOMAINS = 6;

let dns: DnsTestServer;
const smtp: SmtpServerHarness[] = [];
let emails: string[] = [];
let expected: Pick<VerificationResult, 'email' | 'status' | 'sub_status'>[] = [];

function verifier(): Verifier {
  return createVerifier({
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp[0]!.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
  });
}

function brief(results: readonly VerificationResult[]) {
  return results.map(({ email, status, sub_status }) => ({ email, status, sub_status }));
}

beforeAll(async () => {
  if (!enabled) return;
  const zone: Record<string, unknown> = {};
  for (let d = 0; d < DOMAINS; d++) {
    zone[`d${d}.fleet.test`] = { mx: [{ priority: 10, exchange: `mx${d}.fleet.test` }] };
    zone[`mx${d}.fleet.test`] = { a: [`127.0.0.${d + 2}`] };
  }
  dns = await startDnsServer(zone as Parameters<typeof startDnsServer>[0]);
  const first = await startSmtpServer({ host: '127.0.0.2', mailboxes: { nobody: 'missing' } });
  smtp.push(first);
  for (let d = 1; d < DOMAINS; d++) {
    smtp.push(
      await startSmtpServer({ host: `127.0.0.${d + 2}`, port: first.port, mailboxes: { nobody: 'missing' } }),
    );
  }
  emails = Array.from({ length: COUNT }, (_, i) =>
    i % 10 === 3 ? `nobody@d${i % DOMAINS}.fleet.test` : `user${i % 2000}@d${i % DOMAINS}.fleet.test`,
  );
  const inProcess = verifier();
  const jobs = new BulkJobManager({ verifier: inProcess });
  const job = await jobs.create({ emails });
  const results: VerificationResult[] = [];
  for await (const result of jobs.stream(job.id)) results.push(result);
  expected = brief(results);
  await jobs.close();
  await inProcess.dispose();
}, 120_000);

afterAll(async () => {
  for (const server of smtp) await server.close();
  await dns?.close();
});

describe.skipIf(!enabled)('the bullmq runner with in-process workers', () => {
  it('verifies every position exactly once, as the in-process runner does', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const store = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const workerStore = await postgresStore({ connectionString: POSTGRES_URL!, schema });
    const verifiers = [verifier(), verifier()];
    const workers: FleetWorker[] = [];
    const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: REDIS_URL!, prefix }) });
    try {
      await jobs.opened();
      for (const [i, v] of verifiers.entries()) {
        workers.push(
          await createWorker({
            connection: REDIS_URL!,
            prefix,
            store: workerStore,
            verifier: v,
            id: `w${i}`,
          }),
        );
      }
      expect(await jobs.fleetHealth()).toEqual({ queue: 'up', workers: 2 });
      const completes: Job[] = [];
      jobs.on('complete', (job) => completes.push(job));
      const job = await jobs.create({ name: 'fleet', emails: emails.slice(0, 2000) });
      await jobs.add(job.id, emails.slice(2000));
      const streamed: VerificationResult[] = [];
      for await (const result of jobs.stream(job.id)) streamed.push(result);
      expect(brief(streamed)).toEqual(expected);
      const done = await jobs.get(job.id);
      expect(done).toMatchObject({ status: 'complete', total: COUNT, completed: COUNT });
      expect(Object.values(done!.counts).reduce((a, b) => a + b, 0)).toBe(COUNT);
      expect(brief(await jobs.results(job.id))).toEqual(expected);
      await expect.poll(() => completes.length).toBe(1);
      expect(completes[0]).toMatchObject({ id: job.id, status: 'complete' });
    } finally {
      for (const worker of workers) await worker.close();
      await jobs.close();
      await workerStore.close?.();
      for (const v of verifiers) await v.dispose();
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
    }
  }, 120_000);
});
