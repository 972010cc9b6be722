/**
 * The manager's rules about a job's state (owner, limits, header, finished jobs), as one object that every job
 * engine applies where it knows that state: the in-process engine in memory, the fleet's under the job's row lock.
 * @module
 */
import { OptionsError } from '../errors.js';
import {
  JobFinishedError,
  JobInputError,
  JobNotFoundError,
  JobNotProcessingError,
  LimitError,
} from './errors.js';
import type { JobRecord } from './job-types.js';
import { type EncodedSource, sourceMismatch } from './source.js';

/** What the rules look at in a job: its stored record, or the in-process engine's live state. */
export type JobFacts = Pick<JobRecord, 'id' | 'owner' | 'status' | 'total' | 'source'>;

/** The checks an engine runs on a job before changing it; each throws the coded error a caller sees. */
export interface JobRules {
  /** A new job id from the manager's `ids` option, checked (`OptionsError` naming `ids`). */
  newId(): string;
  /** Throws `limit_exceeded` (`maxJobs`) when `held` jobs are as many as the manager may hold. */
  admitJob(held: number): void;
  /**
   * Throws before `count` addresses (with `source`, if given) are added to `job` by `owner`: `job_not_found` for
   * another owner's job, `invalid_request` for rows whose columns differ from the job's header, `job_finished`
   * for a failed job, `limit_exceeded` past `maxAddressesPerJob`.
   */
  admitAdd(job: JobFacts, owner: string | null, count: number, source: EncodedSource | undefined): void;
  /** Throws before `owner` starts `job`: `job_not_found` for another owner's job, `job_finished` for a failed one. */
  admitStart(job: JobFacts, owner: string | null): void;
  /**
   * Throws before `owner` finishes `job` (ends its waiting greylisting retries): `job_not_found` for another
   * owner's job, `job_not_processing` for a `queued` or `failed` one. Returns false for a `complete` job (nothing
   * to do: `finish` is idempotent), true for a `processing` one.
   */
  admitFinish(job: JobFacts, owner: string | null): boolean;
}

const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

/** The rules of a manager with these limits and id source. */
export function jobRules(limits: {
  readonly maxJobs: number;
  readonly maxAddressesPerJob: number;
  readonly ids: () => string;
}): JobRules {
  return {
    newId() {
      const id: unknown = limits.ids();
      if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
        throw new OptionsError('ids', 'must return 1-128 characters of A-Z a-z 0-9 _ -');
      }
      return id;
    },
    admitJob(held) {
      if (held >= limits.maxJobs) {
        throw new LimitError('maxJobs', limits.maxJobs, 'too many jobs are held; delete finished ones');
      }
    },
    admitAdd(job, owner, count, source) {
      if (job.owner !== owner) throw new JobNotFoundError(job.id);
      const header = job.source ?? null;
      const mismatch =
        source === undefined || header === null ? undefined : sourceMismatch(header, source.source.columns);
      if (mismatch !== undefined) throw new JobInputError('source.columns', mismatch);
      if (job.status === 'failed') throw new JobFinishedError(job.status);
      if (job.total + count > limits.maxAddressesPerJob) {
        throw new LimitError(
          'maxAddressesPerJob',
          limits.maxAddressesPerJob,
          `the job would hold ${job.total + count} addresses`,
        );
      }
    },
    admitStart(job, owner) {
      if (job.owner !== owner) throw new JobNotFoundError(job.id);
      if (job.status === 'failed') throw new JobFinishedError(job.status);
    },
    admitFinish(job, owner) {
      if (job.owner !== owner) throw new JobNotFoundError(job.id);
      if (job.status === 'complete') return false;
      if (job.status !== 'processing') throw new JobNotProcessingError(job.status);
      return true;
    },
  };
}
