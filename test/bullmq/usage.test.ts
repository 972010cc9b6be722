/**
 * Bulk usage of a worker fleet: counted by the workers in the transaction that commits a chunk's results, once per
 * address, in the usage table every API node reads.
 */
import { describe, expect, it } from 'vitest';
import type { BulkVerifier } from '../../src/bulk/types.js';
import type { UsageStore } from '../../src/bulk/usage.js';
import type { FleetWorker } from '../../src/bullmq/worker.js';
import { resultFor } from '../bulk/support.js';
import { POSTGRES_URL } from '../support/databases.js';
import { ownFleet } from '../support/own-fleet.js';
import { REDIS_URL } from '../support/redis.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;

describe.skipIf(!enabled)('bulk usage on a worker fleet', () => {
  it("counts each address of an owner's job once, by status and UTC day, in the workers' commits", async () => {
    const fleet = await ownFleet({ chunkSize: 3 });
    const verifier: BulkVerifier = { verify: async (email) => resultFor(email) };
    let worker: FleetWorker | undefined;
    try {
      await fleet.jobs.opened();
      const emails = [
        'a@x.test',
        'b@x.test',
        'bad@x.test',
        'c@x.test',
        'a@x.test',
        'bad2@x.test',
        'd@x.test',
      ];
      const job = await fleet.jobs.create({ owner: 'tenant-fleet', emails });
      const anonymous = await fleet.jobs.create({ emails: ['e@x.test'] });
      worker = await fleet.worker({ verifier, id: 'w0' });
      await expect
        .poll(async () => (await fleet.jobs.get(job.id, { owner: 'tenant-fleet' }))?.status, {
          timeout: 20_000,
        })
        .toBe('complete');
      await expect
        .poll(async () => (await fleet.jobs.get(anonymous.id))?.status, { timeout: 20_000 })
        .toBe('complete');
      const finished = await fleet.jobs.get(job.id, { owner: 'tenant-fleet' });
      const store = fleet.workerStore as unknown as UsageStore;
      const today = new Date().toISOString().slice(0, 10);
      const counts = await store.readUsage('tenant-fleet', '2000-01-01', '2100-01-01');
      const byStatus = Object.fromEntries(counts.map((count) => [count.status, count.count]));
      expect(counts.every((count) => count.kind === 'bulk' && count.day === today)).toBe(true);
      expect(byStatus).toEqual(
        Object.fromEntries(Object.entries(finished!.counts).filter(([, count]) => count > 0)),
      );
      expect(counts.reduce((sum, count) => sum + count.count, 0)).toBe(emails.length);
    } finally {
      await worker?.close();
      await fleet.close();
    }
  }, 60_000);
});
