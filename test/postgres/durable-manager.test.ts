import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { BulkJobManagerOptions, DurableJobStore, JobRecord, JobStore } from '../../src/bulk/types.js';
import { pgliteStore, postgresStore } from '../../src/postgres/index.js';
import type { VerificationResult } from '../../src/result.js';
import { FakeClock, instantVerifier, manualVerifier, resultFor, settle, until } from '../bulk/support.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { deferred } from '../support/deferred.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

type Kind = 'pglite' | 'postgres';

/** Polls `condition` every 20 ms for up to `ms` (for leases, which expire in real time). */
async function eventually(condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await condition()) return;
    await sleep(20);
  }
  throw new Error('condition not reached in time');
}

/** `count` addresses where every fifth repeats an earlier one (duplicates follow their first position). */
function listWithRepeats(count: number): string[] {
  return Array.from({ length: count }, (_, i) =>
    i % 5 === 4 ? `user${i - 3}@d${(i - 3) % 7}.example` : `user${i}@d${i % 7}.example`,
  );
}

/** The answer of one held `getJob`: `record` settles when the database answered, the caller gets it at `release()`. */
interface HeldRead {
  readonly record: Promise<JobRecord | undefined>;
  release(): void;
}

/** `inner`, whose next `getJob` after `holdNextRead()` reads at once but answers its caller only when released. */
function holdingReads(inner: DurableJobStore): { store: DurableJobStore; holdNextRead(): HeldRead } {
  let next: { gate: Promise<void>; read(record: Promise<JobRecord | undefined>): void } | undefined;
  const store: DurableJobStore = Object.assign(Object.create(inner) as DurableJobStore, {
    getJob(id: string): Promise<JobRecord | undefined> {
      const record = inner.getJob(id);
      const held = next;
      next = undefined;
      if (held === undefined) return record;
      held.read(record);
      return record.then(async (answer) => {
        await held.gate;
        return answer;
      });
    },
    close: () => Promise.resolve(),
  });
  return {
    store,
    holdNextRead() {
      const gate = deferred();
      const record = deferred<JobRecord | undefined>();
      next = { gate: gate.promise, read: (read) => read.then(record.resolve, record.reject) };
      return { record: record.promise, release: gate.resolve };
    },
  };
}

/** What {@link failingProgressReads} makes: set `failing` to false to let the reads through. */
interface FlakyStore {
  readonly store: DurableJobStore;
  failing: boolean;
  readonly reads: number;
}

/** `inner`, whose reads of a job's progress (`finalPositions`) fail as on a connection reset while `failing`. */
function failingProgressReads(inner: DurableJobStore): FlakyStore {
  let reads = 0;
  const flaky = {
    failing: true,
    get reads() {
      return reads;
    },
    store: Object.assign(Object.create(inner) as DurableJobStore, {
      finalPositions(id: string): Promise<number[]> {
        reads++;
        return flaky.failing ? Promise.reject(new Error('connection reset')) : inner.finalPositions(id);
      },
      close: () => Promise.resolve(),
    }),
  };
  return flaky;
}

describe.each<Kind>(['pglite', 'postgres'])('BulkJobManager on a durable store (%s)', (kind) => {
  const skip = kind === 'postgres' && POSTGRES_URL === undefined;
  let schema = '';
  const managers: BulkJobManager[] = [];
  const held: ReturnType<typeof manualVerifier>[] = [];
  function manual(): ReturnType<typeof manualVerifier> {
    const verifier = manualVerifier();
    held.push(verifier);
    return verifier;
  }
  const stores: DurableJobStore[] = [];

  async function openStore(leaseMs = 30_000): Promise<DurableJobStore> {
    const store =
      kind === 'pglite'
        ? await pgliteStore({ db: await sharedPglite(), schema, leaseMs })
        : await postgresStore({ connectionString: POSTGRES_URL!, schema, leaseMs, poolSize: 2 });
    stores.push(store);
    return store;
  }

  function manager(store: JobStore, options: BulkJobManagerOptions): BulkJobManager {
    const jobs = new BulkJobManager({ store, ...options });
    managers.push(jobs);
    return jobs;
  }

  afterEach(async () => {
    // Until none is held: a manager still running a job starts its next verifications as the last ones answer.
    for (const verifier of held.splice(0)) await verifier.releaseAll();
    for (const jobs of managers.splice(0)) await jobs.close().catch(() => {});
    for (const store of stores.splice(0)) await store.close?.()?.catch?.(() => {});
    if (schema === '') return;
    if (kind === 'pglite') await (await sharedPglite()).query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    else await dropPostgresSchema(schema);
    schema = '';
  });

  it.skipIf(skip)(
    'resumes an unfinished job after close: each position has one result, none verified twice',
    async () => {
      schema = testSchema();
      const emails = listWithRepeats(600);
      const first = manual();
      const a = manager(await openStore(), {
        verifier: first,
        concurrency: 8,
        greylistRetry: { delaysMs: [] },
      });
      const job = await a.create({ name: 'restart me', emails });
      await until(() => first.held.length > 0);
      while (first.calls.length < 250) {
        for (const call of first.held.splice(0)) call.resolve();
        await settle();
      }
      const closing = a.close();
      await first.releaseAll();
      await closing;
      const answered = new Set(first.calls);

      const second = instantVerifier();
      const b = manager(await openStore(), { verifier: second });
      await b.opened();
      const resumed = await b.get(job.id);
      expect(resumed).toMatchObject({ id: job.id, name: 'restart me', total: 600 });
      expect(resumed!.completed).toBeGreaterThanOrEqual(250);
      await eventually(async () => (await b.get(job.id))?.status === 'complete', 20_000);
      expect(second.calls.filter((email) => answered.has(email))).toEqual([]);
      expect(new Set([...first.calls, ...second.calls]).size).toBe(first.calls.length + second.calls.length);
      const results = await b.results(job.id);
      expect(results).toEqual(emails.map((email) => resultFor(email)));
      const done = (await b.get(job.id))!;
      expect(Object.values(done.counts).reduce((sum, n) => sum + n, 0)).toBe(600);
      expect(done.completed).toBe(600);
    },
  );

  it.skipIf(skip)(
    'reads a large job from the store a window at a time; repeats across windows are verified once',
    async () => {
      schema = testSchema();
      const count = 45_000;
      // Every seventh address repeats one from 20,000 positions earlier (another window).
      const emails = Array.from({ length: count }, (_, i) =>
        i % 7 === 0 && i >= 20_000
          ? `user${i - 20_000}@d${(i - 20_000) % 9}.example`
          : `user${i}@d${i % 9}.example`,
      );
      const verifier = instantVerifier();
      const jobs = manager(await openStore(), { verifier, maxAddressesPerAdd: 50_000 });
      const job = await jobs.create({ emails });
      await eventually(async () => (await jobs.get(job.id))?.status === 'complete', 60_000);
      expect(await jobs.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
      expect(verifier.calls.length).toBe(new Set(emails).size);
      expect(new Set(verifier.calls).size).toBe(verifier.calls.length);
    },
    90_000,
  );

  it.skipIf(skip)('keeps a job that was never started queued, and finished jobs readable', async () => {
    schema = testSchema();
    const a = manager(await openStore(), { verifier: instantVerifier() });
    const waiting = await a.create({ emails: ['a@x.example'], autoStart: false, owner: 't1' });
    const done = await a.create({ emails: ['b@x.example', 'bad@x.example'] });
    await until(async () => (await a.get(done.id))?.status === 'complete');
    await a.close();

    const verifier = instantVerifier();
    const b = manager(await openStore(), { verifier });
    expect(await b.get(waiting.id)).toBeUndefined(); // another owner's
    expect(await b.get(waiting.id, { owner: 't1' })).toMatchObject({ status: 'queued', total: 1 });
    expect(await b.results(done.id)).toEqual([resultFor('b@x.example'), resultFor('bad@x.example')]);
    await settle(20);
    expect(verifier.calls).toEqual([]);
    await b.start(waiting.id, { owner: 't1' });
    await until(async () => (await b.get(waiting.id, { owner: 't1' }))?.status === 'complete');
    expect((await b.list()).jobs.map((job) => job.id)).toEqual([done.id]);
    // A finished job read back from the store reopens on add: the new positions are verified, the old ones not
    // again (a finished job keeps no deduplication index, here as in memory, so a repeat of an old address is
    // verified anew).
    await b.add(done.id, ['c@x.example', 'b@x.example']);
    await until(async () => (await b.get(done.id))?.status === 'complete');
    expect(verifier.calls).toEqual(['a@x.example', 'c@x.example', 'b@x.example']);
    expect(await b.results(done.id)).toEqual(
      ['b@x.example', 'bad@x.example', 'c@x.example', 'b@x.example'].map((email) => resultFor(email)),
    );
  });

  it.skipIf(skip)(
    'finish now is durable: a restart neither re-runs the ended retries nor retries again',
    async () => {
      schema = testSchema();
      const clock = new FakeClock(Date.UTC(2026, 10, 27, 10, 0, 0));
      const tries = new Map<string, number>();
      const verifier = {
        async verify(email: string): Promise<VerificationResult> {
          tries.set(email, (tries.get(email) ?? 0) + 1);
          return resultFor(email); // grey* greylisted every time
        },
      };
      const options = { verifier, clock, greylistRetry: { delaysMs: [60_000, 300_000] } };
      const a = manager(await openStore(), options);
      const job = await a.create({ emails: ['grey1@x.example', 'ok@x.example'] });
      await until(async () => {
        const now = await a.get(job.id);
        return now?.retries.waiting === 1 && now.completed === 1;
      });
      const finished = await a.finish(job.id);
      expect(finished).toMatchObject({
        status: 'complete',
        completed: 2,
        retries: { waiting: 0, delays_ms: [] },
      });
      await a.close();

      const b = manager(await openStore(), options);
      expect(await b.get(job.id)).toEqual(finished);
      clock.advance(400_000);
      await settle(20);
      expect(tries.get('grey1@x.example')).toBe(1);
      const [grey] = await b.results(job.id);
      expect(grey).toMatchObject({ status: 'unknown', sub_status: 'greylisted' });
      expect(grey!.reason).toBe(
        'greylisted; not retried: the job was finished before the retry due at 10:01 UTC',
      );
      // The job retries nothing from now on, also after the restart: an address added later that is greylisted is final.
      await b.add(job.id, ['grey2@y.example']);
      await until(async () => (await b.get(job.id))?.status === 'complete');
      expect((await b.get(job.id))!.retries).toEqual({ waiting: 0, next_retry_at: null, delays_ms: [] });
      expect(tries.get('grey2@y.example')).toBe(1);
    },
  );

  it.skipIf(skip)('keeps greylisting retries and their due times across a restart', async () => {
    schema = testSchema();
    const clock = new FakeClock();
    const tries = new Map<string, number>();
    const verifier = {
      async verify(email: string): Promise<VerificationResult> {
        const n = (tries.get(email) ?? 0) + 1;
        tries.set(email, n);
        return n === 1 && email.startsWith('grey')
          ? resultFor(email)
          : resultFor(email, { status: 'valid', sub_status: null });
      },
    };
    const options = { verifier, clock, greylistRetry: { delaysMs: [60_000, 300_000] } };
    const a = manager(await openStore(), options);
    const job = await a.create({ emails: ['grey1@x.example', 'ok@x.example', 'grey1@x.example'] });
    // The greylisted address waits while ok@ completes; the two are stored in either order.
    await until(async () => {
      const now = await a.get(job.id);
      return now?.retries.waiting === 1 && now.completed === 1;
    });
    const before = (await a.get(job.id))!;
    expect(before).toMatchObject({ completed: 1, retries: { waiting: 1 } });
    await a.close();

    const b = manager(await openStore(), options);
    const after = (await b.get(job.id))!;
    expect(after.retries).toEqual(before.retries);
    expect(after.status).toBe('processing');
    clock.advance(59_000);
    await settle(20);
    expect(tries.get('grey1@x.example')).toBe(1);
    clock.advance(1000);
    await until(async () => (await b.get(job.id))?.status === 'complete');
    const ok = resultFor('grey1@x.example', { status: 'valid', sub_status: null });
    expect(await b.results(job.id)).toEqual([ok, resultFor('ok@x.example'), ok]);
  });

  it.skipIf(skip)(
    'loses nothing when a write dies mid-way: the next manager redoes what was not stored',
    async () => {
      schema = testSchema();
      const inner = await openStore();
      let failed = 0;
      const dying: DurableJobStore = Object.assign(Object.create(inner) as DurableJobStore, {
        putResults(...args: Parameters<DurableJobStore['putResults']>) {
          // The first write that carries results dies before its transaction commits.
          if (args[1].length > 0 && failed++ === 0) return Promise.reject(new Error('the process died here'));
          return inner.putResults(...args);
        },
        close: () => Promise.resolve(),
      });
      const emails = listWithRepeats(400);
      const first = manual();
      const a = manager(dying, { verifier: first, concurrency: 4, greylistRetry: { delaysMs: [] } });
      const job = await a.create({ emails });
      await until(() => first.held.length > 0);
      for (let round = 0; round < 40; round++) {
        for (const call of first.held.splice(0)) call.resolve();
        await settle();
      }
      await a.get(job.id); // writes what A has: the first such write dies
      expect(failed).toBeGreaterThan(0);
      expect((await a.get(job.id))?.error?.code).toBe('store_error');
      await inner.releaseLeases(); // the dead process's lease, as its expiry would

      const b = manager(await openStore(), { verifier: instantVerifier() });
      await eventually(async () => (await b.get(job.id))?.status === 'complete');
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
      expect((await b.get(job.id))!.completed).toBe(400);
    },
  );

  it.skipIf(skip)(
    'two managers on one database: the job stays with its holder, the other takes it over after the lease',
    async () => {
      schema = testSchema();
      const storeA = await openStore(1000);
      const first = manual();
      const a = manager(storeA, { verifier: first, concurrency: 4, greylistRetry: { delaysMs: [] } });
      const emails = listWithRepeats(200);
      const job = await a.create({ emails });
      await until(() => first.held.length > 0);
      for (let round = 0; round < 10; round++) {
        for (const call of first.held.splice(0)) call.resolve();
        await settle();
      }
      const second = instantVerifier();
      const b = manager(await openStore(1000), { verifier: second });
      await b.opened();
      await sleep(1500); // longer than the lease: A renews it, so B must not take the job
      expect(second.calls).toEqual([]);
      // B sees the job (read from the store) but may not change it while A holds it.
      expect(await b.get(job.id)).toMatchObject({ id: job.id, status: 'processing', total: 200 });
      await expect(b.add(job.id, ['late@x.example'])).rejects.toMatchObject({ code: 'lease_lost' });

      // A dies: its connection is gone and its lease runs out. What it stored is never verified again.
      await a.get(job.id); // writes what A has
      const stored = await storeA.finalPositions(job.id);
      expect(stored.length).toBeGreaterThan(0);
      const answered = new Set(stored.map((position) => emails[position]));
      await (kind === 'pglite' ? storeA.releaseLeases() : storeA.close!());
      if (kind === 'pglite') Object.assign(storeA, { renewLeases: () => Promise.reject(new Error('dead')) });
      await eventually(async () => (await b.get(job.id))?.status === 'complete', 20_000);
      expect(second.calls.filter((email) => answered.has(email))).toEqual([]);
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
      // A's late answers change nothing: its writes are refused.
      for (const call of first.held.splice(0))
        call.resolve(resultFor(call.email, { status: 'invalid', sub_status: 'mailbox_not_found' }));
      await settle(20);
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
      if (kind === 'pglite') {
        // A (its database still reachable) learns on its next write that the job is B's: a conflict, not a failure.
        await expect(a.add(job.id, ['late@x.example'])).rejects.toMatchObject({ code: 'lease_lost' });
      }
    },
    // Its own wait for the takeover is 20 s: the test may take longer than the default on a loaded machine.
    60_000,
  );

  /** A job of `count` addresses that manager A (its store's lease `leaseMs`) is verifying, every answer held. */
  async function jobHeldByA(count: number, leaseMs?: number) {
    const storeA = await openStore(leaseMs);
    const first = manual();
    const a = manager(storeA, { verifier: first, concurrency: 2, greylistRetry: { delaysMs: [] } });
    const emails = listWithRepeats(count);
    const job = await a.create({ emails });
    await until(() => first.held.length > 0);
    return { storeA, first, a, emails, job };
  }

  /** A dies: its renewals fail and its leases are free, as once they expire. */
  async function dies(storeA: DurableJobStore): Promise<void> {
    Object.assign(storeA, { renewLeases: () => Promise.reject(new Error('dead')) });
    await storeA.releaseLeases();
  }

  it.skipIf(skip)(
    'a read begun while another process held the job, answered after this manager took it over and finished it, changes nothing',
    async () => {
      schema = testSchema();
      const { storeA, emails, job } = await jobHeldByA(20, 1000);
      const { store: storeB, holdNextRead } = holdingReads(await openStore(1000));
      const b = manager(storeB, { verifier: instantVerifier() });
      await b.opened();

      const held = holdNextRead();
      const early = b.get(job.id); // A holds the job: B reads its record, and the answer waits
      expect(await held.record).toMatchObject({ status: 'processing', completed: 0 });
      await dies(storeA); // B takes the job over once the lease is free, and finishes it
      await eventually(async () => (await storeA.getJob(job.id))?.status === 'complete');
      held.release();
      expect(await early).toMatchObject({ status: 'complete', completed: 20 });
      expect(await b.get(job.id)).toMatchObject({ status: 'complete', completed: 20 });
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
    },
  );

  it.skipIf(skip)(
    'a read begun while this manager was taking the job over, answered after it finished the job, changes nothing',
    async () => {
      schema = testSchema();
      const { storeA, job } = await jobHeldByA(20, 1000);
      const holding = holdingReads(await openStore(1000));
      let restoring = false;
      const restored = deferred();
      const storeB: DurableJobStore = Object.assign(Object.create(holding.store) as DurableJobStore, {
        async finalPositions(id: string): Promise<number[]> {
          restoring = true; // B has leased the job; its progress is read once the test says so
          await restored.promise;
          return holding.store.finalPositions(id);
        },
      });
      const b = manager(storeB, { verifier: instantVerifier() });
      await b.opened();
      await dies(storeA);
      await eventually(() => restoring);

      const held = holding.holdNextRead();
      const early = b.get(job.id); // B is still taking the job over: it reads the record, the answer waits
      expect(await held.record).toMatchObject({ status: 'processing', completed: 0 });
      restored.resolve();
      await eventually(async () => (await storeA.getJob(job.id))?.status === 'complete');
      held.release();
      expect(await early).toMatchObject({ status: 'complete', completed: 20 });
      expect(await b.get(job.id)).toMatchObject({ status: 'complete', completed: 20 });
    },
  );

  it.skipIf(skip)(
    'reads of a job another process holds, answered out of order, never move it back',
    async () => {
      schema = testSchema();
      const { first, a, job } = await jobHeldByA(40);
      const { store: storeB, holdNextRead } = holdingReads(await openStore());
      const b = manager(storeB, { verifier: instantVerifier() });
      await b.opened();

      const held = holdNextRead();
      const early = b.get(job.id);
      expect(await held.record).toMatchObject({ completed: 0 });
      for (let round = 0; round < 3; round++) {
        for (const call of first.held.splice(0)) call.resolve();
        await settle();
      }
      await a.get(job.id); // A saves its progress
      const later = (await b.get(job.id))!;
      expect(later.completed).toBeGreaterThan(0);
      held.release();
      // The older read answers last: the job keeps the newer progress.
      expect((await early)!.completed).toBe(later.completed);
      expect((await b.get(job.id))!.completed).toBe(later.completed);
    },
  );

  it.skipIf(skip)(
    'takes over a job whose progress it could not read at the next lease tick, instead of stalling it',
    async () => {
      schema = testSchema();
      const { storeA, first, a, emails, job } = await jobHeldByA(20, 1000);
      for (const call of first.held.splice(0)) call.resolve();
      await a.get(job.id); // A saves what it verified, then dies
      const answered = new Set((await storeA.finalPositions(job.id)).map((position) => emails[position]));
      expect(answered.size).toBeGreaterThan(0);
      await dies(storeA);

      const flaky = failingProgressReads(await openStore(1000));
      const second = instantVerifier();
      const b = manager(flaky.store, { verifier: second });
      await b.opened(); // it leased the job at open, but could not read where the job was
      expect(flaky.reads).toBe(1);
      await expect(b.add(job.id, ['late@x.example'])).rejects.toMatchObject({ code: 'lease_lost' });
      flaky.failing = false; // the database answers again: the next lease tick reads the progress
      await eventually(async () => (await b.get(job.id))?.status === 'complete');
      expect(flaky.reads).toBe(2);
      expect(second.calls.filter((email) => answered.has(email))).toEqual([]);
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
    },
  );

  it.skipIf(skip)(
    'keeps a job it took over read-only while its progress cannot be read, and runs it once it can',
    async () => {
      schema = testSchema();
      const flaky = failingProgressReads(await openStore(1000));
      const b = manager(flaky.store, { verifier: instantVerifier() });
      await b.opened(); // before the job exists: B first meets it when it takes it over
      const { storeA, emails, job } = await jobHeldByA(20, 1000);
      await dies(storeA);
      await eventually(() => flaky.reads >= 2); // taken over, then tried again on the next tick
      expect(await b.get(job.id)).toMatchObject({ status: 'processing', completed: 0 });
      await expect(b.add(job.id, ['late@x.example'])).rejects.toMatchObject({ code: 'lease_lost' });
      flaky.failing = false;
      await eventually(async () => (await b.get(job.id))?.status === 'complete');
      expect(await b.results(job.id)).toEqual(emails.map((email) => resultFor(email)));
    },
  );
});
