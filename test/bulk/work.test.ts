import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Deque } from '../../src/bulk/deque.js';
import { domainKey, JobWork, type Task } from '../../src/bulk/work.js';

function takeAll(work: JobWork): Task[] {
  const tasks: Task[] = [];
  for (let task = work.take(); task !== undefined; task = work.take()) tasks.push(task);
  return tasks;
}

describe('domainKey', () => {
  it('is the lower-cased text after the last @, or empty', () => {
    expect(domainKey('a@B.Example')).toBe('b.example');
    expect(domainKey('"a@b"@c.example')).toBe('c.example');
    expect(domainKey('no at sign')).toBe('');
    expect(domainKey('trailing@')).toBe('');
  });
});

describe('JobWork', () => {
  it('hands out a batch grouped by domain, domains in order of first appearance', () => {
    const work = new JobWork(100);
    work.add(['a@one', 'b@two', 'c@one', 'd@three', 'e@two'], 0);
    expect(takeAll(work).map((task) => task.email)).toEqual(['a@one', 'c@one', 'b@two', 'e@two', 'd@three']);
    expect(work.hasWork).toBe(false);
  });

  it('caps the tasks in flight per domain, except for inputs without a domain', () => {
    const work = new JobWork(2);
    work.add(['a@one', 'b@one', 'c@one', 'x', 'y', 'z', 'd@two'], 0);
    const first = takeAll(work).map((task) => task.email);
    expect(first).toEqual(['a@one', 'b@one', 'x', 'y', 'z', 'd@two']);
    expect(work.take()).toBeUndefined();
    expect(work.hasWork).toBe(false); // c waits for a slot of its domain
    expect(work.release('two')).toBe(false);
    expect(work.release('one')).toBe(true);
    expect(work.hasWork).toBe(true);
    expect(work.take()?.email).toBe('c@one');
    expect(work.hasWork).toBe(false);
  });

  it('numbers positions from `first` and folds duplicates onto the first occurrence', () => {
    const work = new JobWork(10);
    work.add(['a@x', 'b@x', 'a@x'], 5);
    expect(takeAll(work).map((task) => [task.email, task.position])).toEqual([
      ['a@x', 5],
      ['b@x', 6],
    ]);
    work.add(['a@x'], 8); // the first a is still pending: a follower
    expect(work.settle(5)).toEqual([7, 8]);
    expect(work.settle(5)).toBeUndefined();
    work.add(['a@x', 'b@x'], 9); // a is final now: a copy; b is pending: a follower
    expect(work.copies).toEqual([5, 9]);
    expect(work.settle(6)).toEqual([10]);
    expect(work.take()).toBeUndefined();
  });

  it('serves retries ahead of the main queue, keeping their attempt number', () => {
    const work = new JobWork(1);
    work.add(['a@x', 'b@x'], 0);
    const a = work.take()!;
    work.release('x');
    work.retry({ ...a, attempt: 2 });
    expect(work.take()).toEqual({ position: 0, email: 'a@x', key: 'x', attempt: 2 });
    work.release('x');
    expect(work.take()?.email).toBe('b@x');
  });

  it('drops queued work on dropQueued but still tells the followers of a task in flight', () => {
    const work = new JobWork(1);
    work.add(['a@x', 'a@x', 'b@x'], 0);
    work.take();
    work.dropQueued();
    expect(work.hasWork).toBe(false);
    expect(work.take()).toBeUndefined();
    expect(work.settle(0)).toEqual([1]);
  });

  it('keeps every task exactly once through compaction of a long queue', () => {
    const work = new JobWork(1);
    const count = 150_000;
    work.add(
      Array.from({ length: count }, (_, i) => `u${i}`),
      0,
    );
    let seen = 0;
    let inOrder = true;
    for (let task = work.take(); task !== undefined; task = work.take()) {
      if (task.position !== seen || task.email !== `u${seen}`) inOrder = false;
      seen++;
    }
    expect(inOrder).toBe(true);
    expect(seen).toBe(count);
  });
});

describe('Deque', () => {
  it('behaves like an array queue under any sequence of pushes and shifts (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.option(fc.integer(), { nil: undefined }), { maxLength: 300 }), (steps) => {
        const deque = new Deque<number>();
        const model: number[] = [];
        for (const step of steps) {
          if (step === undefined) expect(deque.shift()).toBe(model.shift());
          else {
            deque.push(step);
            model.push(step);
          }
          expect(deque.length).toBe(model.length);
          expect(deque.peek()).toBe(model[0]);
        }
        deque.clear();
        expect(deque.length).toBe(0);
        expect(deque.shift()).toBeUndefined();
      }),
    );
  });
});

describe('JobWork.stage', () => {
  it('hands out nothing staged before commit; commit queues it by domain with duplicates following', () => {
    const work = new JobWork(4);
    work.add(['a@x.example'], 0);
    const emails = ['b@y.example', 'c@x.example', 'a@x.example', 'b@y.example'];
    const staged = work.stage(1, emails);
    staged.push(0, 2);
    expect(work.take()?.email).toBe('a@x.example');
    expect(work.take()).toBeUndefined(); // the staged part is not visible yet
    expect(work.settle(0)).toBeUndefined(); // and position 3 (a repeat of 0) is no follower yet
    staged.push(2, 4);
    expect(staged.spill(1)).toBe(false); // b@y.example moves to the hidden tail of the queue
    expect(work.take()).toBeUndefined();
    expect(work.queued).toBe(0);
    staged.commit();
    // Position 3 repeats position 0, final by now: a copy; position 4 repeats position 1: a follower.
    expect(work.copies).toEqual([0, 3]);
    expect([work.take()?.position, work.take()?.position]).toEqual([1, 2]);
    expect(work.settle(1)).toEqual([4]);
  });

  it('abort forgets what the add saw first, so that a later add of the same addresses queues them', () => {
    const work = new JobWork(4);
    work.add(['a@x.example'], 0);
    const staged = work.stage(1, ['a@x.example', 'b@x.example']);
    staged.push(0, 2);
    expect(staged.spill(5)).toBe(true);
    staged.abort();
    staged.abort(); // idempotent
    expect(() => staged.commit()).toThrow(/committed or aborted/);
    work.add(['b@x.example', 'a@x.example'], 1);
    expect(work.take()?.email).toBe('a@x.example');
    expect(work.take()).toMatchObject({ position: 1, email: 'b@x.example' });
    expect(work.take()).toBeUndefined(); // position 2 follows position 0
    expect(work.settle(0)).toEqual([2]);
  });
});
