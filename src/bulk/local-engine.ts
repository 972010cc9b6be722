/**
 * The in-process job engine of `BulkJobManager`: its jobs and the calls on them. The work is shared among objects
 * made in the constructor: {@link JobLife} (a job's transitions, what an answer makes of a position), the
 * {@link Scheduler} (which verification runs next), and three chosen once, memory or durable: the
 * {@link ResultSink}'s store writes, the job inputs (in memory, or a durable store's {@link inputWindow}) and the
 * leases (this process's, or a durable store's {@link leaseKeeper}). See docs/architecture.md, "Jobs".
 * @module
 */
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { JobFinishedError, JobNotFoundError, StoreError } from './errors.js';
import { isFinished, type LiveJob, liveJob, recordOf, snapshot, zeroCounts } from './job.js';
import { JobLife } from './job-life.js';
import type { BulkVerifier, Job, JobList, StoreHealth } from './job-types.js';
import { isDurableStore } from './job-types.js';
import { type JobLeases, leaseKeeper, processLeases } from './leases.js';
import type { ResolvedBulkOptions } from './options.js';
import type { JobRules } from './rules.js';
import type { JobEngine, NewJob, ResultsView, RunnerContext } from './runner.js';
import { Scheduler } from './scheduler.js';
import { durableResults, memoryResults, ResultSink, type SinkContext } from './sink.js';
import type { EncodedSource } from './source.js';
import { AddStopped, type InputsContext, inputWindow, type JobInputs, memoryInputs } from './window.js';
import type { Task } from './work.js';

/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;

/** The in-process job engine: jobs are verified here, with the manager's verifier. */
export class LocalEngine implements JobEngine {
  readonly #options: ResolvedBulkOptions;
  readonly #rules: JobRules;
  readonly #forgotten: (id: string) => void;
  readonly #ownedVerifier: Verifier | undefined;
  readonly #jobs = new Map<string, LiveJob>();
  readonly #scheduler: Scheduler;
  readonly #sink: ResultSink;
  readonly #inputs: JobInputs;
  readonly #leases: JobLeases;
  readonly #life: JobLife;
  #closing = false;
  #closed: Promise<void> | undefined;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  /** True when the store keeps source rows. */
  readonly keepsRows: boolean;

  /** Serves the jobs of a manager with `options`; makes a verifier unless one is given. */
  constructor(options: ResolvedBulkOptions, context: RunnerContext) {
    this.#options = options;
    this.#rules = context.rules;
    this.#forgotten = context.forgotten;
    this.#life = new JobLife({
      jobs: this.#jobs,
      clock: options.clock,
      events: context.events,
      flush: (job) => this.#sink.scheduleFlush(job),
      waiting: (job, retry) => this.#sink.waiting(job, retry),
      newWork: () => this.#inputs.newWork(),
      ready: (job) => this.#ready(job),
    });
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
        this.#life.record(job, task, outcome, ok);
        this.#sink.settled(job);
        this.#scheduler.ready(job);
      },
    });
    const sinkContext: SinkContext = {
      fail: (job, error) => this.#life.fail(job, error),
      storeFailed: (job, operation, error) => this.#life.storeFailed(job, operation, error),
      complete: (job) => this.#life.complete(job),
      emit: (event, job) => this.#life.emit(event, job),
      wake: (job) => this.#life.wake(job),
      ready: (job) => this.#ready(job),
      counted: (job, results) => {
        const usage = options.usage;
        if (usage === undefined || job.owner === null) return;
        for (const result of results) usage.count(job.owner, 'bulk', result.status);
      },
    };
    const inputsContext: InputsContext = {
      enqueue: (job, operation) => this.#sink.enqueue(job, operation),
      scheduleFlush: (job) => this.#sink.scheduleFlush(job),
      ready: (job) => this.#ready(job),
      storeFailed: (job, operation, error) => this.#life.storeFailed(job, operation, error),
      retries: (job) => this.#life.scheduleRetries(job),
      assertAddable: (job) => {
        this.#assertOpen();
        if (job.deleted) missing(job.id);
        if (job.status === 'failed') throw new JobFinishedError(job.status);
      },
      yieldAfterMs: options.yieldAfterMs,
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
          this.#life.wake(job);
        },
        forget: (job) => this.#life.forget(job),
        wake: (job) => this.#life.wake(job),
        pump: () => this.#scheduler.pump(),
      });
    } else {
      this.keepsRows = store.putRows !== undefined && store.getRows !== undefined;
      this.#sink = new ResultSink(store, memoryResults(store, sinkContext), sinkContext);
      this.#inputs = memoryInputs(store, perDomain, inputsContext);
      this.#leases = processLeases({
        fail: (job, error) => this.#life.fail(job, error),
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
    const job = liveJob(
      {
        id,
        owner: input.owner,
        name: input.name,
        status: 'queued',
        total: 0,
        completed: 0,
        counts: zeroCounts(),
        createdAt: this.#life.now(),
        startedAt: null,
        completedAt: null,
        error: null,
        armed: input.autoStart,
        source: input.source?.source ?? null,
        work: this.#inputs.newWork(),
        greylistDelaysMs: input.greylistDelaysMs ?? this.#options.greylistDelaysMs,
      },
      input.fresh,
    );
    this.#life.scheduleRetries(job);
    this.#jobs.set(id, job);
    // A durable store gets the record and the inputs in one transaction, before anything can start; another
    // store gets the record first (saved as it is once this call returns: the chain runs later), then any rows.
    const emails = input.emails;
    const recordSaved = this.#inputs.carriesRecord(emails.length)
      ? undefined
      : this.#sink.enqueue(job, () => this.#options.store.saveJob(recordOf(job)));
    const inputsSaved = this.#append(job, emails, input.source?.rows);
    const created = snapshot(job); // as created: queued (the specification's creation response)
    const completed = this.#life.completeIfEmpty(job);
    try {
      await recordSaved;
      await inputsSaved;
    } catch (error) {
      this.#life.forget(job);
      if (error instanceof AddStopped) throw error.reason;
      throw new StoreError('save the job', error);
    }
    job.dirty = false;
    // Attached before the job can start, so that no event is missed.
    if (input.attach !== undefined) await input.attach(id);
    this.#life.emit('created', job);
    if (completed) this.#life.emit('complete', job);
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
    const before = { total: job.total, status: job.status, completedAt: job.completedAt, source: job.source };
    if (emails.length > 0) {
      if (job.status === 'complete') this.#life.reopen(job);
      job.source ??= source?.source ?? null;
      inputsSaved = this.#append(job, emails, source?.rows);
      this.#ready(job);
    }
    if (inputsSaved !== undefined) {
      try {
        await inputsSaved;
      } catch (error) {
        if (error instanceof AddStopped) {
          // Taken in slices and stopped before its commit: nothing of it was queued; the job is as it was.
          if (!job.deleted && job.total === before.total + emails.length) {
            if (job.status === 'failed') job.total = before.total;
            else Object.assign(job, before);
            job.dirty = true;
            this.#sink.scheduleFlush(job);
          }
          throw error.reason;
        }
        // A store whose write of the inputs carries the record (durable: one transaction) wrote none of this add,
        // and if no later add was appended after it, only this add fails: the job goes on as it was (its record is
        // saved again, as a flush may have saved it).
        const undoable =
          this.#inputs.carriesRecord(emails.length) && job.total === before.total + emails.length;
        const leaseLost = isMailvetError(error) && error.code === 'lease_lost';
        if (undoable && !isFinished(job) && !job.deleted && !leaseLost) {
          Object.assign(job, before, { dirty: true });
          this.#sink.scheduleFlush(job);
          throw new StoreError('save the addresses', error);
        }
        this.#life.storeFailed(job, 'save the addresses', error);
        // Another process took the job over: a conflict for the caller (HTTP 409), not a broken store.
        if (leaseLost) throw error;
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
    const completed = this.#life.completeIfEmpty(job);
    this.#ready(job);
    await this.#sink.sync(job);
    if (completed) this.#life.emit('complete', job);
    return snapshot(job);
  }

  async finish(id: string, owner: string | null): Promise<Job> {
    this.#assertOpen();
    await this.#leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
    await this.#leases.current(job);
    if (this.#rules.admitFinish(job, owner)) {
      this.#leases.assertHeld(job);
      this.#life.finish(job);
    }
    await this.#sink.sync(job);
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
    this.#life.forget(job);
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
      this.#life.forget(job);
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
    this.#life.wake(job);
    return saved;
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
      job.startedAt = this.#life.now();
      job.dirty = true;
      this.#sink.scheduleFlush(job);
      this.#life.emit('started', job);
    }
    return task;
  }
}

/** Throws `job_not_found` for `id`. */
function missing(id: unknown): never {
  throw new JobNotFoundError(String(id));
}
