/**
 * The runner seam of `BulkJobManager`: where a manager's jobs are verified. Without a runner they are verified
 * in process (the default); a runner such as `bullmqRunner` (`mailvet/bullmq`) takes the jobs to a worker fleet.
 * Also the part of a durable store that a fleet needs ({@link FleetJobStore}).
 * @module
 */
import type { VerificationResult } from '../result.js';
import type { WebhookEventType } from '../webhooks/log.js';
import type { SharedWebhook, WebhookShare } from '../webhooks/share.js';
import type {
  Clock,
  DurableJobStore,
  FleetHealth,
  Job,
  JobError,
  JobList,
  JobRecord,
  JobSource,
  JobStatus,
  JobStore,
  StoredRetry,
  StoreHealth,
} from './job-types.js';
import type { JobEvents } from './listeners.js';
import type { JobRules } from './rules.js';
import type { EncodedSource } from './source.js';

export type { FleetHealth } from './job-types.js';

/** What a job engine gets from the manager: its validated options, its rules and its listener table. */
export interface RunnerContext {
  /** The manager's store. */
  readonly store: JobStore;
  /** Most jobs held at once. */
  readonly maxJobs: number;
  /** Most addresses in one job. */
  readonly maxAddressesPerJob: number;
  /** Most addresses in one `create` or `add`. */
  readonly maxAddressesPerAdd: number;
  /** Longest accepted address. */
  readonly maxEmailLength: number;
  /** The default greylisting delays of a job, in milliseconds. */
  readonly greylistDelaysMs: readonly number[];
  /** How long finished jobs are kept, in milliseconds (`0`: until deleted). */
  readonly retentionMs: number;
  /** Time source. */
  readonly clock: Clock;
  /** Makes job ids (unchecked: {@link JobRules.newId} checks them). */
  readonly ids: () => string;
  /** The manager's checks of a job's state, for the engine to run where it knows that state. */
  readonly rules: JobRules;
  /** The manager's listener table: the engine tells it `progress`, `complete` and `failed`. */
  readonly events: JobEvents;
  /** Called when the engine forgets a job (deleted, or past its retention): the manager detaches its webhook. */
  readonly forgotten: (id: string) => void;
}

/** A job to create, its input validated by the manager. */
export interface NewJob {
  readonly owner: string | null;
  readonly name: string | null;
  /** Starts as soon as it has addresses (`autoStart`). */
  readonly autoStart: boolean;
  /** The first addresses, trimmed and checked. */
  readonly emails: readonly string[];
  /** Their rows, checked and encoded, if given. */
  readonly source: EncodedSource | undefined;
  /** The job's own greylisting delays, or `null` for the manager's. */
  readonly greylistDelaysMs: readonly number[] | null;
  /** Ask every mail server again, known results notwithstanding (`CreateJobInput.fresh`). */
  readonly fresh: boolean;
  /** Runs once the job is saved and before it can start (the manager attaches its webhook there). */
  readonly attach: ((id: string) => Promise<void>) | undefined;
}

/** A job as a read of its results sees it: its state now, and how to read its positions and rows. */
export interface ResultsView {
  readonly status: JobStatus;
  readonly total: number;
  /** The job's header, or `null`. */
  readonly source: JobSource | null;
  /** The job's wire shape (for the error that a read of an unfinished job throws). */
  snapshot(): Job | Promise<Job>;
  /** Positions `offset` to `offset + count - 1`, `undefined` where none is final. */
  results(offset: number, count: number): Promise<(VerificationResult | undefined)[]>;
  /** The rows of positions `offset` to `offset + count - 1`, `undefined` where none was kept. */
  rows(offset: number, count: number): Promise<ReadonlyArray<string | undefined>>;
}

/**
 * Where a manager's jobs live and are verified: the manager checks every call's input and the caller's access to
 * it, and hands the call to its engine (the in-process one, or a runner's). Calls get validated input and the
 * caller's owner; an engine applies {@link RunnerContext.rules} where it knows the job's state and tells
 * {@link RunnerContext.events}. See docs/architecture.md, "Jobs".
 */
export interface JobEngine {
  /** True when the engine keeps source rows (a `source` is refused otherwise). */
  readonly keepsRows: boolean;
  /** Resolves once the engine is ready (its store, and queue, answer); rejects with a coded error otherwise. */
  opened(): Promise<void>;
  /** The job store's state for `GET /healthz`. */
  storeHealth(timeoutMs: number): Promise<StoreHealth>;
  /** The fleet's state for `GET /healthz`; `undefined` without a fleet. */
  fleetHealth(timeoutMs: number): Promise<FleetHealth | undefined>;
  /** How the webhook notifiers of the API nodes share jobs' webhooks; `undefined` when they need not. */
  webhookShare(): WebhookShare | undefined;
  /** Creates a job (checking {@link JobRules.admitJob}) and returns it as created. */
  create(job: NewJob): Promise<Job>;
  /** Adds addresses to job `id` of `owner` (checking {@link JobRules.admitAdd}). */
  add(
    id: string,
    owner: string | null,
    emails: readonly string[],
    source: EncodedSource | undefined,
  ): Promise<Job>;
  /** Starts job `id` of `owner` (checking {@link JobRules.admitStart}). */
  start(id: string, owner: string | null): Promise<Job>;
  /**
   * Finishes job `id` of `owner` now (checking {@link JobRules.admitFinish}): its waiting greylisting retries end
   * with their last result, it retries nothing more, and it completes once nothing else is left. Returns the job.
   */
  finish(id: string, owner: string | null): Promise<Job>;
  /** The job, or `undefined` when it is missing or another owner's. */
  get(id: string, owner: string | null): Promise<Job | undefined>;
  /** A page of `owner`'s jobs, oldest first. */
  list(owner: string | null, offset: number, limit: number): Promise<JobList>;
  /** Job `id` of `owner` for a read of its results; `job_not_found` when it is missing or another owner's. */
  view(id: string, owner: string | null): Promise<ResultsView>;
  /** Results of job `id` of `owner` from `offset`, as `BulkJobManager.stream` yields them. */
  stream(id: string, owner: string | null, offset: number): AsyncIterable<VerificationResult>;
  /** Stops job `id` of `owner` and forgets it and its results. */
  delete(id: string, owner: string | null): Promise<void>;
  /** Stops taking work and releases what the engine holds (its store included). */
  close(): Promise<void>;
}

/**
 * Where a manager's jobs are verified. `open` is called once by the manager's constructor; the manager then
 * hands each call, validated, to the engine that `open` returns (and does not verify anything itself).
 */
export interface JobRunner {
  /** A name for messages, e.g. `bullmq`. */
  readonly name: string;
  /** Starts serving the manager's jobs. */
  open(context: RunnerContext): JobEngine;
}

/** A position to verify, as a fleet chunk carries it. */
export interface FleetItem {
  /** Input position. */
  readonly position: number;
  /** 0 for the first try, n for the n-th greylisting retry. */
  readonly attempt: number;
}

/** What a fleet worker learns of a chunk's positions before it verifies them. */
export interface FleetChunkState {
  /** The job as stored. */
  readonly record: JobRecord;
  /** Positions of the chunk that have a final result. */
  readonly final: ReadonlySet<number>;
  /** Positions of the chunk waiting for a greylisting retry → the retry they wait for. */
  readonly waiting: ReadonlyMap<number, number>;
}

/** The outcome of {@link FleetJobStore.fleetCommit}. */
export interface FleetCommitted {
  /** The job after the commit. */
  readonly record: JobRecord;
  /** Results written now (positions that had one already are not counted). */
  readonly written: number;
  /** True for the one commit that made the job `complete`. */
  readonly completed: boolean;
}

/** Inputs of a fleet job not yet handed to the queue (one row of the store). */
export interface UnqueuedInputs {
  readonly id: string;
  /** Position of the first address. */
  readonly first: number;
  readonly emails: readonly string[];
}

/** A greylisting retry past its due time, for the fallback to any worker. */
export interface OverdueRetry {
  readonly id: string;
  readonly position: number;
  readonly attempt: number;
  readonly email: string;
}

/**
 * A {@link DurableJobStore} that a worker fleet can share (`postgresStore`): fleet jobs have no lease (every API
 * node serves them); workers write results and counts in one transaction, and the job's completion is decided
 * there, exactly once. See docs/scaling.md.
 */
export interface FleetJobStore extends DurableJobStore {
  /**
   * Creates a fleet job with its first addresses (not yet queued), and their `rows` (CSV lines, the header in
   * `record.source`) if given, and `record.fresh` (every worker reads it back with the job). `check` runs in the
   * transaction with the number of fleet jobs stored (it throws to refuse).
   */
  fleetCreate(
    record: JobRecord,
    emails: readonly string[],
    check: (jobs: number) => void,
    rows?: readonly string[],
  ): Promise<void>;
  /**
   * Appends addresses to a fleet job under its row lock. `check` sees the job before the change and throws to
   * refuse. A `complete` job reopens; an armed `queued` one starts. With `source` the addresses' rows (CSV lines)
   * are kept, and its header becomes the job's if it has none (`check` compares them). Returns the job after, or
   * `undefined` when it does not exist.
   */
  fleetAppend(
    id: string,
    emails: readonly string[],
    now: number,
    check: (before: JobRecord) => void,
    source?: { readonly source: JobSource; readonly rows: readonly string[] },
  ): Promise<JobRecord | undefined>;
  /**
   * Arms a fleet job: a `queued` one becomes `processing`, or `complete` if it has no address. `check` sees the job
   * first. Returns the job after and whether it completed now, or `undefined` when it does not exist.
   */
  fleetStart(
    id: string,
    now: number,
    check: (before: JobRecord) => void,
  ): Promise<{ record: JobRecord; completed: boolean } | undefined>;
  /**
   * Inputs of armed, `processing` fleet jobs not yet handed to the queue (of job `id` only, if given), in order: the
   * first `limit` rows of each job (all of them without a limit).
   */
  fleetUnqueued(id?: string, limit?: number): Promise<UnqueuedInputs[]>;
  /**
   * Positions of fleet job `id` handed to the queue that are neither final nor waiting for a greylisting retry: an
   * estimate of the work queued ahead, never above it (0 for a job that is gone).
   */
  fleetAhead(id: string): Promise<number>;
  /** Marks the inputs rows starting at `firsts` of job `id` as handed to the queue. */
  fleetQueued(id: string, firsts: readonly number[]): Promise<void>;
  /** The `processing` fleet jobs. */
  fleetProcessing(): Promise<JobRecord[]>;
  /** The job and what is known of `positions`, or `undefined` when the job does not exist. */
  fleetState(id: string, positions: readonly number[]): Promise<FleetChunkState | undefined>;
  /**
   * In one transaction: writes final results (once per position), greylisting retries (of positions without a
   * result), the job's `completed` and `counts`, and `complete` when every position has a result. Returns
   * `undefined` (and writes nothing) when the job does not exist or has failed.
   */
  fleetCommit(
    id: string,
    positions: readonly number[],
    results: readonly VerificationResult[],
    retries: readonly StoredRetry[],
    now: number,
  ): Promise<FleetCommitted | undefined>;
  /** How many positions of job `id` wait for a greylisting retry, and when the earliest is due (ms, or `null`). */
  fleetWaiting(id: string): Promise<{ count: number; nextDueAt: number | null }>;
  /** Retries of `processing` fleet jobs due before `before` (ms since the epoch), at most `limit`. */
  fleetOverdue(before: number, limit: number): Promise<OverdueRetry[]>;
  /**
   * Fails fleet job `id` with `error`, under its row lock, if it is `queued` or `processing`: positions waiting
   * for a greylisting retry get their last greylisted result as final (as the in-process runner does), and the job
   * becomes `failed` at `now`. Returns the failed job for the one call that failed it, `undefined` otherwise (the
   * job is missing, finished, or failed already).
   */
  fleetFail(id: string, error: JobError, now: number): Promise<JobRecord | undefined>;
  /**
   * Finish now, under the job's row lock: `check` sees the job first (it throws to refuse, returns false when there
   * is nothing to do). Positions waiting for a greylisting retry get their last greylisted result as final, with
   * a `reason` saying no retry was made (`unretriedResult`); the job's delays become `[]` (no worker schedules a
   * retry of it again, and a commit of retries racing this one makes them final the same way); the job is
   * `complete` at `now` when every position has a result. Returns the job after, how many positions were ended,
   * and whether this call completed it; `undefined` when the job does not exist.
   */
  fleetFinish(
    id: string,
    now: number,
    check: (before: JobRecord) => boolean,
  ): Promise<{ record: JobRecord; ended: number; completed: boolean } | undefined>;
  /** Keeps the webhook of fleet job `id` with the job (for every API node). */
  fleetSetWebhook(
    id: string,
    webhook: { readonly url: string; readonly events: readonly WebhookEventType[] },
  ): Promise<void>;
  /** The webhook of fleet job `id` with its owner, if the job exists and has one. */
  fleetWebhook(id: string): Promise<SharedWebhook | undefined>;
}

/** True when `store` can serve a worker fleet. */
export function isFleetStore(store: JobStore): store is FleetJobStore {
  return typeof (store as Partial<FleetJobStore>).fleetCommit === 'function';
}
