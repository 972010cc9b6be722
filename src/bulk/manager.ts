/**
 * `BulkJobManager`: asynchronous verification of large lists (create, add, poll, read results), in process or on a
 * worker fleet.
 * @module
 */
import { MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import { createWebhookNotifier, type PreparedWebhook, type WebhookNotifier } from '../webhooks/notifier.js';
import type { WebhookShare } from '../webhooks/share.js';
import { JobFailedError, JobInputError, JobNotCompleteError, LimitError, StoreError } from './errors.js';
import { type HeldBytes, HeldBytesLedger, inputBytes, textBytes } from './held-bytes.js';
import { createInput, ownerOf, paging, readOptions, sourceRows, trimmedEmailsInSlices } from './input.js';
import { JobListeners } from './listeners.js';
import { LocalEngine } from './local-engine.js';
import { type ResolvedBulkOptions, resolveBulkOptions } from './options.js';
import { jobRules } from './rules.js';
import type { FleetHealth, JobEngine, ResultsView, RunnerContext } from './runner.js';
import { type EncodedSource, sourcedPage } from './source.js';
import type {
  AddOptions,
  BulkJobManagerApi,
  BulkJobManagerOptions,
  CreateJobInput,
  Job,
  JobAccess,
  JobEventName,
  JobList,
  JobListener,
  ListJobsOptions,
  ResultsOptions,
  SourcedResults,
  StoreHealth,
  StreamOptions,
} from './types.js';

/**
 * Runs bulk verification jobs: create a job, add addresses, poll, read results. The manager checks every call (its
 * input, the caller's access, the limits), holds the listeners of job events and the webhooks, and hands the call
 * to its job engine: in process by default (bounded concurrency, grouped by domain so that the verifier reuses its
 * SMTP sessions; duplicates verified once; greylisted results retried after a delay), or a runner's (a worker
 * fleet). The HTTP API and the CLI are thin layers over it. See docs/bulk.md and docs/architecture.md.
 * @example
 * const jobs = new BulkJobManager({ verifier: createVerifier({ smtp: false }) });
 * const job = await jobs.create({ name: 'newsletter', emails: ['a@example.com', 'b@example.org'] });
 * for await (const result of jobs.stream(job.id)) console.log(result.email, result.status);
 * await jobs.close();
 */
export class BulkJobManager implements BulkJobManagerApi {
  readonly #options: ResolvedBulkOptions;
  readonly #listeners = new JobListeners();
  /** The bytes each job took in through this manager (its addresses, rows and name), until it is forgotten. */
  readonly #held = new HeldBytesLedger();
  readonly #webhooks: WebhookNotifier | undefined;
  /** Where the jobs live and are verified: chosen once, here. */
  readonly #engine: JobEngine;
  /** Per job id: the end of its adds under way (see {@link BulkJobManager.add}). Never rejects. */
  readonly #adds = new Map<string, Promise<void>>();
  #closing = false;
  #closed: Promise<void> | undefined;

  /** Validates `options` (an `OptionsError` names a bad one) and opens the job engine. */
  constructor(options: BulkJobManagerOptions = {}) {
    this.#options = resolveBulkOptions(options);
    const { runner, store, maxJobs, maxAddressesPerJob, maxAddressesPerAdd, maxEmailLength } = this.#options;
    if (runner !== undefined && options.webhooks !== undefined) {
      throw new OptionsError('webhooks', `cannot be used with the ${runner.name} runner yet`);
    }
    const context: RunnerContext = {
      store,
      maxJobs,
      maxAddressesPerJob,
      maxAddressesPerAdd,
      maxEmailLength,
      greylistDelaysMs: this.#options.greylistDelaysMs,
      retentionMs: this.#options.retentionMs,
      clock: this.#options.clock,
      ids: this.#options.ids,
      rules: jobRules(this.#options),
      events: this.#listeners,
      forgotten: (id) => {
        this.#held.release(id);
        this.#webhooks?.detach(id);
      },
    };
    this.#engine = runner === undefined ? new LocalEngine(this.#options, context) : runner.open(context);
    // On a durable store, jobs' webhooks are kept with them and watched again after a restart.
    const share = options.webhooks?.share ?? this.#engine.webhookShare();
    this.#webhooks =
      options.webhooks === undefined
        ? undefined
        : createWebhookNotifier(this, { ...options.webhooks, ...(share === undefined ? {} : { share }) });
  }

  /**
   * Resolves once the manager is ready: with a durable store, when its unfinished jobs are recovered (they go
   * on processing) and its finished jobs are readable; rejects with `store_error` / `store_unavailable` when
   * the store cannot be read. Every method waits for it, so calling it is optional.
   */
  async opened(): Promise<void> {
    await this.#engine.opened();
  }

  /**
   * The store's state for `GET /healthz`: `memory` for a store that is not durable, else `up` when the
   * database answers a trivial query within `timeoutMs` (`damaged` if the store found damage when it opened)
   * and `down` otherwise.
   */
  async storeHealth(timeoutMs = 2000): Promise<StoreHealth> {
    return this.#engine.storeHealth(timeoutMs);
  }

  /**
   * The worker fleet's state for `GET /healthz` (its queue, and how many workers have a live heartbeat);
   * `undefined` without a runner.
   */
  async fleetHealth(timeoutMs = 2000): Promise<FleetHealth | undefined> {
    return this.#engine.fleetHealth(timeoutMs);
  }

  /**
   * How the webhook notifiers of a fleet's API nodes share jobs' webhooks (the HTTP adapter passes it to its
   * notifier); `undefined` without a runner that shares them.
   */
  webhookShare(): WebhookShare | undefined {
    return this.#engine.webhookShare();
  }

  /**
   * Creates a job and returns it as created (`queued`). With addresses and `autoStart` (the default) it moves
   * to `processing` as soon as its first verification starts.
   */
  async create(input?: CreateJobInput): Promise<Job> {
    this.#assertOpen();
    const fields = createInput(input);
    const runner = this.#options.runner;
    if (input?.webhook !== undefined && runner !== undefined)
      throw new JobInputError('webhook', `is not supported by the ${runner.name} runner yet`);
    const emails = await this.#emails(fields.emails);
    const source = this.#source(input?.source, emails.length);
    // A webhook is checked (and its host resolved through the SSRF guard) before the job exists.
    let webhook: PreparedWebhook | undefined;
    if (input?.webhook !== undefined) {
      if (this.#webhooks === undefined)
        throw new JobInputError('webhook', "needs the manager's webhooks option (signing secrets)");
      webhook = await this.#webhooks.prepare(input.webhook);
    }
    const owner = fields.owner;
    const job = await this.#engine.create({
      owner,
      name: fields.name,
      autoStart: fields.autoStart,
      emails,
      source,
      greylistDelaysMs: fields.greylistDelaysMs,
      fresh: fields.fresh,
      attach:
        webhook === undefined
          ? undefined
          : (id) => this.#webhooks!.attach(id, webhook, owner === null ? {} : { owner }),
    });
    this.#held.hold(job.id, owner, inputBytes(emails, source?.rows) + textBytes(fields.name?.length ?? 0));
    return job;
  }

  /**
   * Adds addresses to a job (its `total` grows). A `complete` job reopens: it goes back to `processing` until
   * the new addresses are final too, so an add never races the job's completion. Throws `job_finished` for a
   * `failed` job. A large list is taken in slices (`yieldAfterMs` each, an event-loop turn between them) and
   * committed at once: none of it is verified before, and an add that stops after a turn (the manager closes,
   * the job is deleted or fails) adds nothing. The adds of a job run one after the other, in call order, and a
   * `start` waits for the adds called before it.
   */
  async add(id: string, emails: readonly string[], access?: AddOptions): Promise<Job> {
    this.#assertOpen();
    const owner = ownerOf(access);
    return this.#inTurn(id, async () => {
      const trimmed = await this.#emails(emails);
      const source = this.#source(access?.source, trimmed.length);
      const job = await this.#engine.add(id, owner, trimmed, source);
      this.#held.hold(job.id, owner, inputBytes(trimmed, source?.rows));
      return job;
    });
  }

  /**
   * Runs `call` on job `id` after the adds of `id` called before it: an add may take several event-loop turns
   * (a large list is taken in slices), and adds of a job end in call order.
   */
  #inTurn<T>(id: unknown, call: () => Promise<T>): Promise<T> {
    const key = String(id);
    const run = (this.#adds.get(key) ?? Promise.resolve()).then(call);
    const tail = run.then(noop, noop);
    this.#adds.set(key, tail);
    void tail.then(() => {
      if (this.#adds.get(key) === tail) this.#adds.delete(key);
    });
    return run;
  }

  /**
   * Starts a job created with `autoStart: false`; idempotent on a started one. A started job without addresses
   * is `complete` at once (so that polling it ends); an `add` reopens it. Throws `job_finished` for a `failed` job.
   */
  async start(id: string, access?: JobAccess): Promise<Job> {
    this.#assertOpen();
    const owner = ownerOf(access);
    // After the adds called before it: the job starts with all of their addresses.
    await this.#adds.get(String(id));
    return this.#engine.start(id, owner);
  }

  /**
   * Finish now: ends the job's waiting greylisting retries with their last verdict (`unknown`/`greylisted`, whose
   * `reason` ends with `not retried: the job was finished before the retry due at HH:MM UTC`), and the job retries
   * nothing from then on (`retries.delays_ms` becomes `[]`, kept by a durable store). It completes at once when
   * nothing else is left, else when its verifications in flight and unverified addresses are final; `complete`
   * and the webhooks follow as usual. Returns the job after. Idempotent: a `complete` job is answered as it is.
   * Throws `job_not_found`, or `job_not_processing` for a `queued` or `failed` job.
   */
  async finish(id: string, access?: JobAccess): Promise<Job> {
    this.#assertOpen();
    return this.#engine.finish(id, ownerOf(access));
  }

  /** The job, or `undefined` when it is missing, deleted or another owner's. */
  async get(id: string, access?: JobAccess): Promise<Job | undefined> {
    return this.#engine.get(id, ownerOf(access));
  }

  /** The caller's jobs, oldest first, one page at a time. */
  async list(options?: ListJobsOptions): Promise<JobList> {
    const fields = readOptions(options);
    const owner = ownerOf(options);
    const { offset, limit } = paging(fields);
    return this.#engine.list(owner, offset, limit);
  }

  /**
   * A page of results in input order (`offset`/`limit` count input positions). Throws `job_not_complete` (or
   * `job_failed`) before the job is complete, unless `partial` is set: then positions without a final result
   * are skipped.
   */
  async results(id: string, options?: ResultsOptions): Promise<VerificationResult[]> {
    const { page } = await this.#page(id, options);
    return page.filter((result) => result !== undefined);
  }

  /**
   * A page of results as `results` reads it, with the job's header and the cells of each result's source row
   * (empty but the address for an address added without a row).
   */
  async sourceResults(id: string, options?: ResultsOptions): Promise<SourcedResults> {
    const { view, start, page } = await this.#page(id, options);
    const source = view.source;
    if (source === null || page.length === 0) return sourcedPage(source, page, []);
    return sourcedPage(source, page, await view.rows(start, page.length));
  }

  /** The positions a `results` call reads, `undefined` where a partial read has no final result. */
  async #page(
    id: string,
    options: ResultsOptions | undefined,
  ): Promise<{ view: ResultsView; start: number; page: (VerificationResult | undefined)[] }> {
    const fields = readOptions(options);
    const { offset, limit } = paging(fields);
    const partial = fields.partial ?? false;
    if (typeof partial !== 'boolean') throw new JobInputError('partial', 'must be a boolean');
    const view = await this.#engine.view(id, ownerOf(options));
    if (!partial && view.status === 'failed') throw new JobFailedError(await view.snapshot());
    if (!partial && view.status !== 'complete') throw new JobNotCompleteError(await view.snapshot());
    const start = Math.min(offset, view.total);
    const count = Math.min(limit, view.total - start);
    const page = count === 0 ? [] : await view.results(start, count);
    if (!partial && page.includes(undefined)) {
      const missing = start + page.indexOf(undefined);
      throw new StoreError('read results', new Error(`no result at position ${missing} of a complete job`));
    }
    return { view, start, page };
  }

  /**
   * Results in input order, each yielded once it and every earlier one are final; ends when the job is
   * complete. If the job fails, the results it has are yielded (skipping gaps) and a `job_failed` error is
   * thrown; if it is deleted, `job_not_found`.
   */
  stream(id: string, options?: StreamOptions): AsyncIterable<VerificationResult> {
    const fields = readOptions(options);
    const { offset } = paging(fields);
    return this.#engine.stream(id, ownerOf(options), offset);
  }

  /** Stops the job's work (verifications in flight finish and are dropped) and forgets it and its results. */
  async delete(id: string, access?: JobAccess): Promise<void> {
    await this.#engine.delete(id, ownerOf(access));
    this.#held.release(id);
  }

  /**
   * The bytes held by the jobs of `access.owner` (every job without an owner) and by all jobs: what their addresses,
   * kept CSV rows and names cost (see bulk/held-bytes.ts), counted as they are created or added through this
   * manager and freed when a job is deleted or forgotten. Jobs this manager did not take in (recovered from a
   * durable store, or created on another node of a fleet) count nothing. The HTTP adapter checks its byte budgets
   * against it.
   */
  heldBytes(access?: JobAccess): HeldBytes {
    return this.#held.of(ownerOf(access));
  }

  /** Subscribes `listener` to `event`; returns a function that unsubscribes it. */
  on(event: JobEventName, listener: JobListener): () => void {
    return this.#listeners.on(event, listener);
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
    this.#closing = true;
    this.#closed ??= this.#shutDown();
    return this.#closed;
  }

  async #shutDown(): Promise<void> {
    try {
      await this.#engine.close();
    } finally {
      await this.#webhooks?.close();
    }
  }

  #assertOpen(): void {
    if (this.#closing) throw new MailvetError('disposed', 'the job manager has been closed');
  }

  /**
   * The addresses of a `create` or `add`, trimmed (a large list in slices, with event-loop turns between them);
   * checked against the per-call and per-job limits.
   */
  async #emails(emails: unknown): Promise<string[]> {
    const { maxAddressesPerAdd, maxAddressesPerJob, maxEmailLength, yieldAfterMs } = this.#options;
    const trimmed = await trimmedEmailsInSlices(emails, maxAddressesPerAdd, maxEmailLength, yieldAfterMs);
    if (trimmed.length > maxAddressesPerJob) {
      throw new LimitError(
        'maxAddressesPerJob',
        maxAddressesPerJob,
        `the job would hold ${trimmed.length} addresses`,
      );
    }
    return trimmed;
  }

  /** The rows of a `create` or `add` of `count` addresses, checked and encoded (the job's header is checked later). */
  #source(source: unknown, count: number): EncodedSource | undefined {
    const encoded = sourceRows(source, count, null);
    if (encoded !== undefined && !this.#engine.keepsRows) {
      throw new JobInputError('source', 'needs a job store that keeps rows (putRows and getRows)');
    }
    return encoded;
  }
}

const noop = (): void => {};
