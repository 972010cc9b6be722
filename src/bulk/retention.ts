/**
 * The retention sweep of a {@link LocalEngine}: finished jobs older than `retentionMs` are forgotten, from memory
 * and from the store, by a background timer that never holds the process open.
 * @module
 */
import { isFinished, type LiveJob } from './job.js';
import type { Clock } from './types.js';

/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;

/** What the sweep reads and does of the engine. */
export interface RetentionContext {
  /** The engine's jobs by id. */
  readonly jobs: ReadonlyMap<string, LiveJob>;
  /** The engine's clock. */
  readonly clock: Clock;
  /** How long a finished job is kept, in milliseconds; `0`: for ever. */
  readonly retentionMs: number;
  /** Forgets a job whose time is up: from memory, from the manager and from the store. */
  expire(job: LiveJob): void;
}

/** The background sweep: `start()` sweeps now and then every half retention (at most hourly); `stop()` ends it. */
export interface RetentionSweep {
  start(): void;
  stop(): void;
}

/** A sweep that expires each finished job whose `completed_at` is `retentionMs` ago and that has nothing in flight. */
export function retentionSweep(context: RetentionContext): RetentionSweep {
  let timer: ReturnType<typeof setInterval> | undefined;
  let stopped = false;
  const sweep = (): void => {
    const before = context.clock.now() - context.retentionMs;
    for (const job of [...context.jobs.values()]) {
      if (!isFinished(job) || job.completedAt === null || job.completedAt > before || job.inFlight > 0)
        continue;
      context.expire(job);
    }
  };
  return {
    start() {
      const retention = context.retentionMs;
      if (retention === 0 || stopped) return;
      sweep();
      const every = Math.min(SWEEP_EVERY_MAX_MS, Math.max(1000, Math.floor(retention / 2)));
      timer = setInterval(sweep, every);
      timer.unref?.();
    },
    stop() {
      stopped = true;
      clearInterval(timer);
    },
  };
}
