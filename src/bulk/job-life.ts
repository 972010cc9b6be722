/**
 * What happens to one job of the in-process engine: its transitions (processing, complete, failed, reopened,
 * forgotten), what a verifier's answer makes of a position (final, or waiting for a greylisting retry), and the
 * wake-ups and events that follow. It reaches the engine's other objects through a small {@link LifeContext}.
 * @module
 */
import { isMailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import { unretriedResult } from './finish.js';
import { exceptionResult, isFinished, isResult, type LiveJob, snapshot } from './job.js';
import type { Clock, JobError, JobEventName, StoredRetry } from './job-types.js';
import type { JobEvents } from './listeners.js';
import { RetrySchedule, type WaitingRetry } from './retry.js';
import { storeMessage } from './sink.js';
import type { JobWork, Task } from './work.js';

/** Largest time `Date` can represent, in milliseconds. */
const MAX_TIME = 8.64e15;

/** What a job's life reaches of the engine. */
export interface LifeContext {
  /** The engine's jobs by id (a forgotten job leaves it). */
  readonly jobs: Map<string, LiveJob>;
  readonly clock: Clock;
  /** The manager's listener table. */
  readonly events: JobEvents;
  /** Flushes the job soon. */
  flush(job: LiveJob): void;
  /** A greylisted position starts waiting for its retry (the sink writes it with the next commit). */
  waiting(job: LiveJob, retry: StoredRetry): void;
  /** A new job's pending work. */
  newWork(): JobWork;
  /** Offers the job to the scheduler and starts verifications. */
  ready(job: LiveJob): void;
}

/** The transitions of the engine's jobs. */
export class JobLife {
  readonly #context: LifeContext;

  constructor(context: LifeContext) {
    this.#context = context;
  }

  /** The job's greylisting retries, made if the job has delays and none yet. */
  scheduleRetries(job: LiveJob): RetrySchedule | null {
    if (job.retries !== null || job.greylistDelaysMs.length === 0) return job.retries;
    job.retries = new RetrySchedule(this.#context.clock, job.greylistDelaysMs, (due) => this.retry(job, due));
    return job.retries;
  }

  /** The store failed `operation`: a lost lease hands the job to its new holder, anything else fails it. */
  storeFailed(job: LiveJob, operation: string, error: unknown): void {
    if (isMailvetError(error) && error.code === 'lease_lost') {
      this.forget(job); // another manager took the job over: it is that manager's now
      return;
    }
    job.storeBroken = true;
    this.fail(job, { code: 'store_error', message: storeMessage(operation, error) });
  }

  /** What a verification's answer (or error) makes of its position: final, or waiting for a greylisting retry. */
  record(job: LiveJob, task: Task, outcome: unknown, ok: boolean): void {
    if (task.attempt > 0 && !job.interim.delete(task.position)) return; // its greylisted result was kept already
    if (!ok && isMailvetError(outcome) && outcome.code === 'disposed') {
      this.fail(job, { code: 'disposed', message: 'the verifier was disposed before the job finished' });
      return;
    }
    const result = ok && isResult(outcome) ? outcome : exceptionResult(task.email);
    if (
      result.sub_status === 'greylisted' &&
      job.retries !== null &&
      task.attempt < job.greylistDelaysMs.length &&
      !isFinished(job)
    ) {
      job.interim.set(task.position, result);
      const retry = { ...task, attempt: task.attempt + 1 };
      const dueAt = job.retries.add(retry);
      this.#context.waiting(job, { position: task.position, attempt: retry.attempt, dueAt, result });
      return;
    }
    this.produce(job, task.position, result);
  }

  /**
   * Finish now: the job's waiting greylisting retries end with their last greylisted result (its `reason` says no
   * retry was made), and the job retries nothing from now on (its delays become `[]`, saved with its record, so a
   * restart does not bring them back). Retries already running and addresses not yet verified still run; the job
   * completes when they are final, at once when nothing else is left.
   */
  finish(job: LiveJob): void {
    job.greylistDelaysMs = [];
    job.dirty = true;
    for (const { task, due } of job.retries?.drain() ?? []) {
      const result = job.interim.get(task.position);
      if (result === undefined) continue;
      job.interim.delete(task.position);
      this.produce(job, task.position, unretriedResult(result, due));
    }
    this.#context.flush(job);
  }

  retry(job: LiveJob, due: readonly WaitingRetry[]): void {
    if (job.deleted || isFinished(job) || job.work === null) return;
    for (const { task } of due) job.work.retry(task);
    this.#context.ready(job);
  }

  /** A final result for `position` (and the later positions of the same address). */
  produce(job: LiveJob, position: number, result: VerificationResult): void {
    job.bufferPositions.push(position);
    job.bufferResults.push(result);
    const followers = job.work?.settle(position);
    if (followers === undefined) return;
    for (const follower of followers) {
      job.bufferPositions.push(follower);
      job.bufferResults.push(result);
    }
  }

  fail(job: LiveJob, error: JobError): void {
    if (isFinished(job) || job.deleted) return;
    job.status = 'failed';
    job.error = error;
    job.completedAt = this.now();
    job.dirty = true;
    job.work?.dropQueued();
    job.retries?.clear();
    for (const [position, result] of job.interim) this.produce(job, position, result);
    job.interim.clear();
    this.#context.flush(job);
    this.emit('failed', job);
    this.wake(job);
  }

  complete(job: LiveJob): void {
    job.status = 'complete';
    job.completedAt = this.now();
    job.dirty = true;
  }

  /**
   * A started job with no address is complete: there is nothing to wait for. Returns true when it completed
   * it; the caller emits `complete` once the store has the job.
   */
  completeIfEmpty(job: LiveJob): boolean {
    if (!job.armed || job.total > 0 || job.status !== 'queued') return false;
    job.startedAt = this.now();
    this.complete(job);
    return true;
  }

  /** A `complete` job that gets addresses goes back to `processing` (docs/bulk.md, the state machine). */
  reopen(job: LiveJob): void {
    job.status = 'processing';
    job.startedAt ??= this.now();
    job.completedAt = null;
    job.dirty = true;
    job.work ??= this.#context.newWork();
    this.scheduleRetries(job);
  }

  forget(job: LiveJob): void {
    job.deleted = true;
    this.#context.jobs.delete(job.id);
    job.retries?.clear();
    job.work = null;
    job.interim.clear();
    job.bufferPositions = [];
    job.bufferResults = [];
    job.unsaved = null;
    this.wake(job);
  }

  wake(job: LiveJob): void {
    job.version++;
    if (job.waiters.length === 0) return;
    const waiters = job.waiters;
    job.waiters = [];
    for (const resolve of waiters) resolve();
  }

  emit(event: JobEventName, job: LiveJob): void {
    if (this.#context.events.has(event)) this.#context.events.emit(event, snapshot(job));
  }

  now(): number {
    const now = this.#context.clock.now();
    if (typeof now !== 'number' || !Number.isFinite(now) || Math.abs(now) > MAX_TIME) {
      throw new OptionsError('clock', 'now() must return milliseconds since the epoch');
    }
    return now;
  }
}
