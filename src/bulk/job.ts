/**
 * The manager's live state of one job, and its conversions to the wire `Job` and the store's `JobRecord`.
 * @module
 */
import { isStatus, STATUSES, type Status, type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import { type JobCalls, jobCalls } from './known-call.js';
import type { RetrySchedule } from './retry.js';
import type { Job, JobError, JobRecord, JobSource, JobStatus } from './types.js';
import type { JobWork } from './work.js';

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
  /** Pending work; `null` once the job is finished and nothing of it is in flight. */
  work: JobWork | null;
  /** Greylisting retries waiting for their delay. */
  retries: RetrySchedule | null;
  /** This job's greylisting retry delays (its own, or the manager's); `[]` once the job was finished early. */
  greylistDelaysMs: readonly number[];
  /** What its verifications tell the verifier about known results (namespace, fresh). */
  readonly calls: JobCalls;
  /** The last greylisted result of each position waiting for (or in) a retry. */
  readonly interim: Map<number, VerificationResult>;
  inFlight: number;
  /** Final results not yet handed to the store. */
  bufferPositions: number[];
  bufferResults: VerificationResult[];
  /** The estimated bytes of `bufferResults` ({@link resultBytes}). */
  bufferBytes: number;
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

/**
 * A job's live state with nothing in flight, buffered or waiting; `fresh` (the job was created with it) makes its
 * verifications ask every mail server again.
 */
export function liveJob(start: JobStart, fresh = false): LiveJob {
  return {
    ...start,
    calls: jobCalls(start.owner, fresh),
    deleted: false,
    retries: null,
    interim: new Map(),
    inFlight: 0,
    bufferPositions: [],
    bufferResults: [],
    bufferBytes: 0,
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

/**
 * The live state of a job read back from a store (its work, if any, is restored separately; a durable store's window
 * takes its inputs as stored and read, bulk/window.ts).
 */
export function liveJobOf(record: JobRecord): LiveJob {
  return liveJob({
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

/** Bytes a result is counted for besides its texts: the object, its numbers and booleans, and its position. */
const RESULT_OVERHEAD_BYTES = 160;

/**
 * The estimated bytes of a result in a job's buffers: a fixed {@link RESULT_OVERHEAD_BYTES} for the object, plus
 * two bytes a character of each of its texts (transcript lines included). Its JSON for the store is smaller.
 */
export function resultBytes(result: VerificationResult): number {
  let chars =
    result.email.length +
    (result.normalized?.length ?? 0) +
    (result.user?.length ?? 0) +
    (result.domain?.length ?? 0) +
    (result.did_you_mean?.length ?? 0) +
    (result.mx_record?.length ?? 0) +
    (result.smtp_provider?.length ?? 0) +
    (typeof result.reason === 'string' ? result.reason.length : 0);
  const transcript = result.smtp_transcript;
  if (Array.isArray(transcript)) {
    for (const line of transcript) chars += typeof line === 'string' ? line.length + 8 : 8;
  }
  return RESULT_OVERHEAD_BYTES + 2 * chars;
}

/** Buffers the final result of `position` for the store, counting its bytes. */
export function bufferResult(
  job: LiveJob,
  position: number,
  result: VerificationResult,
  bytes: number,
): void {
  job.bufferPositions.push(position);
  job.bufferResults.push(result);
  job.bufferBytes += bytes;
}
