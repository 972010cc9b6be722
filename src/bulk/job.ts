/**
 * The manager's live state of one job, and its conversions to the wire `Job` and the store's `JobRecord`.
 * @module
 */
import { isStatus, STATUSES, type Status, type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import type { RetrySchedule } from './retry.js';
import type { Job, JobError, JobRecord, JobSource, JobStatus, StoredRetry } from './types.js';
import type { JobWork, RestoredPositions } from './work.js';

/** Everything the manager knows about a job it holds. */
export interface LiveJob {
  readonly id: string;
  readonly owner: string | null;
  readonly name: string | null;
  status: JobStatus;
  total: number;
  /** Positions whose final result reached the store (or `unsaved`). */
  completed: number;
  readonly counts: Record<Status, number>;
  readonly createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  error: JobError | null;
  /** `autoStart` or `start()`: the job runs as soon as it has addresses. */
  armed: boolean;
  /** The header of the job's source rows, set by its first rows; `null` while it has none. */
  source: JobSource | null;
  deleted: boolean;
  /**
   * Durable stores: another process holds the job's lease. The job is read-only here (refreshed from the
   * store) until that lease expires and this manager takes the job over.
   */
  foreign: boolean;
  /** Durable stores: reads of the job's record begun here; a claim counts as one. */
  reads: number;
  /** The number of the newest read applied to the job: an older read that answers later is dropped. */
  readApplied: number;
  /** Pending work; `null` once the job is finished and nothing of it is in flight. */
  work: JobWork | null;
  /** Durable stores: positions below this were read from the store into `work` (see the manager's window). */
  loadedUpTo: number;
  /** Durable stores: positions below this have their inputs committed to the store. */
  storedUpTo: number;
  /** Durable stores: a window is being read. */
  loading: boolean;
  /** A recovered job: what the store said of its positions below `upTo` when it was taken over. */
  restored: (RestoredPositions & { readonly upTo: number }) | null;
  /** Greylisting retries waiting for their delay. */
  retries: RetrySchedule | null;
  /** This job's greylisting retry delays (its own, or the manager's); `[]` once the job was finished early. */
  greylistDelaysMs: readonly number[];
  /** The last greylisted result of each position waiting for (or in) a retry. */
  readonly interim: Map<number, VerificationResult>;
  inFlight: number;
  /** Final results not yet handed to the store. */
  bufferPositions: number[];
  bufferResults: VerificationResult[];
  /** Durable stores: final results accounted for but not yet committed (with the record, in one transaction). */
  commitPositions: number[];
  commitResults: VerificationResult[];
  /** Durable stores: greylisted positions that started waiting since the last commit. */
  retryWrites: StoredRetry[];
  /** Results the store refused (it threw): kept here so that none is lost. */
  unsaved: Map<number, VerificationResult> | null;
  storeBroken: boolean;
  /** Metadata changed since the last save. */
  dirty: boolean;
  /** Store calls of this job, in order. Never rejects. */
  chain: Promise<void>;
  flushQueued: boolean;
  /** `performance.now()` of the last flush. */
  flushedAt: number;
  /** In the manager's ready queue. */
  inReady: boolean;
  /** Streams waiting for this job to change. */
  waiters: (() => void)[];
  /** Bumped on every change that a stream may wait for. */
  version: number;
}

/** The fields a new (or recovered) job starts from; the rest start empty. */
export type JobStart = Pick<
  LiveJob,
  | 'id'
  | 'owner'
  | 'name'
  | 'status'
  | 'total'
  | 'completed'
  | 'counts'
  | 'createdAt'
  | 'startedAt'
  | 'completedAt'
  | 'error'
  | 'armed'
  | 'source'
  | 'work'
  | 'greylistDelaysMs'
>;

/** A job's live state with nothing in flight, buffered or waiting. */
export function liveJob(start: JobStart): LiveJob {
  return {
    ...start,
    deleted: false,
    foreign: false,
    reads: 0,
    readApplied: 0,
    loadedUpTo: 0,
    storedUpTo: 0,
    loading: false,
    restored: null,
    retries: null,
    interim: new Map(),
    inFlight: 0,
    bufferPositions: [],
    bufferResults: [],
    commitPositions: [],
    commitResults: [],
    retryWrites: [],
    unsaved: null,
    storeBroken: false,
    dirty: false,
    chain: Promise.resolve(),
    flushQueued: false,
    flushedAt: performance.now(),
    inReady: false,
    waiters: [],
    version: 0,
  };
}

/** The live state of a job read back from a store (its work, if any, is restored separately). */
export function liveJobOf(record: JobRecord): LiveJob {
  const job = liveJob({
    id: record.id,
    owner: record.owner,
    name: record.name,
    status: record.status,
    total: record.total,
    completed: record.completed,
    counts: { ...zeroCounts(), ...record.counts },
    createdAt: record.createdAt,
    startedAt: record.startedAt,
    completedAt: record.completedAt,
    error: record.error,
    armed: record.armed ?? false,
    source: record.source ?? null,
    work: null,
    greylistDelaysMs: record.greylistDelaysMs,
  });
  // Its inputs are stored and, unless the job is recovered (which reads them again), done with.
  job.loadedUpTo = record.total;
  job.storedUpTo = record.total;
  return job;
}

/** Copies what may have changed in the store into a job this manager does not process (or just took over). */
export function refreshJob(job: LiveJob, record: JobRecord): void {
  job.status = record.status;
  job.total = record.total;
  job.completed = record.completed;
  Object.assign(job.counts, record.counts);
  job.startedAt = record.startedAt;
  job.completedAt = record.completedAt;
  job.error = record.error;
  job.armed = record.armed ?? false;
  job.source = record.source ?? null;
}

/** True for `complete` and `failed`. */
export function isFinished(job: LiveJob): boolean {
  return job.status === 'complete' || job.status === 'failed';
}

/** A zero count for every status. */
export function zeroCounts(): Record<Status, number> {
  const counts = {} as Record<Status, number>;
  for (const status of STATUSES) counts[status] = 0;
  return counts;
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** The wire shape of a job, as a fresh object. */
export function snapshot(job: LiveJob): Job {
  return {
    id: job.id,
    name: job.name,
    status: job.status,
    total: job.total,
    completed: job.completed,
    progress: job.total === 0 ? 0 : job.completed / job.total,
    created_at: new Date(job.createdAt).toISOString(),
    started_at: iso(job.startedAt),
    completed_at: iso(job.completedAt),
    counts: { ...job.counts },
    error: job.error === null ? null : { ...job.error },
    retries: {
      waiting: job.retries?.size ?? 0,
      next_retry_at: iso(job.retries?.nextDue ?? null),
      delays_ms: job.greylistDelaysMs,
    },
  };
}

/** The store's copy of a job's metadata. */
export function recordOf(job: LiveJob): JobRecord {
  return {
    id: job.id,
    owner: job.owner,
    name: job.name,
    status: job.status,
    total: job.total,
    completed: job.completed,
    counts: { ...job.counts },
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    error: job.error,
    greylistDelaysMs: job.greylistDelaysMs,
    armed: job.armed,
    source: job.source,
  };
}

/** True when a verifier's answer looks like a result (a misbehaving verifier's answer does not). */
export function isResult(value: unknown): value is VerificationResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as VerificationResult).email === 'string' &&
    isStatus((value as VerificationResult).status)
  );
}

/** The result of an address whose verification threw: `unknown` / `exception_occurred`. */
export function exceptionResult(email: string): VerificationResult {
  return verdictOnlyResult(email, verdictOf('exception_occurred'));
}
