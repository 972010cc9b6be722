/**
 * The in-process job engine of `BulkJobManager`: its jobs and the calls on them. The work is shared among objects
 * made in the constructor: {@link JobLife} (a job's transitions, what an answer makes of a position), the
 * {@link Scheduler} (which verification runs next), {@link JobReads} (the reads, and the lookup of a job by id),
 * the {@link retentionSweep}, and three chosen once by {@link storeObjects}, memory or durable: the
 * {@link ResultSink}'s store writes, the job inputs (in memory, or a durable store's window) and the leases (this
 * process's, or a durable store's keeper). See docs/architecture.md, "Jobs".
 * @module
 */
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import { createVerifier, type Verifier } from '../verifier.js';
import type { WebhookShare } from '../webhooks/share.js';
import { JobFinishedError, StoreError } from './errors.js';
import { isFinished, type LiveJob, liveJob, recordOf, snapshot, zeroCounts } from './job.js';
import { JobLife } from './job-life.js';
import { JobReads, missing } from './job-reads.js';
import type { BulkVerifier, Job, JobList, StoreHealth } from './job-types.js';
import type { JobLeases } from './leases.js';
import type { ResolvedBulkOptions } from './options.js';
import { type RetentionSweep, retentionSweep } from './retention.js';
import type { JobRules } from './rules.js';
import type { JobEngine, NewJob, ResultsView, RunnerContext } from './runner.js';
import { Scheduler } from './scheduler.js';
import type { ResultSink, SinkContext } from './sink.js';
import type { EncodedSource } from './source.js';
import { storeObjects } from './store-objects.js';
import { AddStopped, type InputsContext, type JobInputs } from './window.js';
import type { Task } from './work.js';

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
  readonly #webhookShare: WebhookShare | undefined;
  readonly #life: JobLife;
  #closing = false;
  #closed: Promise<void> | undefined;
  readonly #retention: RetentionSweep;
  readonly #reads: JobReads;
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
    // The one choice between a durable store and another: from here on, objects, never an `if` per method.
    const objects = storeObjects(
      options.store,
      options.perDomainConcurrency,
      { sink: sinkContext, inputs: inputsContext },
      {
        jobs: this.#jobs,
        closing: () => this.#closing,
        fail: (job, error) => this.#life.fail(job, error),
        forget: (job) => this.#life.forget(job),
        wake: (job) => this.#life.wake(job),
        pump: () => this.#scheduler.pump(),
      },
    );
    this.keepsRows = objects.keepsRows;
    this.#sink = objects.sink;
    this.#inputs = objects.inputs;
    this.#leases = objects.leases;
    this.#webhookShare = objects.webhookShare;
    this.#reads = new JobReads({
      jobs: this.#jobs,
      leases: this.#leases,
      sink: this.#sink,
      store: options.store,
    });
    this.#retention = retentionSweep({
      jobs: this.#jobs,
      clock: options.clock,
      retentionMs: options.retentionMs,
      expire: (job) => {
        this.#life.forget(job);
        this.#forgotten(job.id);
        void this.#sink
          .enqueue(job, () => this.#options.store.deleteJob(job.id))
          .catch(() => {
            // The store refused: the job is gone from this manager; a durable store keeps it until the next open.
          });
      },
    });
    this.#leases.opened.then(
      () => this.#retention.start(),
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

  webhookShare(): WebhookShare | undefined {
    return this.#webhookShare;
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
    const job = await this.#reads.found(id, owner);
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
    const job = await this.#reads.found(id, owner);
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
    const job = await this.#reads.found(id, owner);
    await this.#leases.current(job);
    if (this.#rules.admitFinish(job, owner)) {
      this.#leases.assertHeld(job);
      this.#life.finish(job);
    }
    await this.#sink.sync(job);
    return snapshot(job);
  }

  get(id: string, owner: string | null): Promise<Job | undefined> {
    return this.#reads.get(id, owner);
  }

  list(owner: string | null, offset: number, limit: number): Promise<JobList> {
    return this.#reads.list(owner, offset, limit);
  }

  view(id: string, owner: string | null): Promise<ResultsView> {
    return this.#reads.view(id, owner);
  }

  stream(id: string, owner: string | null, offset: number): AsyncIterable<VerificationResult> {
    return this.#reads.stream(id, owner, offset);
  }

  async delete(id: string, owner: string | null): Promise<void> {
    const job = await this.#reads.found(id, owner);
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
    this.#retention.stop();
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

  #newId(): string {
    const id = this.#rules.newId();
    if (this.#jobs.has(id)) throw new OptionsError('ids', 'returned an id that is in use');
    return id;
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
