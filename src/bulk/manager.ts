/**
 * `BulkJobManager`: asynchronous verification of large lists in process (create, add, poll, read results).
 * @module
 */
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import { type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { createWebhookNotifier, type PreparedWebhook, type WebhookNotifier } from '../webhooks/notifier.js';
import type { WebhookShare } from '../webhooks/share.js';
import { Deque } from './deque.js';
import {
  JobFailedError,
  JobFinishedError,
  JobInputError,
  JobNotCompleteError,
  JobNotFoundError,
  LimitError,
  StoreError,
} from './errors.js';
import { createInput, ownerOf, paging, readOptions, sourceRows, trimmedEmails } from './input.js';
import {
  exceptionResult,
  isFinished,
  isResult,
  type LiveJob,
  liveJob,
  liveJobOf,
  recordOf,
  refreshJob,
  snapshot,
  zeroCounts,
} from './job.js';
import { type ResolvedBulkOptions, resolveBulkOptions } from './options.js';
import { RetrySchedule, type WaitingRetry } from './retry.js';
import type { FleetHealth, RunnerJobs } from './runner.js';
import { hashedSeenIndex } from './seen-index.js';
import { sourcedPage } from './source.js';
import type {
  AddOptions,
  BulkJobManagerApi,
  BulkJobManagerOptions,
  BulkVerifier,
  CreateJobInput,
  DurableJobStore,
  Job,
  JobAccess,
  JobError,
  JobEventName,
  JobList,
  JobListener,
  ListJobsOptions,
  ResultsOptions,
  SourcedResults,
  StoredRetry,
  StoreHealth,
  StreamOptions,
} from './types.js';
import { isDurableStore } from './types.js';
import { domainKey, JobWork, type Task } from './work.js';

/** Results handed to the store in one call, at most (fewer when the job goes idle or a reader waits). */
const FLUSH_SIZE = 256;
/** Positions a stream reads from the store at once. */
const STREAM_PAGE = 256;
/**
 * Longest time a durable store's job keeps final results unwritten while verifications go on, in milliseconds:
 * what a crash can cost is re-verifying about this much work.
 */
const DURABLE_FLUSH_MS = 1000;
/** Results a durable store gets in one transaction, at most (unless a reader waits or the job goes idle). */
const DURABLE_FLUSH_SIZE = 4096;
/**
 * Most final results of one job waiting for a durable store's write: past it the job takes no new work until
 * the store catches up, so that a slow database bounds memory instead of letting results pile up.
 */
const MAX_UNWRITTEN = 16_384;
/** Durable stores: addresses of a job read from the store at once (the job's window). */
const WINDOW = 32_768;
/** Durable stores: a job reads its next window when fewer tasks than this are queued. */
const REFILL_BELOW = 16_384;
/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;
const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** Largest time `Date` can represent, in milliseconds. */
const MAX_TIME = 8.64e15;
/** A verification in flight. */
interface Running {
  readonly job: LiveJob;
  readonly task: Task;
  /** `performance.now()` when it started. */
  readonly started: number;
  settled: boolean;
}

const EVENTS: readonly JobEventName[] = ['progress', 'complete', 'failed'];
const noop = (): void => {};

/**
 * Runs bulk verification jobs in process: create a job, add addresses, poll, read results. Jobs are processed
 * with bounded concurrency, grouped by domain so that the verifier reuses its SMTP sessions; duplicates are
 * verified once; greylisted results are retried after a delay. The HTTP API and the CLI are thin layers
 * over it. See docs/bulk.md.
 * @example
 * const jobs = new BulkJobManager({ verifier: createVerifier({ smtp: false }) });
 * const job = await jobs.create({ name: 'newsletter', emails: ['a@example.com', 'b@example.org'] });
 * for await (const result of jobs.stream(job.id)) console.log(result.email, result.status);
 * await jobs.close();
 */
export class BulkJobManager implements BulkJobManagerApi {
  readonly #options: ResolvedBulkOptions;
  /** The verifier; `undefined` when a runner verifies elsewhere. */
  readonly #verifier: BulkVerifier | undefined;
  readonly #ownedVerifier: Verifier | undefined;
  /** The runner's jobs, when a runner is given: every public method is forwarded to them. */
  readonly #runner: RunnerJobs | undefined;
  readonly #jobs = new Map<string, LiveJob>();
  readonly #ready = new Deque<LiveJob>();
  readonly #listeners: Record<JobEventName, Set<JobListener>> = {
    progress: new Set(),
    complete: new Set(),
    failed: new Set(),
  };
  #inFlight = 0;
  readonly #webhooks: WebhookNotifier | undefined;
  /** Verifications in flight, for the deadline and for `delete` to free their slots. */
  readonly #running = new Set<Running>();
  #deadlineTimer: ReturnType<typeof setInterval> | undefined;
  /** When the current stretch of work without an event-loop turn began (`performance.now()`), if any. */
  #sliceStart: number | undefined;
  #turnPending = false;
  #idle: (() => void)[] = [];
  #closing = false;
  #closed: Promise<void> | undefined;
  /** The store, when it is durable: jobs are recovered from it and leased. */
  readonly #durable: DurableJobStore | undefined;
  /** Settles once the jobs of a durable store are recovered (at once for other stores). */
  readonly #opened: Promise<void>;
  #recovering: boolean;
  #leaseTimer: ReturnType<typeof setInterval> | undefined;
  #tendingLeases = false;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;

  /** Validates `options` (an `OptionsError` names a bad one) and, unless one is given, makes a verifier. */
  constructor(options: BulkJobManagerOptions = {}) {
    this.#options = resolveBulkOptions(options);
    const runner = this.#options.runner;
    if (runner !== undefined && options.webhooks !== undefined) {
      throw new OptionsError('webhooks', `cannot be used with the ${runner.name} runner yet`);
    }
    this.#runner = runner?.open(this.#options);
    this.#webhooks =
      options.webhooks === undefined ? undefined : createWebhookNotifier(this, options.webhooks);
    if (this.#options.verifier !== undefined) {
      this.#verifier = this.#options.verifier;
    } else if (this.#runner === undefined) {
      this.#ownedVerifier = createVerifier(this.#options.verifierOptions);
      this.#verifier = this.#ownedVerifier;
    }
    const store = this.#options.store;
    this.#durable = this.#runner === undefined && isDurableStore(store) ? store : undefined;
    this.#recovering = this.#durable !== undefined;
    this.#opened =
      this.#runner !== undefined
        ? this.#runner.opened()
        : this.#durable === undefined
          ? Promise.resolve()
          : this.#recover(this.#durable);
    this.#opened.then(
      () => (this.#runner === undefined ? this.#watchRetention() : undefined),
      () => {}, // reported by every call that awaits it
    );
  }

  /**
   * Resolves once the manager is ready: with a durable store, when its unfinished jobs are recovered (they go
   * on processing) and its finished jobs are readable; rejects with `store_error` / `store_unavailable` when
   * the store cannot be read. Every method waits for it, so calling it is optional.
   */
  async opened(): Promise<void> {
    await this.#opened;
  }

  /**
   * The store's state for `GET /healthz`: `memory` for a store that is not durable, else `up` when the
   * database answers a trivial query within `timeoutMs` and `down` otherwise.
   */
  async storeHealth(timeoutMs = 2000): Promise<StoreHealth> {
    if (this.#runner !== undefined) return this.#runner.storeHealth(timeoutMs);
    const store = this.#durable;
    if (store === undefined) return 'memory';
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      await Promise.race([this.#opened.then(() => store.ping()), timeout]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The worker fleet's state for `GET /healthz` (its queue, and how many workers have a live heartbeat);
   * `undefined` without a runner.
   */
  async fleetHealth(timeoutMs = 2000): Promise<FleetHealth | undefined> {
    return this.#runner?.fleetHealth(timeoutMs);
  }

  /**
   * How the webhook notifiers of a fleet's API nodes share jobs' webhooks (the HTTP adapter passes it to its
   * notifier); `undefined` without a runner that shares them.
   */
  webhookShare(): WebhookShare | undefined {
    return this.#runner?.webhookShare?.();
  }

  /**
   * Creates a job and returns it as created (`queued`). With addresses and `autoStart` (the default) it moves
   * to `processing` as soon as its first verification starts.
   */
  async create(input?: CreateJobInput): Promise<Job> {
    if (this.#runner !== undefined) return this.#runner.create(input);
    this.#assertOpen();
    const fields = createInput(input);
    await this.#whenOpen();
    // A webhook is checked (and its host resolved through the SSRF guard) before the job exists.
    let webhook: PreparedWebhook | undefined;
    if (input?.webhook !== undefined) {
      if (this.#webhooks === undefined)
        throw new JobInputError('webhook', "needs the manager's webhooks option (signing secrets)");
      webhook = await this.#webhooks.prepare(input.webhook);
    }
    const emails = trimmedEmails(
      fields.emails,
      this.#options.maxAddressesPerAdd,
      this.#options.maxEmailLength,
    );
    const source = sourceRows(input?.source, emails.length, null);
    if (source !== undefined) this.#assertKeepsRows();
    if (this.#jobs.size >= this.#options.maxJobs) {
      throw new LimitError('maxJobs', this.#options.maxJobs, 'too many jobs are held; delete finished ones');
    }
    const id = this.#newId();
    const job = liveJob({
      id,
      owner: fields.owner,
      name: fields.name,
      status: 'queued',
      total: 0,
      completed: 0,
      counts: zeroCounts(),
      createdAt: this.#now(),
      startedAt: null,
      completedAt: null,
      error: null,
      armed: fields.autoStart,
      source: source?.source ?? null,
      work: this.#newWork(),
      greylistDelaysMs: fields.greylistDelaysMs ?? this.#options.greylistDelaysMs,
    });
    this.#scheduleRetries(job);
    this.#jobs.set(id, job);
    // A durable store gets the record and the inputs in one transaction, before anything can start; another
    // store gets the record first (saved as it is once this call returns: the chain runs later), then any rows.
    const recordSaved =
      this.#durable !== undefined && emails.length > 0
        ? undefined
        : this.#enqueue(job, () => this.#options.store.saveJob(recordOf(job)));
    const inputsSaved = this.#append(job, emails, source?.rows);
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
    if (webhook !== undefined)
      await this.#webhooks?.attach(id, webhook, fields.owner === null ? {} : { owner: fields.owner });
    if (completed) this.#emit('complete', job);
    this.#makeReady(job);
    this.#pump();
    return created;
  }

  /**
   * Adds addresses to a job (its `total` grows). A `complete` job reopens: it goes back to `processing` until
   * the new addresses are final too, so an add never races the job's completion. Throws `job_finished` for a
   * `failed` job.
   */
  async add(id: string, emails: readonly string[], access?: AddOptions): Promise<Job> {
    if (this.#runner !== undefined) return this.#runner.add(id, emails, access);
    this.#assertOpen();
    await this.#whenOpen();
    const job = this.#find(id, access);
    this.#assertHeld(job);
    const trimmed = trimmedEmails(emails, this.#options.maxAddressesPerAdd, this.#options.maxEmailLength);
    const source = sourceRows(access?.source, trimmed.length, job.source);
    if (source !== undefined) this.#assertKeepsRows();
    if (job.status === 'failed') throw new JobFinishedError(job.status);
    if (job.total + trimmed.length > this.#options.maxAddressesPerJob) {
      throw new LimitError(
        'maxAddressesPerJob',
        this.#options.maxAddressesPerJob,
        `the job would hold ${job.total + trimmed.length} addresses`,
      );
    }
    let inputsSaved: Promise<void> | undefined;
    const before = { total: job.total, status: job.status, completedAt: job.completedAt, source: job.source };
    if (trimmed.length > 0) {
      if (job.status === 'complete') this.#reopen(job);
      job.source ??= source?.source ?? null;
      inputsSaved = this.#append(job, trimmed, source?.rows);
      this.#makeReady(job);
      this.#pump();
    }
    if (inputsSaved !== undefined) {
      try {
        await inputsSaved;
      } catch (error) {
        // A durable store wrote none of this add (one transaction), and no later add was appended after it: only
        // this add fails, the job goes on as it was (its record is saved again, as a flush may have saved it).
        const undoable = this.#durable !== undefined && job.total === before.total + trimmed.length;
        const leaseLost = isMailvetError(error) && error.code === 'lease_lost';
        if (undoable && !isFinished(job) && !job.deleted && !leaseLost) {
          Object.assign(job, before, { dirty: true });
          this.#scheduleFlush(job);
          throw new StoreError('save the addresses', error);
        }
        this.#storeFailed(job, 'save the addresses', error);
        // Another process took the job over: a conflict for the caller (HTTP 409), not a broken store.
        if (leaseLost) throw error;
        throw new StoreError('save the addresses', error);
      }
    }
    await this.#sync(job);
    return snapshot(job);
  }

  /**
   * Starts a job created with `autoStart: false`; idempotent on a started one. A started job without addresses
   * is `complete` at once (so that polling it ends); an `add` reopens it. Throws `job_finished` for a `failed` job.
   */
  async start(id: string, access?: JobAccess): Promise<Job> {
    if (this.#runner !== undefined) return this.#runner.start(id, access);
    this.#assertOpen();
    await this.#whenOpen();
    const job = this.#find(id, access);
    this.#assertHeld(job);
    if (job.status === 'failed') throw new JobFinishedError(job.status);
    job.armed = true;
    const completed = this.#completeIfEmpty(job);
    this.#makeReady(job);
    this.#pump();
    await this.#sync(job);
    if (completed) this.#emit('complete', job);
    return snapshot(job);
  }

  /** The job, or `undefined` when it is missing, deleted or another owner's. */
  async get(id: string, access?: JobAccess): Promise<Job | undefined> {
    if (this.#runner !== undefined) return this.#runner.get(id, access);
    await this.#whenOpen();
    const job = this.#visible(id, ownerOf(access));
    if (job === undefined) return undefined;
    await this.#current(job);
    await this.#sync(job);
    return job.deleted ? undefined : snapshot(job);
  }

  /** The caller's jobs, oldest first, one page at a time. */
  async list(options?: ListJobsOptions): Promise<JobList> {
    if (this.#runner !== undefined) return this.#runner.list(options);
    const fields = readOptions(options);
    const owner = ownerOf(options);
    const { offset, limit } = paging(fields);
    await this.#whenOpen();
    const visible: LiveJob[] = [];
    for (const job of this.#jobs.values()) if (job.owner === owner) visible.push(job);
    const page = visible.slice(offset, offset + limit);
    await Promise.all(page.map((job) => this.#current(job)));
    await Promise.all(page.map((job) => this.#sync(job)));
    return { jobs: page.filter((job) => !job.deleted).map(snapshot), total: visible.length };
  }

  /**
   * A page of results in input order (`offset`/`limit` count input positions). Throws `job_not_complete` (or
   * `job_failed`) before the job is complete, unless `partial` is set: then positions without a final result
   * are skipped.
   */
  async results(id: string, options?: ResultsOptions): Promise<VerificationResult[]> {
    if (this.#runner !== undefined) return this.#runner.results(id, options);
    const { page } = await this.#page(id, options);
    return page.filter((result) => result !== undefined);
  }

  /**
   * A page of results as `results` reads it, with the job's header and the cells of each result's source row
   * (empty but the address for an address added without a row).
   */
  async sourceResults(id: string, options?: ResultsOptions): Promise<SourcedResults> {
    if (this.#runner !== undefined) return this.#runner.sourceResults(id, options);
    const { job, start, page } = await this.#page(id, options);
    const source = job.source;
    if (source === null || page.length === 0) return sourcedPage(source, page, []);
    let rows: ReadonlyArray<string | undefined>;
    try {
      const store = this.#options.store;
      rows = await this.#enqueue(job, () => store.getRows?.(job.id, start, page.length) ?? []);
    } catch (error) {
      throw new StoreError('read the rows', error);
    }
    return sourcedPage(source, page, rows);
  }

  /** The positions a `results` call reads, `undefined` where a partial read has no final result. */
  async #page(
    id: string,
    options: ResultsOptions | undefined,
  ): Promise<{ job: LiveJob; start: number; page: (VerificationResult | undefined)[] }> {
    const fields = readOptions(options);
    const { offset, limit } = paging(fields);
    const partial = fields.partial ?? false;
    if (typeof partial !== 'boolean') throw new JobInputError('partial', 'must be a boolean');
    await this.#whenOpen();
    const job = this.#find(id, options);
    await this.#current(job);
    await this.#sync(job);
    if (job.deleted) throw new JobNotFoundError(id);
    if (!partial && job.status === 'failed') throw new JobFailedError(snapshot(job));
    if (!partial && job.status !== 'complete') throw new JobNotCompleteError(snapshot(job));
    const start = Math.min(offset, job.total);
    const page = await this.#read(job, start, Math.min(limit, job.total - start));
    if (!partial && page.includes(undefined)) {
      const missing = start + page.indexOf(undefined);
      throw new StoreError('read results', new Error(`no result at position ${missing} of a complete job`));
    }
    return { job, start, page };
  }

  /**
   * Results in input order, each yielded once it and every earlier one are final; ends when the job is
   * complete. If the job fails, the results it has are yielded (skipping gaps) and a `job_failed` error is
   * thrown; if it is deleted, `job_not_found`.
   */
  stream(id: string, options?: StreamOptions): AsyncIterable<VerificationResult> {
    if (this.#runner !== undefined) return this.#runner.stream(id, options);
    const fields = readOptions(options);
    const { offset } = paging(fields);
    if (this.#recovering) return this.#streamOnceOpen(id, options, offset);
    return this.#stream(this.#find(id, options), offset);
  }

  async *#streamOnceOpen(
    id: string,
    access: JobAccess | undefined,
    offset: number,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    await this.#whenOpen();
    yield* this.#stream(this.#find(id, access), offset);
  }

  /** Stops the job's work (verifications in flight finish and are dropped) and forgets it and its results. */
  async delete(id: string, access?: JobAccess): Promise<void> {
    if (this.#runner !== undefined) return this.#runner.delete(id, access);
    await this.#whenOpen();
    const job = this.#find(id, access);
    this.#forget(job);
    this.#webhooks?.detach(id);
    // Its verifications in flight give their slots back now; their answers, if they ever come, are dropped.
    for (const running of [...this.#running]) {
      if (running.job === job) this.#finish(running, exceptionResult(running.task.email), true);
    }
    try {
      await this.#enqueue(job, () => this.#options.store.deleteJob(id));
    } catch (error) {
      throw new StoreError('delete the job', error);
    }
  }

  /** Subscribes `listener` to `event`; returns a function that unsubscribes it. */
  on(event: JobEventName, listener: JobListener): () => void {
    if (this.#runner !== undefined) return this.#runner.on(event, listener);
    if (!EVENTS.includes(event)) throw new JobInputError('event', `must be one of ${EVENTS.join(', ')}`);
    if (typeof listener !== 'function') throw new JobInputError('listener', 'must be a function');
    const listeners = this.#listeners[event];
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  /**
   * Graceful shutdown: takes no more work (`create`, `add` and `start` then throw `disposed`), lets the
   * verifications in flight finish and stores their results, fails the jobs that are not complete (`error.code`
   * `disposed`; their results stay readable), then disposes the verifier it made and closes the store.
   * With a durable store, unfinished jobs are not failed: they stay as they are (their greylisting retries
   * included), their leases are given up, and the next manager opened on the store resumes them.
   * Reads keep working as far as the store allows (the memory store does). Idempotent.
   */
  close(): Promise<void> {
    this.#closed ??= this.#runner?.close() ?? this.#shutDown();
    return this.#closed;
  }

  async #shutDown(): Promise<void> {
    this.#closing = true;
    this.#ready.clear();
    clearInterval(this.#sweepTimer);
    clearInterval(this.#leaseTimer);
    await this.#opened.catch(() => {});
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
    const jobs = [...this.#jobs.values()];
    await Promise.all(jobs.map((job) => this.#sync(job)));
    if (this.#durable === undefined) {
      for (const job of jobs) {
        this.#fail(job, { code: 'disposed', message: 'the manager was closed before the job finished' });
      }
      await Promise.all(jobs.map((job) => this.#sync(job)));
    } else {
      for (const job of jobs) job.retries?.clear(); // their due times are in the store
      await this.#durable.releaseLeases().catch(() => {}); // else another manager waits out the lease
    }
    await this.#ownedVerifier?.dispose();
    await this.#webhooks?.close();
    try {
      await this.#options.store.close?.();
    } catch (error) {
      throw new StoreError('close', error);
    }
  }

  // --- lookup and validation ---

  /** Waits for the recovery of a durable store's jobs; throws what made it fail. */
  async #whenOpen(): Promise<void> {
    if (this.#durable !== undefined) await this.#opened;
  }

  #assertOpen(): void {
    if (this.#closing) throw new MailvetError('disposed', 'the job manager has been closed');
  }

  #visible(id: unknown, owner: string | null): LiveJob | undefined {
    if (typeof id !== 'string') return undefined;
    const job = this.#jobs.get(id);
    return job !== undefined && job.owner === owner ? job : undefined;
  }

  #find(id: string, access: JobAccess | undefined): LiveJob {
    const job = this.#visible(id, ownerOf(access));
    if (job === undefined) throw new JobNotFoundError(String(id));
    return job;
  }

  #newId(): string {
    const id: unknown = this.#options.ids();
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      throw new OptionsError('ids', 'must return 1-128 characters of A-Z a-z 0-9 _ -');
    }
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

  // --- recovery from a durable store ---

  /** Loads the finished jobs, claims and resumes the unfinished ones, then keeps their leases. */
  async #recover(store: DurableJobStore): Promise<void> {
    try {
      for (const record of await store.listJobs()) {
        const job = liveJobOf(record);
        job.foreign = !isFinished(job); // until claimed below, or later when its holder's lease expires
        this.#jobs.set(record.id, job);
      }
      await this.#claim(store);
    } catch (error) {
      throw isMailvetError(error) && error.code === 'store_unavailable'
        ? error
        : new StoreError('recover its jobs', error);
    } finally {
      this.#recovering = false;
    }
    const every = Math.max(100, Math.floor(store.leaseMs / 3));
    this.#leaseTimer = setInterval(() => void this.#tendLeases(store), every);
    this.#leaseTimer.unref?.();
  }

  /** Takes over the unfinished jobs whose lease is free or expired and resumes them. */
  async #claim(store: DurableJobStore): Promise<void> {
    for (const record of await store.claimJobs()) {
      if (this.#closing) return;
      let job = this.#jobs.get(record.id);
      if (job === undefined) {
        job = liveJobOf(record);
        this.#jobs.set(job.id, job);
      } else {
        job.readApplied = ++job.reads; // a read begun before the claim answers with an older record: dropped
        refreshJob(job, record);
      }
      job.foreign = true; // read-only here until its pending work is rebuilt
      await this.#resume(store, job);
    }
    this.#pump();
  }

  /**
   * Rebuilds the pending work of a job this manager has just leased and runs it. When the store fails meanwhile,
   * the job stays read-only here (still leased to this manager) and the next lease tick tries again, so that a
   * passing database error neither stalls the job nor fails it.
   */
  async #resume(store: DurableJobStore, job: LiveJob): Promise<void> {
    try {
      await this.#restore(store, job);
    } catch {
      return; // still foreign and leased here: #tendLeases finds it among the leases it renews
    }
    job.foreign = false;
    if (job.status === 'processing') this.#scheduleFlush(job);
    this.#refill(job);
    this.#wake(job);
  }

  /** Re-reads the jobs another process holds, so that reads here follow their progress. */
  async #refreshForeign(store: DurableJobStore): Promise<void> {
    for (const job of [...this.#jobs.values()]) {
      if (job.foreign && !job.deleted) await this.#reload(store, job);
    }
  }

  /**
   * Re-reads a job another process holds: forgets it when it was deleted there, stops treating it as foreign once
   * finished, and wakes its streams when it moved. An answer that comes after a newer one, or after this manager
   * took the job over, is dropped: it would move the job back.
   */
  async #reload(store: DurableJobStore, job: LiveJob): Promise<void> {
    const read = ++job.reads;
    const record = await store.getJob(job.id);
    // Taken over here while the read ran (this manager's state is the job's now), or a newer read came first.
    if (!job.foreign || job.deleted || read < job.readApplied) return;
    job.readApplied = read;
    if (record === undefined) {
      this.#forget(job);
      return;
    }
    const completed = job.completed;
    refreshJob(job, record);
    if (isFinished(job)) job.foreign = false;
    if (job.completed !== completed || !job.foreign) this.#wake(job);
  }

  /** Brings a job another process holds up to date from the store (no-op for the jobs this manager holds). */
  async #current(job: LiveJob): Promise<void> {
    const store = this.#durable;
    if (store === undefined || !job.foreign) return;
    try {
      await this.#reload(store, job);
    } catch (error) {
      throw new StoreError('read the job', error);
    }
  }

  /** Throws when another process holds the job (see {@link LiveJob.foreign}). */
  #assertHeld(job: LiveJob): void {
    if (job.foreign) {
      throw new MailvetError(
        'lease_lost',
        'another mailvet process is processing this job; it can be changed there, or here once that process stops',
      );
    }
  }

  /**
   * Rebuilds the pending work of a recovered job from its stored inputs: positions with a final result are
   * skipped, duplicates follow their first position again, greylisted positions wait for their stored due time.
   */
  async #restore(store: DurableJobStore, job: LiveJob): Promise<void> {
    const final = new Uint8Array((job.total >>> 3) + 1);
    for (const position of await store.finalPositions(job.id)) final[position >>> 3]! |= 1 << (position & 7);
    const waiting = new Map((await store.getRetries(job.id)).map((retry) => [retry.position, retry]));
    const retried: { retry: StoredRetry; email: string }[] = [];
    for (const retry of waiting.values()) {
      const [email] = await store.getInputs(job.id, retry.position, 1);
      if (email !== undefined) retried.push({ retry, email });
    }
    // Everything is read: the job changes only from here on, so a read that failed can simply be tried again.
    job.work = this.#newWork();
    job.loadedUpTo = 0;
    job.storedUpTo = job.total;
    job.restored = {
      upTo: job.total,
      isFinal: (position: number) => (final[position >>> 3]! & (1 << (position & 7))) !== 0,
      isWaiting: (position: number) => waiting.has(position),
    };
    this.#scheduleRetries(job);
    for (const { retry, email } of retried) {
      const task = { position: retry.position, email, key: domainKey(email), attempt: retry.attempt };
      job.interim.set(retry.position, retry.result);
      if (job.retries === null) job.work.retry({ ...task, attempt: 0 });
      else job.retries.restore(task, retry.dueAt);
    }
  }

  /** A new job's pending work; a durable store's jobs keep hashes, not strings, in their deduplication index. */
  #newWork(): JobWork {
    const perDomain = this.#options.perDomainConcurrency;
    return this.#durable === undefined ? new JobWork(perDomain) : new JobWork(perDomain, hashedSeenIndex());
  }

  /**
   * Durable stores: reads the job's next window of inputs from the store when its queue runs low, so that the
   * process holds a window of addresses per job, not the whole list. It reads only inputs whose write (by
   * `#append`) has committed.
   */
  #refill(job: LiveJob): void {
    const store = this.#durable;
    if (store === undefined || job.loading || job.deleted || job.work === null || isFinished(job)) return;
    if (job.loadedUpTo >= job.storedUpTo || job.work.queued >= REFILL_BELOW) return;
    job.loading = true;
    const from = job.loadedUpTo;
    const count = Math.min(WINDOW, job.storedUpTo - from);
    const load = async (): Promise<void> => {
      if (job.deleted || job.work === null) return;
      const emails = await store.getInputs(job.id, from, count);
      if (emails.length !== count) {
        throw new Error(`the store holds ${emails.length} of the ${count} addresses from position ${from}`);
      }
      const restored = job.restored !== null && from < job.restored.upTo ? job.restored : undefined;
      job.work.add(emails, from, restored);
      job.loadedUpTo = from + count;
      if (job.restored !== null && job.loadedUpTo >= job.restored.upTo) job.restored = null;
      if (job.work.copies.length > 0) this.#scheduleFlush(job);
    };
    // Off the job's chain of writes: these inputs are committed already, so the read need not wait for results.
    load().then(
      () => {
        job.loading = false;
        this.#makeReady(job);
        this.#pump();
        this.#refill(job);
      },
      (error: unknown) => {
        job.loading = false;
        this.#storeFailed(job, 'read the addresses', error);
      },
    );
  }

  /**
   * Renews this manager's leases, resumes the leased jobs whose work could not be read yet, then takes over jobs
   * whose holder died (its lease expired).
   */
  async #tendLeases(store: DurableJobStore): Promise<void> {
    if (this.#tendingLeases || this.#closing) return;
    this.#tendingLeases = true;
    try {
      for (const id of await store.renewLeases()) {
        // A job leased here but still foreign is one whose take-over could not read its pending work yet.
        const job = this.#jobs.get(id);
        if (job?.foreign && !job.deleted) await this.#resume(store, job);
      }
      await this.#claim(store);
      await this.#refreshForeign(store);
    } catch {
      // The database is unreachable: the next tick tries again; writes meanwhile fail their jobs.
    } finally {
      this.#tendingLeases = false;
    }
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
      this.#webhooks?.detach(job.id);
      void this.#enqueue(job, () => this.#options.store.deleteJob(job.id)).catch(() => {
        // The store refused: the job is gone from this manager; a durable store keeps it until the next open.
      });
    }
  }

  // --- scheduling ---

  /**
   * Appends addresses to a job's work. With a durable store it also queues the write of the inputs and the
   * record (one transaction) ahead of anything that could start, and returns that write.
   */
  #append(job: LiveJob, emails: readonly string[], rows?: readonly string[]): Promise<void> | undefined {
    if (emails.length === 0) return undefined;
    const first = job.total;
    job.total += emails.length;
    job.dirty = true;
    let saved: Promise<void> | undefined;
    const store = this.#durable;
    if (store !== undefined) {
      // The addresses go to the store only; the job reads them back a window at a time (#refill).
      const record = recordOf(job);
      saved = this.#enqueue(job, () =>
        rows === undefined
          ? store.putInputs(record, first, emails)
          : store.putInputs(record, first, emails, rows),
      );
      saved.then(
        () => {
          job.storedUpTo = Math.max(job.storedUpTo, first + emails.length);
          this.#refill(job);
        },
        () => {}, // the caller of #append reports it
      );
      this.#wake(job);
      return saved;
    }
    if (rows !== undefined) {
      // Queued ahead of any result of these positions (a store keeps a row before its result).
      const base = this.#options.store;
      saved = this.#enqueue(job, () => base.putRows?.(job.id, first, rows));
    }
    job.work!.add(emails, first);
    if (job.work!.copies.length > 0) this.#scheduleFlush(job);
    this.#wake(job);
    return saved;
  }

  /** Throws `invalid_request` when the store cannot keep source rows. */
  #assertKeepsRows(): void {
    const store = this.#options.store;
    if (this.#durable === undefined && (store.putRows === undefined || store.getRows === undefined)) {
      throw new JobInputError('source', 'needs a job store that keeps rows (putRows and getRows)');
    }
  }

  #scheduleRetries(job: LiveJob): void {
    if (job.retries !== null || job.greylistDelaysMs.length === 0) return;
    job.retries = new RetrySchedule(this.#options.clock, job.greylistDelaysMs, (due) =>
      this.#retry(job, due),
    );
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

  #makeReady(job: LiveJob): void {
    if (job.inReady || !job.armed || job.deleted || isFinished(job) || this.#closing || !job.work?.hasWork)
      return;
    if (this.#backlogged(job)) return; // the end of the running flush makes it ready again
    job.inReady = true;
    this.#ready.push(job);
  }

  /**
   * Starts verifications while there is room and work, round-robin over jobs. After `yieldAfterMs` of work
   * without an event-loop turn it stops and goes on from a `setImmediate`, so that I/O (an HTTP request, a
   * timer) gets its turn even when every verification settles in a microtask.
   */
  #pump(): void {
    if (this.#turnPending) return;
    while (this.#inFlight < this.#options.concurrency && !this.#closing) {
      if (this.#sliceSpent()) {
        this.#turnPending = true;
        setImmediate(() => {
          this.#turnPending = false;
          this.#pump();
        });
        return;
      }
      const job = this.#ready.shift();
      if (job === undefined) return;
      job.inReady = false;
      if (job.deleted || isFinished(job) || job.work === null || this.#backlogged(job)) continue;
      const task = job.work.take();
      if (this.#durable !== undefined) this.#refill(job); // reads the next window while this one runs
      if (task === undefined) continue;
      if (job.status === 'queued') {
        job.status = 'processing';
        job.startedAt = this.#now();
        job.dirty = true;
        this.#scheduleFlush(job);
      }
      this.#makeReady(job);
      this.#startSlice();
      this.#launch(job, task);
    }
  }

  /** True when a durable store is behind on this job's results (see {@link MAX_UNWRITTEN}). */
  #backlogged(job: LiveJob): boolean {
    return (
      this.#durable !== undefined && job.bufferPositions.length + job.commitPositions.length >= MAX_UNWRITTEN
    );
  }

  /**
   * True when the verifications started since the last event-loop turn have taken `yieldAfterMs`. A stretch starts
   * with the first verification started after a turn ({@link #startSlice}) and ends at the next turn (an immediate
   * marks it), so neither idle time nor what the caller did earlier in the turn counts: a pump that has work starts
   * at least one verification per turn.
   */
  #sliceSpent(): boolean {
    return (
      this.#sliceStart !== undefined && performance.now() - this.#sliceStart >= this.#options.yieldAfterMs
    );
  }

  /** Starts a stretch of work at the first verification started after an event-loop turn. */
  #startSlice(): void {
    if (this.#sliceStart !== undefined) return;
    this.#sliceStart = performance.now();
    setImmediate(() => {
      this.#sliceStart = undefined;
    });
  }

  #launch(job: LiveJob, task: Task): void {
    this.#inFlight++;
    job.inFlight++;
    const running: Running = { job, task, started: performance.now(), settled: false };
    this.#running.add(running);
    this.#watchDeadlines();
    let pending: Promise<VerificationResult>;
    try {
      pending = Promise.resolve(this.#verifier!.verify(task.email)); // set whenever jobs run in process
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => this.#finish(running, result, true),
      (error: unknown) => this.#finish(running, error, false),
    );
  }

  /** Settles a verification once: by its answer, by the manager's deadline, or by the deletion of its job. */
  #finish(running: Running, outcome: unknown, ok: boolean): void {
    if (running.settled) return;
    running.settled = true;
    this.#running.delete(running);
    this.#settle(running.job, running.task, outcome, ok);
  }

  /**
   * While verifications run, checks every so often for any that has outlived `verificationTimeoutMs`: it ends
   * `unknown`/`timeout_exceeded` and frees its slot, whatever the verifier does later (a custom verifier that
   * never answers cannot hold the manager).
   */
  #watchDeadlines(): void {
    if (this.#deadlineTimer !== undefined) return;
    const limit = this.#options.verificationTimeoutMs;
    const every = Math.max(10, Math.min(1000, Math.floor(limit / 4)));
    this.#deadlineTimer = setInterval(() => {
      const now = performance.now();
      for (const running of [...this.#running]) {
        if (now - running.started >= limit)
          this.#finish(running, verdictOnlyResult(running.task.email, verdictOf('timeout_exceeded')), true);
      }
      if (this.#running.size === 0) {
        clearInterval(this.#deadlineTimer);
        this.#deadlineTimer = undefined;
      }
    }, every);
    (this.#deadlineTimer as { unref?: () => void }).unref?.();
  }

  #settle(job: LiveJob, task: Task, outcome: unknown, ok: boolean): void {
    this.#inFlight--;
    job.inFlight--;
    if (!job.deleted) {
      job.work?.release(task.key);
      this.#record(job, task, outcome, ok);
      if (
        job.bufferPositions.length >= (this.#durable === undefined ? FLUSH_SIZE : DURABLE_FLUSH_SIZE) ||
        job.inFlight === 0 ||
        job.waiters.length > 0 ||
        (this.#durable !== undefined && performance.now() - job.flushedAt >= DURABLE_FLUSH_MS)
      ) {
        this.#scheduleFlush(job);
      }
      this.#makeReady(job);
    }
    if (this.#inFlight === 0 && this.#idle.length > 0) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
    this.#pump();
  }

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
      if (this.#durable !== undefined) {
        job.retryWrites.push({ position: task.position, attempt: retry.attempt, dueAt, result });
        job.dirty = true;
      }
      return;
    }
    this.#produce(job, task.position, result);
  }

  #retry(job: LiveJob, due: readonly WaitingRetry[]): void {
    if (job.deleted || isFinished(job) || job.work === null) return;
    for (const { task } of due) job.work.retry(task);
    this.#makeReady(job);
    this.#pump();
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
    this.#scheduleFlush(job);
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
    job.work ??= this.#newWork();
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

  // --- the store ---

  /** Runs `operation` after every earlier store call of `job`. */
  #enqueue<T>(job: LiveJob, operation: () => T | Promise<T>): Promise<T> {
    const run = job.chain.then(operation);
    job.chain = run.then(noop, noop);
    return run;
  }

  #scheduleFlush(job: LiveJob): void {
    if (job.flushQueued || job.deleted) return;
    job.flushQueued = true;
    void this.#enqueue(job, () => this.#flush(job));
  }

  /** Writes what is pending to the store and waits for every store call of `job` so far. */
  async #sync(job: LiveJob): Promise<void> {
    if (job.bufferPositions.length > 0 || job.dirty || (job.work?.copies.length ?? 0) > 0) {
      this.#scheduleFlush(job);
    }
    await job.chain;
  }

  /** Hands buffered results and copies to the store, then saves the metadata and tells listeners. Never throws. */
  async #flush(job: LiveJob): Promise<void> {
    job.flushQueued = false;
    job.flushedAt = performance.now();
    if (job.deleted) return;
    const before = job.completed;
    const positions = job.bufferPositions;
    const results = job.bufferResults;
    job.bufferPositions = [];
    job.bufferResults = [];
    if (positions.length > 0) await this.#write(job, positions, results);
    if (job.deleted) return;
    const copies = job.work?.copies ?? [];
    if (copies.length > 0) {
      job.work!.copies = [];
      await this.#copy(job, copies);
      if (job.deleted) return;
    }
    const completes = job.status === 'processing' && job.completed === job.total;
    if (completes) this.#complete(job);
    if (this.#durable !== undefined) {
      if (job.dirty && !job.storeBroken) await this.#commit(this.#durable, job);
      if (job.deleted) return;
    } else if (job.dirty && !job.storeBroken) {
      job.dirty = false;
      try {
        await this.#options.store.saveJob(recordOf(job));
      } catch (error) {
        job.storeBroken = true;
        this.#fail(job, { code: 'store_error', message: storeMessage('save the job', error) });
      }
      if (job.deleted) return;
    }
    if (job.completed !== before) this.#emit('progress', job);
    if (completes) this.#emit('complete', job);
    if (isFinished(job) && job.inFlight === 0 && (job.work?.copies.length ?? 0) === 0) {
      job.work = null; // the deduplication index and queues are no longer needed
      job.retries = null;
    }
    this.#wake(job);
    if (this.#durable !== undefined) {
      this.#makeReady(job); // it may have waited for this write (backpressure); #makeReady checks
      this.#pump();
    }
  }

  /** Durable stores: writes the results accounted for, the record and new retries in one transaction. */
  async #commit(store: DurableJobStore, job: LiveJob): Promise<void> {
    const positions = job.commitPositions;
    const results = job.commitResults;
    const retries = job.retryWrites;
    job.commitPositions = [];
    job.commitResults = [];
    job.retryWrites = [];
    job.dirty = false;
    try {
      await store.putResults(job.id, positions, results, { record: recordOf(job), retries });
    } catch (error) {
      this.#keep(job, positions, results);
      this.#storeFailed(job, 'write results', error);
    }
  }

  async #write(job: LiveJob, positions: number[], results: VerificationResult[]): Promise<void> {
    job.completed += positions.length;
    for (const result of results) job.counts[result.status]++;
    job.dirty = true;
    if (this.#durable !== undefined && !job.storeBroken) {
      for (let i = 0; i < positions.length; i++) {
        job.commitPositions.push(positions[i]!);
        job.commitResults.push(results[i]!);
      }
      return;
    }
    if (!job.storeBroken) {
      try {
        await this.#options.store.putResults(job.id, positions, results);
        return;
      } catch (error) {
        job.storeBroken = true;
        this.#keep(job, positions, results);
        this.#fail(job, { code: 'store_error', message: storeMessage('write results', error) });
        return;
      }
    }
    this.#keep(job, positions, results);
  }

  #keep(job: LiveJob, positions: readonly number[], results: readonly VerificationResult[]): void {
    job.unsaved ??= new Map();
    for (let i = 0; i < positions.length; i++) job.unsaved.set(positions[i]!, results[i]!);
  }

  /** Fills duplicates of addresses whose result was final already when they were added. */
  async #copy(job: LiveJob, pairs: readonly number[]): Promise<void> {
    // Results still in memory: refused by the store, or final while this flush ran (still buffered).
    const local = new Map<number, VerificationResult>(job.unsaved ?? []);
    for (let k = 0; k < job.commitPositions.length; k++)
      local.set(job.commitPositions[k]!, job.commitResults[k]!);
    for (let k = 0; k < job.bufferPositions.length; k++)
      local.set(job.bufferPositions[k]!, job.bufferResults[k]!);
    const missing: number[] = [];
    for (let i = 0; i < pairs.length; i += 2) if (!local.has(pairs[i]!)) missing.push(pairs[i]!);
    let stored: Map<number, VerificationResult | undefined>;
    try {
      stored = await this.#storedAt(job, missing);
    } catch (error) {
      job.storeBroken = true;
      this.#fail(job, { code: 'store_error', message: storeMessage('read results', error) });
      return;
    }
    const positions: number[] = [];
    const results: VerificationResult[] = [];
    for (let i = 0; i < pairs.length; i += 2) {
      const from = pairs[i]!;
      const result = local.get(from) ?? stored.get(from);
      if (result === undefined) {
        this.#fail(job, {
          code: 'store_error',
          message: `the job store lost the result at position ${from}`,
        });
        return;
      }
      positions.push(pairs[i + 1]!);
      results.push(result);
    }
    await this.#write(job, positions, results);
  }

  /** The stored results at `positions`: one read on a durable store, one per distinct position otherwise. */
  async #storedAt(
    job: LiveJob,
    positions: readonly number[],
  ): Promise<Map<number, VerificationResult | undefined>> {
    const distinct = [...new Set(positions)];
    const found = new Map<number, VerificationResult | undefined>();
    if (distinct.length === 0) return found;
    if (this.#durable !== undefined) {
      const results = await this.#durable.getResultsAt(job.id, distinct);
      for (let i = 0; i < distinct.length; i++) found.set(distinct[i]!, results[i]);
      return found;
    }
    for (const position of distinct) {
      found.set(position, (await this.#options.store.getResults(job.id, position, 1))[0]);
    }
    return found;
  }

  /** Positions `offset` to `offset + count - 1` (in order), from the store and the results it refused. */
  async #read(job: LiveJob, offset: number, count: number): Promise<(VerificationResult | undefined)[]> {
    if (count === 0) return [];
    let stored: ReadonlyArray<VerificationResult | undefined>;
    try {
      stored = await this.#enqueue(job, () => this.#options.store.getResults(job.id, offset, count));
    } catch (error) {
      throw new StoreError('read results', error);
    }
    const page: (VerificationResult | undefined)[] = [];
    for (let i = 0; i < count; i++) page.push(stored[i] ?? job.unsaved?.get(offset + i));
    return page;
  }

  async *#stream(job: LiveJob, offset: number): AsyncGenerator<VerificationResult, void, undefined> {
    let position = offset;
    for (;;) {
      if (job.deleted) throw new JobNotFoundError(job.id);
      await this.#sync(job);
      if (job.deleted) throw new JobNotFoundError(job.id);
      const version = job.version;
      if (position < job.total) {
        const page = await this.#read(job, position, Math.min(STREAM_PAGE, job.total - position));
        let ready = 0;
        while (ready < page.length && page[ready] !== undefined) ready++;
        for (let i = 0; i < ready; i++) yield page[i]!;
        position += ready;
        if (ready === page.length) continue;
      } else if (job.status === 'complete') {
        return;
      }
      if (job.status === 'failed') {
        yield* this.#rest(job, position);
        throw new JobFailedError(snapshot(job));
      }
      if (job.version !== version) continue;
      const changed = new Promise<void>((resolve) => job.waiters.push(resolve));
      // Results buffered since the sync above are flushed now that a reader waits (flushing wakes it).
      if (job.bufferPositions.length > 0) this.#scheduleFlush(job);
      await changed;
    }
  }

  /** The results a failed job has from `position` on, skipping gaps. */
  async *#rest(job: LiveJob, position: number): AsyncGenerator<VerificationResult, void, undefined> {
    for (let at = position; at < job.total; at += STREAM_PAGE) {
      const page = await this.#read(job, at, Math.min(STREAM_PAGE, job.total - at));
      for (const result of page) if (result !== undefined) yield result;
    }
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
    const listeners = this.#listeners[event];
    if (listeners.size === 0) return;
    const current = snapshot(job);
    for (const listener of [...listeners]) {
      try {
        listener(current);
      } catch (error) {
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}

function storeMessage(operation: string, error: unknown): string {
  return `the job store failed to ${operation}${error instanceof Error ? `: ${error.message}` : ''}`;
}
