/**
 * The live streams of a handler (`GET /v1/bulk/{id}/events`), which `Handler.drain()` ends when the server shuts
 * down.
 * @module
 */
import type { LiveStreams } from './context.js';

/** The handler's {@link LiveStreams}, with `drain()` that ends them all and every later one. */
export function liveStreams(): LiveStreams & { drain(): void } {
  const ends = new Set<() => void>();
  let draining = false;
  return {
    get draining() {
      return draining;
    },
    add(end) {
      ends.add(end);
      return () => {
        ends.delete(end);
      };
    },
    drain() {
      draining = true;
      for (const end of [...ends]) end();
      ends.clear();
    },
  };
}
