/**
 * Public types of bulk jobs: the `Job` wire shape, the arguments of the manager's calls, the `JobStore` seam and
 * events. `types.ts` re-exports them with the manager's options; modules that the engine seam reaches import this
 * file, so that no import circle runs through the options (see docs/architecture.md).
 * @module
 */
import type { Awaitable } from '../awaitable.js';
import type { ErrorCode } from '../errors.js';
import type { Status, VerificationResult } from '../result.js';
import type { Verifier } from '../verifier.js';
import type { WebhookEventType } from '../webhooks/log.js';
import type { JobWebhook, SharedWebhook } from '../webhooks/share.js';
import type { HeldBytes } from './held-bytes.js';

/**
 * The state of a job. The only transitions are `queued → processing → complete`, `queued → complete` (started
 * with no address), `complete → processing` (an add reopens it), `queued → failed` and `processing → failed`
 * (see docs/bulk.md).
 */
export type JobStatus = 'queued' | 'processing' | 'complete' | 'failed';

/** Every {@link JobStatus}, in lifecycle order. */
export const JOB_STATUSES: readonly JobStatus[] = Object.freeze([
  'queued',
  'processing',
  'complete',
  'failed',
]);

/** Why a job failed: a stable code and a message for humans. */
export interface JobError {
  /** Stable code: `store_error` (the store threw), `disposed` (the manager or its verifier was closed first). */
  readonly code: ErrorCode;
  /** Human-readable description; may change between versions. */
  readonly message: string;
}

/**
 * A bulk job as the API returns it (snake_case wire shape). Every read returns a fresh snapshot.
 * Times are ISO 8601 strings in UTC (`2024-05-01T12:00:00.000Z`), or `null` while the moment has not come.
 */
export interface Job {
  /** Unguessable identifier (a random UUID by default: 122 random bits). */
  readonly id: string;
  /** Name given at creation, or `null`. */
  readonly name: string | null;
  /** Lifecycle state. */
  readonly status: JobStatus;
  /** Number of addresses (positions) in the job, duplicates included. */
  readonly total: number;
  /** Number of positions with a final result. Never decreases. */
  readonly completed: number;
  /** `completed / total`, or `0` when `total` is `0`. */
  readonly progress: number;
  /** When the job was created. */
  readonly created_at: string;
  /** When the job entered `processing`, or `null`. */
  readonly started_at: string | null;
  /** When the job entered `complete` or `failed`, or `null`. */
  readonly completed_at: string | null;
  /** Number of final results per status (every status is present, zeros included). */
  readonly counts: Readonly<Record<Status, number>>;
  /** Why the job failed; `null` unless `status` is `failed`. */
  readonly error: JobError | null;
  /** Positions waiting for a greylisting retry, and when the next retry is due. */
  readonly retries: JobRetries;
}

/** The greylisting retries of a job, as {@link Job} shows them. */
export interface JobRetries {
  /** Positions whose greylisted answer waits for a retry (they are not yet `completed`). */
  readonly waiting: number;
  /** When the earliest of them is retried (ISO 8601), or `null` when none waits. */
  readonly next_retry_at: string | null;
  /** The job's retry schedule: delays after the first, second, ... greylisted answer, in milliseconds. */
  readonly delays_ms: readonly number[];
}

/** Input of {@link BulkJobManagerApi.create}. */
export interface CreateJobInput {
  /** A label for the job: at most 256 characters, no control characters. @default null */
  readonly name?: string;
  /** Addresses to start with (same rules as `add`). @default [] */
  readonly emails?: readonly string[];
  /** Start processing as soon as the job has addresses; with `false` it waits for `start()`. @default true */
  readonly autoStart?: boolean;
  /**
   * Tenant that owns the job; the job is visible only to calls that pass the same `owner`. It is also the namespace
   * of the known results its verifications read and write (`knownResultsNamespace`). @default none
   */
  readonly owner?: string;
  /**
   * Ask every mail server again even when the verifier keeps a known result (its `knownResults` option); the new
   * answers are kept. In process it is held in memory (a job resumed from a durable store after a restart reads known
   * results again); a worker fleet's runner keeps it with the job, so every worker asks again. @default false
   */
  readonly fresh?: boolean;
  /**
   * This job's greylisting retries: delays in milliseconds (at most 10, each 0-86,400,000); `[]` takes a
   * greylisted answer as final at once. @default the manager's `greylistRetry.delaysMs`
   */
  readonly greylistRetry?: { readonly delaysMs: readonly number[] };
  /**
   * A signed webhook for this job's events (`{ url, events? }`, see docs/events.md); needs the manager's
   * `webhooks` option. The URL is checked before the job exists: a refused one (`webhook_refused`) makes no job.
   * @default none
   */
  readonly webhook?: { readonly url: string; readonly events?: readonly string[] };
  /**
   * The CSV rows these addresses came from (one per address, in order): the first source fixes the job's header,
   * and a CSV download of the results gives each row's cells back in front of the result columns.
   * @default none
   */
  readonly source?: SourceRowsInput;
}

/**
 * The header of the file a job's addresses came from. Addresses added without a row (a JSON add) read as empty
 * cells but the address, in `emailColumn`.
 */
export interface JobSource {
  /** Column names, in the file's order (empty or repeated names are kept as they are). */
  readonly columns: readonly string[];
  /** Index of the address column in `columns`. */
  readonly emailColumn: number;
}

/**
 * The rows that go with the addresses of a `create` or `add` (see {@link CreateJobInput.source}): at most
 * 1,000 columns, and each row at most 65,536 characters once re-encoded as a CSV line. A job whose header is
 * already set takes only the same `columns` (in the same order); otherwise the call throws `invalid_request`
 * and adds nothing.
 */
export interface SourceRowsInput extends JobSource {
  /** One row per address, in the order of the addresses: exactly `columns.length` cells each. */
  readonly rows: readonly (readonly string[])[];
}

/** Options of {@link BulkJobManagerApi.add}. */
export interface AddOptions extends JobAccess {
  /** The CSV rows of the addresses (see {@link CreateJobInput.source}). @default none */
  readonly source?: SourceRowsInput;
}

/** A page of {@link BulkJobManagerApi.sourceResults}: the results and, for a job with a header, their rows. */
export interface SourcedResults {
  /** The job's header, or `null` when no address came with a row. */
  readonly source: JobSource | null;
  /** The results, as {@link BulkJobManagerApi.results} returns them. */
  readonly results: VerificationResult[];
  /**
   * The cells of each result's row (`rows[i]` goes with `results[i]`), `source.columns.length` each; empty cells
   * but the address for an address added without a row. Empty when `source` is `null`.
   */
  readonly rows: string[][];
}

/**
 * Who is asking. A job is visible only when `owner` equals the job's owner (both absent counts as equal);
 * an invisible job behaves exactly like a missing one.
 */
export interface JobAccess {
  /** The caller's tenant. @default none */
  readonly owner?: string;
}

/** Options of {@link BulkJobManagerApi.list}. */
export interface ListJobsOptions extends JobAccess {
  /** Jobs to skip, in creation order (oldest first). @default 0 */
  readonly offset?: number;
  /** Most jobs to return. @default all */
  readonly limit?: number;
}

/** One page of jobs. */
export interface JobList {
  /** The jobs of the page, oldest first. */
  readonly jobs: Job[];
  /** Number of jobs visible to the caller in all pages. */
  readonly total: number;
}

/** Options of {@link BulkJobManagerApi.results}. */
export interface ResultsOptions extends JobAccess {
  /** First input position to read. @default 0 */
  readonly offset?: number;
  /** Most input positions to read. @default all */
  readonly limit?: number;
  /**
   * Read before the job is complete: positions without a final result yet are skipped, so a page may hold
   * fewer than `limit` results. Without it, reading a job that is not complete throws. @default false
   */
  readonly partial?: boolean;
}

/** Options of {@link BulkJobManagerApi.stream}. */
export interface StreamOptions extends JobAccess {
  /** First input position to yield. @default 0 */
  readonly offset?: number;
}

/** The part of a {@link Verifier} the manager needs; fakes in tests implement just this. */
export type BulkVerifier = Pick<Verifier, 'verify'>;

export type { Clock } from '../clock.js';

/** How greylisted results are retried. */
export interface GreylistRetryOptions {
  /**
   * Delay before each retry, in milliseconds: one retry per entry. `[]` turns retries off.
   * @default [60000, 300000, 900000]
   */
  readonly delaysMs?: readonly number[];
}

/** What `GET /healthz` reports of a worker fleet. */
export interface FleetHealth {
  /** `up` when the queue (Redis) answers, else `down`. */
  readonly queue: 'up' | 'down';
  /** Workers whose heartbeat is live. */
  readonly workers: number;
}

/**
 * What `BulkJobManager.storeHealth()` reports: `memory` (the store is not durable), `up`, `down` (the database
 * does not answer) or `damaged` (it answers, but found {@link StoreDamage} when it opened).
 */
export type StoreHealth = 'memory' | 'up' | 'down' | 'damaged';

/** A job whose stored results disagree with its record, found when a durable store opened. */
export interface StoreDamage {
  /** The damaged job, or `null` for damage of the store as a whole (its jobs cannot be listed). */
  readonly jobId: string | null;
  /** What is wrong, for the operator: `complete with 20000 results, 10000 stored`. */
  readonly problem: string;
}

export type { Awaitable } from '../awaitable.js';

/**
 * A job's metadata as the manager hands it to the store. Times are milliseconds since the epoch.
 * The store must not change it; the manager passes a fresh copy on each save.
 */
export interface JobRecord {
  readonly id: string;
  /** Owning tenant, or `null`. */
  readonly owner: string | null;
  readonly name: string | null;
  readonly status: JobStatus;
  readonly total: number;
  readonly completed: number;
  readonly counts: Readonly<Record<Status, number>>;
  readonly createdAt: number;
  readonly startedAt: number | null;
  readonly completedAt: number | null;
  readonly error: JobError | null;
  /** The job's greylisting retry delays, in milliseconds. */
  readonly greylistDelaysMs: readonly number[];
  /**
   * The job runs as soon as it has addresses (`autoStart`, or `start()` was called). Durable stores keep it so
   * that a recovered `queued` job starts only if it was started. @default false
   */
  readonly armed?: boolean;
  /**
   * The job's header, set by its first rows and then never changed. A store keeps it with the job (a durable
   * store returns it from `getJob`, `listJobs` and `claimJobs`). @default null
   */
  readonly source?: JobSource | null;
  /**
   * The job asks every mail server again, known results notwithstanding (`CreateJobInput.fresh`). Kept by the fleet's
   * store (every worker reads it); the in-process engine holds it in memory instead. @default false
   */
  readonly fresh?: boolean;
}

/**
 * Where a manager keeps jobs and their results. The manager calls it only through this interface, one call at
 * a time per job, in order; a throw (or rejection) fails the job with code `store_error`.
 * See docs/bulk.md for the contract.
 */
export interface JobStore {
  /** Creates or replaces a job's metadata. Called at creation and after every change. */
  saveJob(record: JobRecord): Awaitable<void>;
  /**
   * Records final results: `results[i]` is the result at input position `positions[i]`. A position is written
   * once: a second write of a written position is a no-op, so that a position verified twice (after a crash)
   * still has one result. The same result object may appear at several positions (duplicates of one address).
   * The manager passes `commit` only to a {@link DurableJobStore}: its record and retries are written in the
   * same transaction as the results.
   */
  putResults(
    id: string,
    positions: readonly number[],
    results: readonly VerificationResult[],
    commit?: ResultCommit,
  ): Awaitable<void>;
  /**
   * Reads positions `offset` to `offset + limit - 1`: an array of length `limit`, with `undefined` where no
   * result was written. Each result is a fresh object that the caller may keep or change.
   */
  getResults(
    id: string,
    offset: number,
    limit: number,
  ): Awaitable<ReadonlyArray<VerificationResult | undefined>>;
  /**
   * Keeps source rows: `rows[i]` (a CSV line, see `JobSource`) is the row of position `first + i`. Rows are
   * written once, before any result of their positions. Optional: a store without it refuses jobs with a source
   * (the manager throws `invalid_request`). A {@link DurableJobStore} takes rows through `putInputs` instead.
   */
  putRows?(id: string, first: number, rows: readonly string[]): Awaitable<void>;
  /**
   * Reads the rows of positions `offset` to `offset + limit - 1`: an array of length `limit`, with `undefined`
   * where no row was written. Required with `putRows` (and of every durable store).
   */
  getRows?(id: string, offset: number, limit: number): Awaitable<ReadonlyArray<string | undefined>>;
  /** Forgets a job and its results. Deleting an unknown job is not an error. */
  deleteJob(id: string): Awaitable<void>;
  /** Releases the store's resources; called once by `BulkJobManager.close()`. Optional. */
  close?(): Awaitable<void>;
}

/** A greylisted position waiting for its retry, as a {@link DurableJobStore} keeps it. */
export interface StoredRetry {
  /** Input position. */
  readonly position: number;
  /** The retry it waits for: 1 for the first. */
  readonly attempt: number;
  /** When the retry is due, in milliseconds since the epoch. */
  readonly dueAt: number;
  /** The greylisted result, final if the job fails before the retry. */
  readonly result: VerificationResult;
}

/** What a durable store writes in the same transaction as a batch of results. */
export interface ResultCommit {
  /** The job's metadata after the batch (its `completed` and `counts` include it). */
  readonly record: JobRecord;
  /** Positions that start waiting for a greylisting retry (replacing an earlier wait of the same position). */
  readonly retries: readonly StoredRetry[];
}

/**
 * A {@link JobStore} that outlives the process (`pgliteStore`, `postgresStore` in `mailvet/postgres`). Beyond
 * the base seam it keeps each job's inputs and pending greylisting retries, so that a manager opened on it
 * resumes unfinished jobs, and it leases unfinished jobs to one store instance at a time, so that two managers
 * on one database never process the same job at once. See docs/bulk.md, "Durable jobs".
 */
export interface DurableJobStore extends JobStore {
  /** Marks the store as durable: the manager recovers jobs from it and keeps jobs unfinished on `close()`. */
  readonly durable: true;
  /** How long a lease lasts without renewal, in milliseconds; the manager renews at a third of it. */
  readonly leaseMs: number;
  /**
   * Saves `record` and the inputs at positions `first`, `first + 1`, ... in one transaction; a new job is leased
   * to this store. With `rows` (one CSV line per address) it keeps them too, and the job's `record.source` if
   * it has none yet. Throws `lease_lost` when another store holds the job.
   */
  putInputs(
    record: JobRecord,
    first: number,
    emails: readonly string[],
    rows?: readonly string[],
  ): Promise<void>;
  /** Reads the rows of positions `offset` to `offset + limit - 1` (`undefined` where none was written). */
  getRows(id: string, offset: number, limit: number): Promise<(string | undefined)[]>;
  /** Reads `limit` inputs from position `offset` (fewer at the end of the job). */
  getInputs(id: string, offset: number, limit: number): Promise<string[]>;
  /** The positions of a job that have a final result, in any order. */
  finalPositions(id: string): Promise<number[]>;
  /**
   * The results at `positions` (any order, repeats allowed), in the same order; `undefined` where a position has
   * none. One round trip for what `getResults` would read one range at a time: the manager fills the duplicates
   * of addresses verified in an earlier window with it.
   */
  getResultsAt(id: string, positions: readonly number[]): Promise<(VerificationResult | undefined)[]>;
  /** The positions of a job waiting for a greylisting retry. */
  getRetries(id: string): Promise<StoredRetry[]>;
  /**
   * Every job, oldest first, as last saved (an unfinished job's `completed` and `counts` may trail its results
   * when another store is writing them).
   */
  listJobs(): Promise<JobRecord[]>;
  /** One job as last saved, or `undefined` when it does not exist. */
  getJob(id: string): Promise<JobRecord | undefined>;
  /**
   * Leases to this store every unfinished job whose lease is free or has expired, and returns them (the jobs
   * it newly holds), oldest first, with `completed` and `counts` recounted from the stored results.
   */
  claimJobs(): Promise<JobRecord[]>;
  /** Extends this store's leases; returns the ids of the unfinished jobs it still holds. */
  renewLeases(): Promise<string[]>;
  /** Gives up this store's leases at once, so that another manager may take the jobs over without waiting. */
  releaseLeases(): Promise<void>;
  /** Resolves when the database answers a trivial query; rejects otherwise (`GET /healthz`). */
  ping(): Promise<void>;
  /**
   * Damage found when the store opened (a `complete` job whose results cannot all be read); empty or absent
   * when none. `storeHealth()` is then `damaged`.
   */
  readonly damage?: readonly StoreDamage[];
  /**
   * Keeps job `id`'s webhook (its URL and events, never a secret) with the job, so that a restarted server
   * delivers its events. With the two methods below; a store without them forgets webhooks on a restart.
   * @default none
   */
  setWebhook?(
    id: string,
    webhook: { readonly url: string; readonly events: readonly WebhookEventType[] },
  ): Promise<void>;
  /** The webhook of job `id` with its owner, if the job exists and has one. @default none */
  webhookOf?(id: string): Promise<SharedWebhook | undefined>;
  /** The webhooks of the `queued` and `processing` jobs (not a fleet's), oldest first. @default none */
  unfinishedWebhooks?(): Promise<JobWebhook[]>;
}

/** True when `store` is a {@link DurableJobStore}. */
export function isDurableStore(store: JobStore): store is DurableJobStore {
  return (store as Partial<DurableJobStore>).durable === true;
}

/**
 * Events of the manager. Each listener receives a snapshot of the job. `created` follows a `create` on this
 * manager; `started` the move of a job to `processing` (its first verification here, or a fleet job queued);
 * `progress`, `complete` and `failed` as results come and the job ends.
 */
export type JobEventName = 'created' | 'started' | 'progress' | 'complete' | 'failed';

/**
 * A listener of {@link JobEventName}. Exceptions thrown by a listener do not affect the job: they are
 * re-thrown in a separate microtask (an uncaught exception, as for a browser `EventTarget`).
 */
export type JobListener = (job: Job) => void;

/**
 * The operations of `BulkJobManager`. Every method is asynchronous so that stores may be; each throws a
 * `MailvetError` with a stable code on misuse: `job_not_found` (missing, deleted or another owner's job),
 * `job_finished`, `job_not_complete`, `job_failed`, `limit_exceeded`, `invalid_request`, `store_error`,
 * `disposed` (after `close()`).
 */
export interface BulkJobManagerApi {
  /** Creates a job; with addresses and `autoStart` (the default) it starts processing them. */
  create(input?: CreateJobInput): Promise<Job>;
  /** Adds addresses (with their CSV rows, if `options.source`) to a `queued` or `processing` job; its `total` grows. */
  add(id: string, emails: readonly string[], access?: AddOptions): Promise<Job>;
  /** Starts a job created with `autoStart: false`. Idempotent while the job is `queued` or `processing`. */
  start(id: string, access?: JobAccess): Promise<Job>;
  /** The job, or `undefined` when it is missing or not visible to the caller. */
  get(id: string, access?: JobAccess): Promise<Job | undefined>;
  /** The caller's jobs, oldest first. */
  list(options?: ListJobsOptions): Promise<JobList>;
  /** A page of results in input order. */
  results(id: string, options?: ResultsOptions): Promise<VerificationResult[]>;
  /**
   * A page of results as {@link BulkJobManagerApi.results} reads it, with the job's header and each result's
   * source row (for a CSV download with the file's own columns).
   */
  sourceResults(id: string, options?: ResultsOptions): Promise<SourcedResults>;
  /** Results in input order, each as soon as it and every earlier one are final. */
  stream(id: string, options?: StreamOptions): AsyncIterable<VerificationResult>;
  /** Ends the job's waiting greylisting retries with their last verdict, so that it completes at once. */
  finish(id: string, access?: JobAccess): Promise<Job>;
  /** Stops the job's work and forgets it and its results. */
  delete(id: string, access?: JobAccess): Promise<void>;
  /** Subscribes to an event; returns a function that unsubscribes. */
  on(event: JobEventName, listener: JobListener): () => void;
  /** Stops taking work, settles verifications in flight, fails unfinished jobs, releases the verifier and store. */
  close(): Promise<void>;
  /** The job store's state for `GET /healthz`; absent means `memory`. */
  storeHealth?(timeoutMs?: number): Promise<StoreHealth>;
  /** The worker fleet's state for `GET /healthz`; absent or `undefined` without a fleet. */
  fleetHealth?(timeoutMs?: number): Promise<FleetHealth | undefined>;
  /**
   * The bytes held by the caller's jobs and by all jobs (addresses, kept rows, names); absent when the manager does
   * not count them (the HTTP adapter's byte budgets are then not checked).
   */
  heldBytes?(access?: JobAccess): HeldBytes;
}
