/**
 * The latest state of the jobs the page shows, shared: one event stream per job (job-stream.ts), whoever asks
 * for it (the job's progress view, the Jobs list), counted so that it stops when nobody looks any more. Polls
 * once a second when the stream cannot be read. A job's last state stays known after its stream ends.
 * @module
 */
import { signal } from '@preact/signals';
import { json } from './api.js';
import { followJob } from './job-stream.js';
import type { Job } from './types.js';

/** The latest known state of each followed job, by id. */
export const liveJobs = signal<ReadonlyMap<string, Job>>(new Map());
/** Why a followed job could not be read (its last error), by id. */
export const liveErrors = signal<ReadonlyMap<string, string>>(new Map());

interface Watch {
  count: number;
  readonly stop: () => void;
}
const watches = new Map<string, Watch>();

/** True once `job` will change no more (until addresses are added). */
export function isFinished(job: Pick<Job, 'status'> | undefined): boolean {
  return job?.status === 'complete' || job?.status === 'failed';
}

/** Shows `job` as the latest state of its id (an answer of the API; the job's events follow). */
export function publish(job: Job): void {
  const next = new Map(liveJobs.value);
  next.set(job.id, job);
  liveJobs.value = next;
}

function fail(id: string, message: string | null): void {
  if (message === null && !liveErrors.value.has(id)) return;
  const next = new Map(liveErrors.value);
  if (message === null) next.delete(id);
  else next.set(id, message);
  liveErrors.value = next;
}

function follow(key: string, id: string): () => void {
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const controller = new AbortController();
  const poll = async () => {
    try {
      const current = await json<Job>(key, `v1/bulk/${encodeURIComponent(id)}`);
      if (stopped) return;
      fail(id, null);
      publish(current);
      if (isFinished(current)) return;
    } catch (failure) {
      if (stopped) return;
      fail(id, (failure as Error).message);
    }
    timer = setTimeout(() => void poll(), 1000);
  };
  const received = (current: Job) => {
    fail(id, null);
    publish(current);
  };
  followJob(key, id, received, controller.signal).then(
    () => {
      if (!stopped && !isFinished(liveJobs.value.get(id))) void poll();
    },
    () => {
      if (!stopped) void poll();
    },
  );
  return () => {
    stopped = true;
    controller.abort();
    clearTimeout(timer);
  };
}

/**
 * Finish now (`POST /v1/bulk/{id}/finish`): the job's waiting greylisting retries end with their greylisted
 * verdict; shows the job the API answers.
 */
export async function finishJob(key: string, id: string): Promise<void> {
  publish(await json<Job>(key, `v1/bulk/${encodeURIComponent(id)}/finish`, { method: 'POST' }));
}

/**
 * Follows job `id` until it is finished, keeping {@link liveJobs} up to date; returns the function that
 * stops looking (the stream closes when the last looker stops).
 */
export function watchJob(key: string, id: string): () => void {
  const existing = watches.get(id);
  if (existing !== undefined) existing.count++;
  else watches.set(id, { count: 1, stop: follow(key, id) });
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const watch = watches.get(id);
    if (watch === undefined || --watch.count > 0) return;
    watches.delete(id);
    watch.stop();
  };
}
