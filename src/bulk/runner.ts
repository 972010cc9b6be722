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
  BulkJobManagerApi,
  Clock,
  DurableJobStore,
  JobError,
  JobRecord,
  JobSource,
  JobStore,
  StoredRetry,
  StoreHealth,
} from './types.js';

/** What a {@link JobRunner} gets from the manager: its validated options. */
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
  /** Makes job ids. */
  readonly ids: () => string;
}

/** What `GET /healthz` reports of a worker fleet. */
export interface FleetHealth {
  /** `up` when the queue (Redis) answers, else `down`. */
  readonly queue: 'up' | 'down';
  /** Workers whose heartbeat is live. */
  readonly workers: number;
}

/** The jobs of a manager as a runner serves them: every method of the manager is forwarded to it. */
export interface RunnerJobs extends BulkJobManagerApi {
  /** Resolves once the runner is ready (its store and queue answer); rejects with a coded error otherwise. */
  opened(): Promise<void>;
  /** The job store's state for `GET /healthz`. */
  storeHealth(timeoutMs?: number): Promise<StoreHealth>;
  /** The fleet's state for `GET /healthz`. */
  fleetHealth(timeoutMs?: number): Promise<FleetHealth>;
  /** How the webhook notifiers of the API nodes share jobs' webhooks (see `WebhookNotifierOptions.share`). */
  webhookShare?(): WebhookShare;
}

/**
 * Where a manager's jobs are verified. `open` is called once by the manager's constructor; the manager then
 * forwards each of its methods to what `open` returns (and does not verify anything itself).
 */
export interface JobRunner {
  /** A name for messages, e.g. `bullmq`. */
  readonly name: string;
  /** Starts serving the manager's jobs. */
  open(context: RunnerContext): RunnerJobs;
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
   * `record.source`) if given. `check` runs in the transaction with the number of fleet jobs stored (it throws
   * to refuse).
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
  /** Inputs of armed, `processing` fleet jobs not yet handed to the queue (of job `id` only, if given). */
  fleetUnqueued(id?: string): Promise<UnqueuedInputs[]>;
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
