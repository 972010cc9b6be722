/**
 * The lines `serve` and `worker` log about bulk jobs: one per transition (created, started, complete, failed) with
 * the job's counts and duration. Never a job's name (the tenant's free text) nor its owner (a tenant).
 * @module
 */
import type { Job, JobEventName } from '../bulk/job-types.js';
import type { JobRecord } from '../bulk/types.js';
import type { WorkerJobEvent } from '../bullmq/worker.js';
import { errorText } from '../io/log-text.js';
import type { CliLogger } from './logger.js';

/** The transitions logged, and the level of each. */
const TRANSITIONS = [
  ['created', 'info'],
  ['started', 'info'],
  ['complete', 'info'],
  ['failed', 'warn'],
] as const satisfies readonly (readonly [JobEventName, 'info' | 'warn'])[];

/** What a manager offers to be watched: `on`, as `BulkJobManager` has it. */
export interface WatchedJobs {
  on(event: JobEventName, listener: (job: Job) => void): () => void;
}

/** Milliseconds between two ISO times, or `null` when either is missing. */
function between(from: string | null, to: string | null): number | null {
  if (from === null || to === null) return null;
  return Date.parse(to) - Date.parse(from);
}

/** The fields of a job's line. */
function jobFields(job: Job, addresses: boolean) {
  return {
    job_id: job.id,
    status: job.status,
    total: job.total,
    completed: job.completed,
    counts: job.counts,
    duration_ms: between(job.started_at ?? job.created_at, job.completed_at),
    ...(job.error === null
      ? {}
      : { error: { code: job.error.code, message: errorText(job.error.message, addresses) } }),
  };
}

/**
 * Logs a line per transition of `jobs`' jobs (`msg`: `job created`, `job started`, `job complete`, `job failed`).
 * Returns a function that stops it. Subscribes nothing when `info` is off.
 */
export function logJobs(jobs: WatchedJobs, logger: CliLogger): () => void {
  const { log, addresses } = logger;
  const offs: (() => void)[] = [];
  for (const [event, level] of TRANSITIONS) {
    if (!log.isLevelEnabled(level)) continue;
    offs.push(jobs.on(event, (job) => log[level](jobFields(job, addresses), `job ${event}`)));
  }
  return () => {
    for (const off of offs) off();
  };
}

/** The fields of a worker's line about a job record. */
function recordFields(record: JobRecord, addresses: boolean) {
  return {
    job_id: record.id,
    status: record.status,
    total: record.total,
    completed: record.completed,
    counts: record.counts,
    duration_ms:
      record.completedAt === null ? null : record.completedAt - (record.startedAt ?? record.createdAt),
    ...(record.error === null
      ? {}
      : { error: { code: record.error.code, message: errorText(record.error.message, addresses) } }),
  };
}

/**
 * The `onJob` of a fleet worker: `job complete` and `job failed` lines for the jobs this worker ended, and a
 * `debug` line per chunk committed (`chunk done`, with the results it wrote).
 */
export function workerJobLog(logger: CliLogger): (event: WorkerJobEvent) => void {
  const { log, addresses } = logger;
  return ({ event, record, written }) => {
    if (event === 'chunk') {
      if (log.isLevelEnabled('debug'))
        log.debug({ ...recordFields(record, addresses), written }, 'chunk done');
    } else if (event === 'complete') {
      log.info(recordFields(record, addresses), 'job complete');
    } else {
      log.warn(recordFields(record, addresses), 'job failed');
    }
  };
}
