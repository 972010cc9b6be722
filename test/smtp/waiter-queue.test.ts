import { describe, expect, it } from 'vitest';
import { type Queued, WaiterQueue } from '../../src/smtp/waiter-queue.js';

const item = (name: string): Queued & { name: string } => ({ name, queued: false, slot: -1 });

describe('WaiterQueue', () => {
  it('keeps order, removes any member, and puts a requeued one at the front', () => {
    const queue = new WaiterQueue<ReturnType<typeof item>>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(item) as [
      ReturnType<typeof item>,
      ReturnType<typeof item>,
      ReturnType<typeof item>,
      ReturnType<typeof item>,
    ];
    for (const member of [a, b, c]) queue.push(member);
    expect(queue.remove(b)).toBe(true);
    expect(queue.remove(b)).toBe(false);
    queue.unshift(d);
    expect([...queue].map((member) => member.name)).toEqual(['d', 'a', 'c']);
    expect(queue.length).toBe(3);
    expect(queue.remove(d) && queue.remove(a)).toBe(true);
    expect([...queue].map((member) => member.name)).toEqual(['c']);
    expect(queue.drain().map((member) => member.name)).toEqual(['c']);
    expect(queue.length).toBe(0);
    expect(c.queued).toBe(false);
  });

  it('matches a plain array model across compactions, with members removed at the front and inside', () => {
    const queue = new WaiterQueue<ReturnType<typeof item>>();
    const model: ReturnType<typeof item>[] = [];
    for (let index = 0; index < 6000; index++) {
      const member = item(String(index));
      queue.push(member);
      model.push(member);
      if (index % 3 === 2) {
        const front = queue[Symbol.iterator]().next().value as ReturnType<typeof item>;
        expect(front).toBe(model[0]);
        queue.remove(front);
        model.shift();
      }
      if (index % 7 === 6 && model.length > 2) {
        const inside = model[Math.floor(model.length / 2)]!;
        queue.remove(inside);
        model.splice(model.indexOf(inside), 1);
      }
      if (index % 997 === 0) expect([...queue]).toEqual(model);
    }
    expect([...queue]).toEqual(model);
    expect(queue.length).toBe(model.length);
  });

  it('lets a walk go on while members are removed under it', () => {
    const queue = new WaiterQueue<ReturnType<typeof item>>();
    const members = ['a', 'b', 'c', 'd'].map(item);
    for (const member of members) queue.push(member);
    const seen: string[] = [];
    for (const member of queue) {
      seen.push(member.name);
      queue.remove(member);
      if (member.name === 'a') queue.remove(members[2]!);
    }
    expect(seen).toEqual(['a', 'b', 'd']);
    expect(queue.length).toBe(0);
  });
});
