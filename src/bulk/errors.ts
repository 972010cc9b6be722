/**
 * Errors of bulk jobs, each with a stable `code` from `ERROR_CODES`.
 * @module
 */
import { MailvetError } from '../errors.js';
import type { Job, JobStatus } from './job-types.js';

export { JobNotFoundError } from '../errors.js';

/** Results were read before the job completed, without `partial: true` (code `job_not_complete`). */
export class JobNotCompleteError extends MailvetError {
  override name = 'JobNotCompleteError';
  /** The job at the time of the call, with its progress. */
  readonly job: Job;

  constructor(job: Job) {
    super('job_not_complete', `the job is ${job.status} (${job.completed} of ${job.total} done)`);
    this.job = job;
  }
}

/** Addresses were added to, or `start` called on, a `complete` or `failed` job (code `job_finished`). */
export class JobFinishedError extends MailvetError {
  override name = 'JobFinishedError';
  readonly status: JobStatus;

  constructor(status: JobStatus) {
    super('job_finished', `the job is ${status} and takes no more addresses`);
    this.status = status;
  }
}

/**
 * `finish` was called on a job that is not `processing`: one not started yet (`queued`) or `failed` (code
 * `job_not_processing`). A `complete` job is not an error: `finish` answers it as it is.
 */
export class JobNotProcessingError extends MailvetError {
  override name = 'JobNotProcessingError';
  readonly status: JobStatus;

  constructor(status: JobStatus) {
    super('job_not_processing', `the job is ${status}: only a processing job can be finished`);
    this.status = status;
  }
}

/** Results of a failed job were read without `partial: true`, or a stream hit the failure (code `job_failed`). */
export class JobFailedError extends MailvetError {
  override name = 'JobFailedError';
  /** The failed job, with its `error`. */
  readonly job: Job;

  constructor(job: Job) {
    super('job_failed', `the job failed: ${job.error?.message ?? 'unknown reason'}`);
    this.job = job;
  }
}

/** Which limit a call ran into. */
export type BulkLimit = 'maxJobs' | 'maxAddressesPerJob' | 'maxAddressesPerAdd';

/** A call would exceed one of the manager's limits; nothing was changed (code `limit_exceeded`). */
export class LimitError extends MailvetError {
  override name = 'LimitError';
  readonly limit: BulkLimit;
  /** The configured maximum. */
  readonly max: number;

  constructor(limit: BulkLimit, max: number, message: string) {
    super('limit_exceeded', `${message} (${limit} is ${max})`);
    this.limit = limit;
    this.max = max;
  }
}

/** A malformed argument: `field` names it (e.g. `emails[3]`, `name`, `offset`) (code `invalid_request`). */
export class JobInputError extends MailvetError {
  override name = 'JobInputError';
  readonly field: string;

  constructor(field: string, message: string) {
    super('invalid_request', `${field} ${message}`);
    this.field = field;
  }
}

/** The job store threw; the original error is the `cause` (code `store_error`). */
export class StoreError extends MailvetError {
  override name = 'StoreError';

  constructor(operation: string, cause: unknown) {
    super('store_error', `the job store failed to ${operation}`, { cause });
  }
}
