import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchAbort, watchOptionalAbort } from '../src/abort-watch.js';

describe('watchAbort', () => {
  it('keeps one listener on a signal however many watch it, and calls each watcher once on abort', () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const stops = Array.from({ length: 1000 }, (_, i) => watchAbort(controller.signal, () => calls.push(i)));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    for (const stop of stops.slice(0, 990)) stop();
    controller.abort();
    expect(calls).toEqual([990, 991, 992, 993, 994, 995, 996, 997, 998, 999]);
    controller.signal.dispatchEvent(new Event('abort'));
    expect(calls).toHaveLength(10);
  });

  it('leaves nothing behind for watchers that stopped, and a new watcher after the abort is never called', () => {
    const controller = new AbortController();
    for (let i = 0; i < 100; i++) watchAbort(controller.signal, () => undefined)();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    let late = 0;
    watchAbort(controller.signal, () => late++);
    expect(late).toBe(0);
  });

  it('watches nothing for no signal', () => {
    expect(() => watchOptionalAbort(undefined, () => undefined)()).not.toThrow();
  });
});
