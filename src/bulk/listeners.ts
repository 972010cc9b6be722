/**
 * The one listener table of a `BulkJobManager`: `on()` adds to it, every job engine tells it.
 * @module
 */
import { JobInputError } from './errors.js';
import type { Job, JobEventName, JobListener } from './job-types.js';

/** The events a manager tells, in the order the error message lists them. */
export const JOB_EVENTS: readonly JobEventName[] = Object.freeze([
  'created',
  'started',
  'progress',
  'complete',
  'failed',
]);

/** What an engine needs of the listener table: whether anyone listens, and telling them. */
export interface JobEvents {
  /** True when `event` has a listener (an engine skips building the job's snapshot otherwise). */
  has(event: JobEventName): boolean;
  /**
   * Tells `event`'s listeners `job`. A listener that throws does not affect the job or the other listeners: its
   * error is thrown again in a microtask of its own.
   */
  emit(event: JobEventName, job: Job): void;
}

/** The listeners of a manager's events. */
export class JobListeners implements JobEvents {
  readonly #listeners: Record<JobEventName, Set<JobListener>> = {
    created: new Set(),
    started: new Set(),
    progress: new Set(),
    complete: new Set(),
    failed: new Set(),
  };

  /** Subscribes `listener` to `event` (each checked); returns a function that unsubscribes it. */
  on(event: JobEventName, listener: JobListener): () => void {
    if (!JOB_EVENTS.includes(event))
      throw new JobInputError('event', `must be one of ${JOB_EVENTS.join(', ')}`);
    if (typeof listener !== 'function') throw new JobInputError('listener', 'must be a function');
    const listeners = this.#listeners[event];
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  has(event: JobEventName): boolean {
    return this.#listeners[event].size > 0;
  }

  emit(event: JobEventName, job: Job): void {
    for (const listener of [...this.#listeners[event]]) {
      try {
        listener(job);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
