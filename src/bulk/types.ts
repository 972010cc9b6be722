/**
 * Public types of bulk jobs: the `Job` wire shape, the manager's options, the `JobStore` seam and events (the
 * types themselves are in job-types.ts; the manager's options are here).
 * @module
 */
import type { VerifyOptions } from '../options.js';
import type { WebhookNotifierOptions } from '../webhooks/notifier.js';
import type { BulkVerifier, Clock, GreylistRetryOptions, JobStore } from './job-types.js';
import type { JobRunner } from './runner.js';
import type { UsageMeter } from './usage-meter.js';

export {
  type AddOptions,
  type Awaitable,
  type BulkJobManagerApi,
  type BulkVerifier,
  type Clock,
  type CreateJobInput,
  type DurableJobStore,
  type FleetHealth,
  type GreylistRetryOptions,
  isDurableStore,
  JOB_STATUSES,
  type Job,
  type JobAccess,
  type JobError,
  type JobEventName,
  type JobList,
  type JobListener,
  type JobRecord,
  type JobRetries,
  type JobSource,
  type JobStatus,
  type JobStore,
  type ListJobsOptions,
  type ResultCommit,
  type ResultsOptions,
  type SourcedResults,
  type SourceRowsInput,
  type StoreDamage,
  type StoredRetry,
  type StoreHealth,
  type StreamOptions,
} from './job-types.js';

/** Options of `new BulkJobManager(options)`. Every field is optional and validated at construction. */
export interface BulkJobManagerOptions {
  /**
   * The verifier that checks each address. When given, the caller owns it (the manager never disposes it).
   * @default a verifier made with `createVerifier(verifierOptions)`, disposed by `close()`
   */
  readonly verifier?: BulkVerifier;
  /**
   * Signed webhooks (Standard Webhooks) for jobs created with a `webhook`: the notifier's options, secrets
   * included. The manager makes the notifier and closes it with itself. @default none (a `webhook` is refused)
   */
  readonly webhooks?: WebhookNotifierOptions;
  /** Options of the verifier the manager makes when `verifier` is not given. @default {} */
  readonly verifierOptions?: VerifyOptions;
  /** Most verifications in flight at once, over all jobs. @default 64 */
  readonly concurrency?: number;
  /**
   * Most verifications in flight at once for one domain of one job, so that a domain's addresses share
   * the verifier's pooled SMTP sessions while other domains proceed. Inputs without a domain are not capped.
   * @default 4
   */
  readonly perDomainConcurrency?: number;
  /**
   * Longest stretch, in milliseconds, that the manager starts verifications, or checks and queues the addresses
   * of a large `add`, without giving the event loop a turn. Verifications that do no I/O (offline checks, cached
   * DNS) settle in microtasks, so without this a large job would starve the HTTP server that shares the process.
   * 1-1000. @default 5
   */
  readonly yieldAfterMs?: number;
  /**
   * The manager's own bound on one verification, in milliseconds (10-86,400,000): past it the position ends
   * `unknown`/`timeout_exceeded` and its slot is freed, whatever the verifier does later, so a custom verifier
   * that never answers cannot hold `concurrency`, `delete()` or `close()`. Keep it above the verifier's own
   * `timeoutMs`. @default 120000
   */
  readonly verificationTimeoutMs?: number;
  /** Most jobs held at once (any status; `delete` frees a slot). @default 1000 */
  readonly maxJobs?: number;
  /** Most addresses in one job, duplicates included. @default 1000000 */
  readonly maxAddressesPerJob?: number;
  /** Most addresses in one `create` or `add` call. @default 100000 */
  readonly maxAddressesPerAdd?: number;
  /** Longest accepted address, in UTF-16 code units (before trimming). @default 1024 */
  readonly maxEmailLength?: number;
  /** Retries of greylisted results. @default { delaysMs: [60000, 300000, 900000] } */
  readonly greylistRetry?: GreylistRetryOptions;
  /**
   * Where jobs and results are kept. A {@link DurableJobStore} (`mailvet/postgres`) makes jobs survive
   * restarts: the manager resumes its unfinished jobs when it opens. @default memoryJobStore()
   */
  readonly store?: JobStore;
  /**
   * How long a finished (`complete` or `failed`) job and its results are kept after `completed_at`, in
   * milliseconds; a background sweep then deletes them from memory and the store. `0` keeps them until
   * `delete`. @default 2592000000 (30 days)
   */
  readonly retentionMs?: number;
  /** Time source and timers. @default the system clock */
  readonly clock?: Clock;
  /** Makes job ids: each must be 1-128 characters of `A-Z a-z 0-9 _ -`. @default () => crypto.randomUUID() */
  readonly ids?: () => string;
  /**
   * Where jobs are verified: without one, in this process (the manager's own verifier, concurrency and
   * greylisting). A runner such as `bullmqRunner` (`mailvet/bullmq`) serves the jobs from its store and hands
   * their verification to a worker fleet; the verification options of this manager are then not used.
   * See docs/scaling.md. @default none (in process)
   */
  readonly runner?: JobRunner;
  /**
   * Counts the final result of every address of a job with an owner, per owner, UTC day and status, as `bulk`
   * usage (`GET /v1/usage`). The caller owns it (the manager does not close it). A runner's fleet counts in its
   * workers' commits instead, so this is not used with `runner`. @default none
   */
  readonly usage?: UsageMeter;
}
