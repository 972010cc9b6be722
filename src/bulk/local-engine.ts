/**
 * The in-process job engine of `BulkJobManager`: its jobs, their transitions and what they do with a verifier's
 * answer. The work is shared among four objects, each chosen once, in the constructor: the {@link Scheduler}
 * (which verification runs next), the {@link ResultSink} (how results reach the store: memory or durable), the
 * job inputs (in memory, or a durable store's {@link inputWindow}) and the leases (this process's, or a
 * durable store's {@link leaseKeeper}). See docs/architecture.md, "Jobs".
 * @module
 */
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { JobNotFoundError, StoreError } from './errors.js';
import {
  exceptionResult,
  isFinished,
  isResult,
  type LiveJob,
  liveJob,
  recordOf,
  snapshot,
  zeroCounts,
} from './job.js';
import { type JobLeases, leaseKeeper, processLeases } from './leases.js';
import type { JobEvents } from './listeners.js';
import type { ResolvedBulkOptions } from './options.js';
import { RetrySchedule, type WaitingRetry } from './retry.js';
import type { JobRules } from './rules.js';
import type { JobEngine, NewJob, ResultsView, RunnerContext } from './runner.js';
import { Scheduler } from './scheduler.js';
import { durableResults, memoryResults, ResultSink, type SinkContext, storeMessage } from './sink.js';
import type { EncodedSource } from './source.js';
import type { BulkVerifier, Job, JobError, JobEventName, JobList, StoreHealth } from './types.js';
import { isDurableStore } from './types.js';
import { type InputsContext, inputWindow, type JobInputs, memoryInputs } from './window.js';
import type { Task } from './work.js';

/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;
/** Largest time `Date` can represent, in milliseconds. */
const MAX_TIME = 8.64e15;

/** The in-process job engine: jobs are verified here, with the manager's verifier. */
export class LocalEngine implements JobEngine {
  readonly #options: ResolvedBulkOptions;
  readonly #rules: JobRules;
  readonly #events: JobEvents;
  readonly #forgotten: (id: string) => void;
  readonly #ownedVerifier: Verifier | undefined;
  readonly #jobs = new Map<string, LiveJob>();
  readonly #scheduler: Scheduler;
  readonly #sink: ResultSink;
  readonly #inputs: JobInputs;
  readonly #leases: JobLeases;
  #closing = false;
  #closed: Promise<void> | undefined;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  /** True when the store keeps source rows. */
  readonly keepsRows: boolean;

  /** Serves the jobs of a manager with `options`; makes a verifier unless one is given. */
  constructor(options: ResolvedBulkOptions, context: RunnerContext) {
    this.#options = options;
    this.#rules = context.rules;
    this.#events = context.events;
    this.#forgotten = context.forgotten;
    let verifier: BulkVerifier;
    if (options.verifier !== undefined) {
      verifier = options.verifier;
    } else {
      this.#ownedVerifier = createVerifier(options.verifierOptions);
      verifier = this.#ownedVerifier;
    }
    this.#scheduler = new Scheduler(options, verifier, {
      runnable: (job) =>
        job.armed &&
        !job.deleted &&
        !isFinished(job) &&
        !this.#closing &&
        job.work?.hasWork === true &&
        !this.#sink.backlogged(job), // the end of the running flush makes it ready again
      take: (job) => this.#take(job),
      settled: (job, task, outcome, ok) => {
        job.work?.release(task.key);
        this.#record(job, task, outcome, ok);
        this.#sink.settled(job);
        this.#scheduler.ready(job);
      },
    });
    const sinkContext: SinkContext = {
      fail: (job, error) => this.#fail(job, error),
      storeFailed: (job, operation, error) => this.#storeFailed(job, operation, error),
      complete: (job) => this.#complete(job),
      emit: (event, job) => this.#emit(event, job),
      wake: (job) => this.#wake(job),
      ready: (job) => this.#ready(job),
    };
    const inputsContext: InputsContext = {
      enqueue: (job, operation) => this.#sink.enqueue(job, operation),
      scheduleFlush: (job) => this.#sink.scheduleFlush(job),
      ready: (job) => this.#ready(job),
      storeFailed: (job, operation, error) => this.#storeFailed(job, operation, error),
      retries: (job) => this.#scheduleRetries(job),
    };
    const store = options.store;
    const perDomain = options.perDomainConcurrency;
    // The one choice between a durable store and another: from here on, objects, never an `if` per method.
    if (isDurableStore(store)) {
      this.keepsRows = true;
      this.#sink = new ResultSink(store, durableResults(store, sinkContext), sinkContext);
      const window = inputWindow(store, perDomain, inputsContext);
      this.#inputs = window;
      this.#leases = leaseKeeper(store, {
        jobs: this.#jobs,
        closing: () => this.#closing,
        restore: (job) => window.restore(job),
        resumed: (job) => {
          if (job.status === 'processing') this.#sink.scheduleFlush(job);
          window.refill(job);
          this.#wake(job);
        },
        forget: (job) => this.#forget(job),
        wake: (job) => this.#wake(job),
        pump: () => this.#scheduler.pump(),
      });
    } else {
      this.keepsRows = store.putRows !== undefined && store.getRows !== undefined;
      this.#sink = new ResultSink(store, memoryResults(store, sinkContext), sinkContext);
      this.#inputs = memoryInputs(store, perDomain, inputsContext);
      this.#leases = processLeases({
        fail: (job, error) => this.#fail(job, error),
        sync: (job) => this.#sink.sync(job),
      });
    }
    this.#leases.opened.then(
      () => this.#watchRetention(),
      () => {}, // reported by every call that awaits it
    );
  }

  async opened(): Promise<void> {
    await this.#leases.opened;
  }

  /** `memory` for a store that is not durable, else `up` when it answers a trivial query within `timeoutMs`. */
  async storeHealth(timeoutMs: number): Promise<StoreHealth> {
    return this.#leases.health(timeoutMs);
  }

  async fleetHealth(): Promise<undefined> {
    return undefined;
  }

  webhookShare(): undefined {
    return undefined;
  }

  async create(input: NewJob): Promise<Job> {
    this.#assertOpen();
    await this.#leases.whenOpen();
    this.#rules.admitJob(this.#jobs.size);
    const id = this.#newId();
    const job = liveJob({
      id,
      owner: input.owner,
      name: input.name,
      status: 'queued',
      total: 0,
      completed: 0,
      counts: zeroCounts(),
      createdAt: this.#now(),
      startedAt: null,
      completedAt: null,
      error: null,
      armed: input.autoStart,
      source: input.source?.source ?? null,
      work: this.#inputs.newWork(),
      greylistDelaysMs: input.greylistDelaysMs ?? this.#options.greylistDelaysMs,
    });
    this.#scheduleRetries(job);
    this.#jobs.set(id, job);
    // A durable store gets the record and the inputs in one transaction, before anything can start; another
    // store gets the record first (saved as it is once this call returns: the chain runs later), then any rows.
    const emails = input.emails;
    const recordSaved = this.#inputs.carriesRecord(emails.length)
      ? undefined
      : this.#sink.enqueue(job, () => this.#options.store.saveJob(recordOf(job)));
    const inputsSaved = this.#append(job, emails, input.source?.rows);
    const created = snapshot(job); // as created: queued (the specification's creation response)
    const completed = this.#completeIfEmpty(job);
    try {
      await recordSaved;
      await inputsSaved;
    } catch (error) {
      this.#forget(job);
      throw new StoreError('save the job', error);
    }
    job.dirty = false;
    // Attached before the job can start, so that no event is missed.
    if (input.attach !== undefined) await input.attach(id);
    if (completed) this.#emit('complete', job);
    this.#ready(job);
    return created;
  }

  async add(
    id: string,
    owner: string | null,
    emails: readonly string[],
    source: EncodedSource | undefined,
  ): Promise<Job> {
    this.#assertOpen();
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    this.#leases.assertHeld(job);
    this.#rules.admitAdd(job, owner, emails.length, source);
    let inputsSaved: Promise<void> | undefined;
    if (emails.length > 0) {
      if (job.status === 'complete') this.#reopen(job);
      job.source ??= source?.source ?? null;
      inputsSaved = this.#append(job, emails, source?.rows);
      this.#ready(job);
    }
    if (inputsSaved !== undefined) {
      try {
        await inputsSaved;
      } catch (error) {
        this.#storeFailed(job, 'save the addresses', error);
        // Another process took the job over: a conflict for the caller (HTTP 409), not a broken store.
        if (isMailvetError(error) && error.code === 'lease_lost') throw error;
        throw new StoreError('save the addresses', error);
      }
    }
    await this.#sink.sync(job);
    return snapshot(job);
  }

  async start(id: string, owner: string | null): Promise<Job> {
    this.#assertOpen();
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    this.#leases.assertHeld(job);
    this.#rules.admitStart(job, owner);
    job.armed = true;
    const completed = this.#completeIfEmpty(job);
    this.#ready(job);
    await this.#sink.sync(job);
    if (completed) this.#emit('complete', job);
    return snapshot(job);
  }

  async get(id: string, owner: string | null): Promise<Job | undefined> {
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner));
    if (job === undefined) return undefined;
    await this.#leases.current(job);
    await this.#sink.sync(job);
    return job.deleted ? undefined : snapshot(job);
  }

  async list(owner: string | null, offset: number, limit: number): Promise<JobList> {
    await this.#leases.whenOpen();
    const visible: LiveJob[] = [];
    for (const job of this.#jobs.values()) if (job.owner === owner) visible.push(job);
    const page = visible.slice(offset, offset + limit);
    await Promise.all(page.map((job) => this.#leases.current(job)));
    await Promise.all(page.map((job) => this.#sink.sync(job)));
    return { jobs: page.filter((job) => !job.deleted).map(snapshot), total: visible.length };
  }

  async view(id: string, owner: string | null): Promise<ResultsView> {
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    await this.#leases.current(job);
    await this.#sink.sync(job);
    if (job.deleted) throw new JobNotFoundError(id);
    const store = this.#options.store;
    return {
      status: job.status,
      total: job.total,
      source: job.source,
      snapshot: () => snapshot(job),
      results: (offset, count) => this.#sink.read(job, offset, count),
      rows: async (offset, count) => {
        try {
          return await this.#sink.enqueue(job, () => store.getRows?.(job.id, offset, count) ?? []);
        } catch (error) {
          throw new StoreError('read the rows', error);
        }
      },
    };
  }

  stream(id: string, owner: string | null, offset: number): AsyncIterable<VerificationResult> {
    if (this.#leases.recovering()) return this.#streamOnceOpen(id, owner, offset);
    const job = this.#visible(id, owner);
    if (job !== undefined) return this.#sink.stream(job, offset);
    // Not in memory: another process may have made it since this one opened (a durable store), else it is missing.
    const adopting = typeof id === 'string' && !this.#jobs.has(id) ? this.#leases.adopt(id) : undefined;
    if (adopting === undefined) missing(id);
    adopting.catch(() => {}); // reported by the stream when it is read
    return this.#streamAdopted(id, owner, offset, adopting);
  }

  async *#streamAdopted(
    id: string,
    owner: string | null,
    offset: number,
    adopting: Promise<LiveJob | undefined>,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    const job = await adopting;
    if (job === undefined || job.owner !== owner || job.deleted) missing(id);
    yield* this.#sink.stream(job, offset);
  }

  async *#streamOnceOpen(
    id: string,
    owner: string | null,
    offset: number,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    yield* this.#sink.stream(job, offset);
  }

  async delete(id: string, owner: string | null): Promise<void> {
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    this.#forget(job);
    this.#forgotten(id);
    // Its verifications in flight give their slots back now; their answers, if they ever come, are dropped.
    this.#scheduler.cancel(job);
    try {
      await this.#sink.enqueue(job, () => this.#options.store.deleteJob(id));
    } catch (error) {
      throw new StoreError('delete the job', error);
    }
  }

  /**
   * Takes no more work, lets the verifications in flight finish and stores their results, fails the jobs that are
   * not complete (a durable store's stay as they are, their leases given up), disposes the verifier it made and
   * closes the store. Idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= this.#shutDown();
    return this.#closed;
  }

  async #shutDown(): Promise<void> {
    this.#closing = true;
    this.#scheduler.stop();
    clearInterval(this.#sweepTimer);
    this.#leases.stop();
    await this.#leases.opened.catch(() => {});
    await this.#scheduler.idle();
    const jobs = [...this.#jobs.values()];
    await Promise.all(jobs.map((job) => this.#sink.sync(job)));
    await this.#leases.leave(jobs);
    await this.#ownedVerifier?.dispose();
    try {
      await this.#options.store.close?.();
    } catch (error) {
      throw new StoreError('close', error);
    }
  }

  // --- lookup ---

  #assertOpen(): void {
    if (this.#closing) throw new MailvetError('disposed', 'the job manager has been closed');
  }

  #visible(id: unknown, owner: string | null): LiveJob | undefined {
    if (typeof id !== 'string') return undefined;
    const job = this.#jobs.get(id);
    return job !== undefined && job.owner === owner ? job : undefined;
  }

  /**
   * A job not in memory that another process created since this one opened (read from a durable store), if it is
   * `owner`'s; `undefined` otherwise, and at once without a durable store or when the id is known here (another
   * owner's job, which stays invisible).
   */
  async #adopted(id: unknown, owner: string | null): Promise<LiveJob | undefined> {
    if (typeof id !== 'string' || this.#jobs.has(id)) return undefined;
    const job = await this.#leases.adopt(id);
    return job !== undefined && job.owner === owner && !job.deleted ? job : undefined;
  }

  #newId(): string {
    const id = this.#rules.newId();
    if (this.#jobs.has(id)) throw new OptionsError('ids', 'returned an id that is in use');
    return id;
  }

  #now(): number {
    const now = this.#options.clock.now();
    if (typeof now !== 'number' || !Number.isFinite(now) || Math.abs(now) > MAX_TIME) {
      throw new OptionsError('clock', 'now() must return milliseconds since the epoch');
    }
    return now;
  }

  // --- retention ---

  /** Starts the background sweep that forgets finished jobs older than `retentionMs` (0: never). */
  #watchRetention(): void {
    const retention = this.#options.retentionMs;
    if (retention === 0 || this.#closing) return;
    this.#sweep();
    const every = Math.min(SWEEP_EVERY_MAX_MS, Math.max(1000, Math.floor(retention / 2)));
    this.#sweepTimer = setInterval(() => this.#sweep(), every);
    this.#sweepTimer.unref?.();
  }

  /** Deletes, from memory and the store, each finished job whose `completed_at` is `retentionMs` ago. */
  #sweep(): void {
    const before = this.#options.clock.now() - this.#options.retentionMs;
    for (const job of [...this.#jobs.values()]) {
      if (!isFinished(job) || job.completedAt === null || job.completedAt > before || job.inFlight > 0)
        continue;
      this.#forget(job);
      this.#forgotten(job.id);
      void this.#sink
        .enqueue(job, () => this.#options.store.deleteJob(job.id))
        .catch(() => {
          // The store refused: the job is gone from this manager; a durable store keeps it until the next open.
        });
    }
  }

  // --- work ---

  /**
   * Appends addresses to a job: they go to its inputs (its work, or the store's window, whose write carries the
   * record); returns the store write the caller waits for, if any.
   */
  #append(job: LiveJob, emails: readonly string[], rows?: readonly string[]): Promise<void> | undefined {
    if (emails.length === 0) return undefined;
    const first = job.total;
    job.total += emails.length;
    job.dirty = true;
    const saved = this.#inputs.append(job, first, emails, rows);
    this.#wake(job);
    return saved;
  }

  /** The job's greylisting retries, made if the job has delays and none yet. */
  #scheduleRetries(job: LiveJob): RetrySchedule | null {
    if (job.retries !== null || job.greylistDelaysMs.length === 0) return job.retries;
    job.retries = new RetrySchedule(this.#options.clock, job.greylistDelaysMs, (due) =>
      this.#retry(job, due),
    );
    return job.retries;
  }

  /** The store failed `operation`: a lost lease hands the job to its new holder, anything else fails it. */
  #storeFailed(job: LiveJob, operation: string, error: unknown): void {
    if (isMailvetError(error) && error.code === 'lease_lost') {
      this.#forget(job); // another manager took the job over: it is that manager's now
      return;
    }
    job.storeBroken = true;
    this.#fail(job, { code: 'store_error', message: storeMessage(operation, error) });
  }

  /** Offers the job to the scheduler and starts verifications. */
  #ready(job: LiveJob): void {
    this.#scheduler.ready(job);
    this.#scheduler.pump();
  }

  /** The job's next task for the scheduler; a `queued` job becomes `processing` with its first one. */
  #take(job: LiveJob): Task | undefined {
    if (job.deleted || isFinished(job) || job.work === null || this.#sink.backlogged(job)) return undefined;
    const task = job.work.take();
    this.#inputs.refill(job); // reads the next window while this one runs
    if (task === undefined) return undefined;
    if (job.status === 'queued') {
      job.status = 'processing';
      job.startedAt = this.#now();
      job.dirty = true;
      this.#sink.scheduleFlush(job);
    }
    return task;
  }

  /** What a verification's answer (or error) makes of its position: final, or waiting for a greylisting retry. */
  #record(job: LiveJob, task: Task, outcome: unknown, ok: boolean): void {
    if (task.attempt > 0 && !job.interim.delete(task.position)) return; // its greylisted result was kept already
    if (!ok && isMailvetError(outcome) && outcome.code === 'disposed') {
      this.#fail(job, { code: 'disposed', message: 'the verifier was disposed before the job finished' });
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
      this.#sink.waiting(job, { position: task.position, attempt: retry.attempt, dueAt, result });
      return;
    }
    this.#produce(job, task.position, result);
  }

  #retry(job: LiveJob, due: readonly WaitingRetry[]): void {
    if (job.deleted || isFinished(job) || job.work === null) return;
    for (const { task } of due) job.work.retry(task);
    this.#ready(job);
  }

  /** A final result for `position` (and the later positions of the same address). */
  #produce(job: LiveJob, position: number, result: VerificationResult): void {
    job.bufferPositions.push(position);
    job.bufferResults.push(result);
    const followers = job.work?.settle(position);
    if (followers === undefined) return;
    for (const follower of followers) {
      job.bufferPositions.push(follower);
      job.bufferResults.push(result);
    }
  }

  // --- transitions ---

  #fail(job: LiveJob, error: JobError): void {
    if (isFinished(job) || job.deleted) return;
    job.status = 'failed';
    job.error = error;
    job.completedAt = this.#now();
    job.dirty = true;
    job.work?.dropQueued();
    job.retries?.clear();
    for (const [position, result] of job.interim) this.#produce(job, position, result);
    job.interim.clear();
    this.#sink.scheduleFlush(job);
    this.#emit('failed', job);
    this.#wake(job);
  }

  #complete(job: LiveJob): void {
    job.status = 'complete';
    job.completedAt = this.#now();
    job.dirty = true;
  }

  /**
   * A started job with no address is complete: there is nothing to wait for. Returns true when it completed
   * it; the caller emits `complete` once the store has the job.
   */
  #completeIfEmpty(job: LiveJob): boolean {
    if (!job.armed || job.total > 0 || job.status !== 'queued') return false;
    job.startedAt = this.#now();
    this.#complete(job);
    return true;
  }

  /** A `complete` job that gets addresses goes back to `processing` (docs/bulk.md, the state machine). */
  #reopen(job: LiveJob): void {
    job.status = 'processing';
    job.startedAt ??= this.#now();
    job.completedAt = null;
    job.dirty = true;
    job.work ??= this.#inputs.newWork();
    this.#scheduleRetries(job);
  }

  #forget(job: LiveJob): void {
    job.deleted = true;
    this.#jobs.delete(job.id);
    job.retries?.clear();
    job.work = null;
    job.interim.clear();
    job.bufferPositions = [];
    job.bufferResults = [];
    job.unsaved = null;
    this.#wake(job);
  }

  // --- events ---

  #wake(job: LiveJob): void {
    job.version++;
    if (job.waiters.length === 0) return;
    const waiters = job.waiters;
    job.waiters = [];
    for (const resolve of waiters) resolve();
  }

  #emit(event: JobEventName, job: LiveJob): void {
    if (this.#events.has(event)) this.#events.emit(event, snapshot(job));
  }
}

/** Throws `job_not_found` for `id`. */
function missing(id: unknown): never {
  throw new JobNotFoundError(String(id));
}
