/**
 * A large `add()` is taken in slices with event-loop turns between them (issue 30): other work runs meanwhile,
 * nothing of the add is verified before it is committed, an add stopped after a turn is undone whole, adds of a
 * job run one after the other, and `start` waits for an add in progress. Proven by events (what ran before what),
 * never by time.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { instantVerifier, settle } from './support.js';

/** `count` distinct addresses over a few domains, with every tenth one a repeat of an earlier one. */
function addresses(count: number, tag = 'u'): string[] {
  const list: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = i % 10 === 9 ? i - 5 : i;
    list.push(`${tag}${n}@d${n % 37}.example`);
  }
  return list;
}

const managers: BulkJobManager[] = [];
afterEach(async () => {
  for (const jobs of managers.splice(0)) await jobs.close().catch(() => {});
});

/** A manager with the smallest slice, so that a large add certainly takes several turns. */
function manager(): { jobs: BulkJobManager; verifier: ReturnType<typeof instantVerifier> } {
  const verifier = instantVerifier();
  const jobs = new BulkJobManager({ verifier, yieldAfterMs: 1, greylistRetry: { delaysMs: [] } });
  managers.push(jobs);
  return { jobs, verifier };
}

/** Calls `check` on every event-loop turn until `done` settles; returns what each call returned. */
async function duringTurns<T>(done: Promise<unknown>, check: () => T): Promise<T[]> {
  const seen: T[] = [];
  let over = false;
  const finished = done.then(
    () => {
      over = true;
    },
    () => {
      over = true;
    },
  );
  const turn = () => {
    if (over) return;
    seen.push(check());
    setImmediate(turn);
  };
  setImmediate(turn);
  await finished;
  return seen;
}

describe('a large add in slices', () => {
  it('lets timers and immediates run before it ends, and verifies none of it before its commit', async () => {
    const { jobs, verifier } = manager();
    const { id } = await jobs.create();
    const adding = jobs.add(id, addresses(100_000));
    let timerRan = false;
    setTimeout(() => {
      timerRan = true;
    }, 0);
    const callsDuring = await duringTurns(adding, () => verifier.calls.length);
    expect(timerRan).toBe(true);
    // Several turns ran while the add was under way, and no address of it was handed to the verifier.
    expect(callsDuring.length).toBeGreaterThan(1);
    expect(callsDuring.every((calls) => calls === 0)).toBe(true);
    const job = await adding;
    expect(job.total).toBe(100_000);
    await settle();
    const done = await new Promise((resolve) => {
      const poll = async (): Promise<void> => {
        const now = await jobs.get(id);
        if (now?.status === 'complete') resolve(now);
        else setImmediate(poll);
      };
      void poll();
    });
    expect(done).toMatchObject({ status: 'complete', total: 100_000, completed: 100_000 });
    // Duplicates were verified once: 90,000 distinct addresses.
    expect(verifier.calls.length).toBe(90_000);
    const results = await jobs.results(id, { offset: 9, limit: 1 });
    expect(results[0]?.email).toBe('u4@d4.example'); // position 9 repeats position 4
  });

  it('runs the adds of a job one after the other, in call order, and start waits for them', async () => {
    const { jobs } = manager();
    const { id } = await jobs.create({ autoStart: false });
    const first = jobs.add(id, addresses(50_000, 'a'));
    const second = jobs.add(id, addresses(50_000, 'b'));
    const started = jobs.start(id);
    const order: string[] = [];
    void first.then(() => order.push('first'));
    void second.then(() => order.push('second'));
    void started.then(() => order.push('start'));
    const [a, b, s] = await Promise.all([first, second, started]);
    expect(order).toEqual(['first', 'second', 'start']);
    expect(a.total).toBe(50_000);
    expect(b.total).toBe(100_000);
    expect(s.total).toBe(100_000);
    // Positions are those of call order: the first add's addresses, then the second's.
    await new Promise<void>((resolve) => {
      const poll = async (): Promise<void> => {
        if ((await jobs.get(id))?.status === 'complete') resolve();
        else setImmediate(poll);
      };
      void poll();
    });
    const page = await jobs.results(id, { offset: 49_998, limit: 3 });
    expect(page.map((result) => result.email)).toEqual([
      'a49998@d11.example',
      'a49994@d7.example', // position 49,999 repeats position 49,994
      'b0@d0.example',
    ]);
  });

  it('is undone whole when the manager closes after a turn: the add fails, no address of it is kept', async () => {
    const { jobs, verifier } = manager();
    const { id } = await jobs.create({ emails: ['kept@d1.example'] });
    await new Promise<void>((resolve) => {
      const poll = async (): Promise<void> => {
        if ((await jobs.get(id))?.status === 'complete') resolve();
        else setImmediate(poll);
      };
      void poll();
    });
    const adding = jobs.add(id, addresses(100_000));
    setImmediate(() => void jobs.close());
    await expect(adding).rejects.toMatchObject({ code: 'disposed' });
    const job = await jobs.get(id);
    expect(job).toMatchObject({ total: 1, completed: 1 });
    expect(verifier.calls).toEqual(['kept@d1.example']);
  });

  it('stops with job_not_found when the job is deleted after a turn', async () => {
    const { jobs, verifier } = manager();
    const { id } = await jobs.create();
    const adding = jobs.add(id, addresses(100_000));
    setImmediate(() => void jobs.delete(id));
    await expect(adding).rejects.toMatchObject({ code: 'job_not_found' });
    expect(verifier.calls).toEqual([]);
    expect(await jobs.get(id)).toBeUndefined();
  });

  it('refuses a large list with one bad entry at its end, naming it, after its turns: nothing is added', async () => {
    const { jobs } = manager();
    const { id } = await jobs.create({ autoStart: false, emails: ['x@d1.example'] });
    const list: unknown[] = addresses(100_000);
    list[99_999] = 42;
    await expect(jobs.add(id, list as string[])).rejects.toMatchObject({
      code: 'invalid_request',
      field: 'emails[99999]',
    });
    list[99_999] = 'nul\0@d1.example';
    await expect(jobs.add(id, list as string[])).rejects.toMatchObject({ field: 'emails[99999]' });
    expect(await jobs.get(id)).toMatchObject({ total: 1 });
    expect((await jobs.add(id, ['y@d2.example'])).total).toBe(2);
  });
});
