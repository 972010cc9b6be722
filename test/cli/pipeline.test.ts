import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderedMap } from '../../src/cli/pipeline.js';
import { deferred } from '../support/deferred.js';

async function* range(count: number, onPull?: (index: number) => void): AsyncGenerator<number> {
  for (let index = 0; index < count; index++) {
    onPull?.(index);
    yield index;
  }
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('orderedMap', () => {
  it('yields results in source order whatever order they complete in', async () => {
    const out: number[] = [];
    const delays = [5, 0, 3, 1, 4, 2];
    const mapped = orderedMap(
      range(6),
      async (n) => {
        for (let i = 0; i < (delays[n] ?? 0); i++) await tick();
        return n * 10;
      },
      { window: 4 },
    );
    for await (const value of mapped) out.push(value);
    expect(out).toEqual([0, 10, 20, 30, 40, 50]);
  });

  it('never holds more than `window` items taken from the source and not yet yielded', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 0, maxLength: 60 }),
        async (window, delays) => {
          let pulled = 0;
          let yielded = 0;
          let maxHeld = 0;
          let running = 0;
          let maxRunning = 0;
          const source = range(delays.length, () => {
            pulled++;
            maxHeld = Math.max(maxHeld, pulled - yielded);
          });
          const out: number[] = [];
          const mapped = orderedMap(
            source,
            async (n) => {
              running++;
              maxRunning = Math.max(maxRunning, running);
              for (let i = 0; i < (delays[n] ?? 0); i++) await tick();
              running--;
              return n;
            },
            { window },
          );
          for await (const value of mapped) {
            yielded++;
            out.push(value);
          }
          expect(out).toEqual(delays.map((_, index) => index));
          expect(maxHeld).toBeLessThanOrEqual(window);
          expect(maxRunning).toBeLessThanOrEqual(window);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('does not read the source ahead while the head of the window is blocked', async () => {
    const gates = Array.from({ length: 100 }, () => deferred<number>());
    let pulled = 0;
    const mapped = orderedMap(
      range(100, () => {
        pulled++;
      }),
      (n) => gates[n]!.promise,
      { window: 5 },
    );
    const first = mapped.next();
    for (let n = 1; n < 100; n++) gates[n]!.resolve(n);
    for (let i = 0; i < 20; i++) await tick();
    expect(pulled).toBe(5);
    gates[0]!.resolve(0);
    expect(await first).toEqual({ done: false, value: 0 });
    const rest: number[] = [];
    for await (const value of mapped) rest.push(value);
    expect(rest).toHaveLength(99);
  });

  it('on abort yields the results settled before it, up to the first gap, then stops reading', async () => {
    const controller = new AbortController();
    const gates = Array.from({ length: 10 }, () => deferred<number>());
    let pulled = 0;
    const mapped = orderedMap(
      range(10, () => {
        pulled++;
      }),
      (n) => gates[n]!.promise,
      { window: 4, signal: controller.signal },
    );
    const out: number[] = [];
    const done = (async () => {
      for await (const value of mapped) out.push(value);
    })();
    await tick();
    gates[0]!.resolve(0);
    gates[1]!.resolve(1);
    gates[3]!.resolve(3); // after a gap: must not be yielded
    await tick();
    controller.abort();
    for (const [n, gate] of gates.entries()) gate.resolve(n); // settle after the abort: not real answers
    await done;
    expect(out).toEqual([0, 1]);
    expect(pulled).toBeLessThanOrEqual(6);
  });

  it('waits for the calls still running before it returns', async () => {
    const controller = new AbortController();
    const gate = deferred<number>();
    let settled = false;
    const mapped = orderedMap(
      range(3),
      async (n) => {
        if (n === 0) {
          const value = await gate.promise;
          settled = true;
          return value;
        }
        return n;
      },
      { window: 3, signal: controller.signal },
    );
    const done = (async () => {
      for await (const _ of mapped);
    })();
    await tick();
    controller.abort();
    await tick();
    expect(settled).toBe(false);
    gate.resolve(0);
    await done;
    expect(settled).toBe(true);
  });

  it('throws a rejection of the function at its place in the order', async () => {
    const out: number[] = [];
    const mapped = orderedMap(
      range(5),
      async (n) => {
        if (n === 2) throw new Error('boom');
        return n;
      },
      { window: 3 },
    );
    await expect(
      (async () => {
        for await (const value of mapped) out.push(value);
      })(),
    ).rejects.toThrow('boom');
    expect(out).toEqual([0, 1]);
  });

  it('throws an error of the source after the results read before it', async () => {
    async function* failing(): AsyncGenerator<number> {
      yield 1;
      yield 2;
      throw new Error('read failed');
    }
    const out: number[] = [];
    await expect(
      (async () => {
        for await (const value of orderedMap(failing(), async (n) => n, { window: 4 })) out.push(value);
      })(),
    ).rejects.toThrow('read failed');
    expect(out).toEqual([1, 2]);
  });

  it('handles an empty source and a window below one', async () => {
    const out: number[] = [];
    for await (const value of orderedMap(range(0), async (n) => n, { window: 0 })) out.push(value);
    expect(out).toEqual([]);
    for await (const value of orderedMap(range(3), async (n) => n, { window: 0 })) out.push(value);
    expect(out).toEqual([0, 1, 2]);
  });

  it('stops at once when the signal is already aborted', async () => {
    let pulled = 0;
    const out: number[] = [];
    const source = range(5, () => {
      pulled++;
    });
    for await (const value of orderedMap(source, async (n) => n, {
      window: 2,
      signal: AbortSignal.abort(),
    })) {
      out.push(value);
    }
    expect(out).toEqual([]);
    expect(pulled).toBe(0);
  });

  it('closes the source when the consumer stops early', async () => {
    let closed = false;
    async function* source(): AsyncGenerator<number> {
      try {
        for (let n = 0; ; n++) yield n;
      } finally {
        closed = true;
      }
    }
    for await (const value of orderedMap(source(), async (n) => n, { window: 4 })) {
      if (value === 3) break;
    }
    expect(closed).toBe(true);
  });
});
