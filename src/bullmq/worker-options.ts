/**
 * The options of `createWorker`, their defaults, what its `onJob` is told, and the worker it returns.
 * @module
 */
import type { FleetJobStore } from '../bulk/runner.js';
import type { BulkVerifier, JobRecord } from '../bulk/types.js';
import type { VerifyOptions } from '../options.js';
import type { FleetOptions } from './connection.js';

/** Options of `createWorker`. */
export interface FleetWorkerOptions extends FleetOptions {
  /** The fleet's store: `postgresStore(...)` on the database of the API nodes. */
  readonly store: FleetJobStore;
  /**
   * This worker's verifier; the caller owns it. Each worker has its own pools and per-MX limits: per egress
   * address, which is what mail servers count. @default a verifier of `verifierOptions`, disposed by `close()`
   */
  readonly verifier?: BulkVerifier;
  /** Options of the verifier the worker makes when `verifier` is not given. @default {} */
  readonly verifierOptions?: VerifyOptions;
  /** Chunks verified at once. @default 16 */
  readonly concurrency?: number;
  /** Verifications of one chunk in flight at once (a chunk is mostly one domain). @default 4 */
  readonly perChunkConcurrency?: number;
  /**
   * How long a chunk stays with this worker without a lock renewal, in milliseconds (1,000-600,000): when the
   * worker dies, another takes the chunk over after about this. @default 30000
   */
  readonly lockMs?: number;
  /**
   * The worker's own bound on one verification, in milliseconds (10-86,400,000): past it the position ends
   * `unknown`/`timeout_exceeded`, whatever the verifier does later, so a verifier that never answers cannot hold a
   * chunk. Keep it above the verifier's own `timeoutMs`. @default 120000
   */
  readonly verificationTimeoutMs?: number;
  /** How often the worker writes its heartbeat, in milliseconds (it lives 3 times as long). @default 5000 */
  readonly heartbeatMs?: number;
  /** This worker's id, in its retry queue's name and its heartbeat: `A-Z a-z 0-9 _ -`. @default host-pid-random */
  readonly id?: string;
  /**
   * Receives errors the worker recovers from (the store or Redis unreachable: it waits and tries again).
   * @default none
   */
  readonly onError?: (error: unknown) => void;
  /**
   * Told what this worker did to a job: a chunk committed (`chunk`), the commit that made the job `complete`,
   * or the job failed by this worker (`failed`). It must not throw; what it throws is ignored. @default none
   */
  readonly onJob?: (event: WorkerJobEvent) => void;
}

/** What {@link FleetWorkerOptions.onJob} is told. */
export interface WorkerJobEvent {
  /** `chunk`: results committed; `complete`: that commit completed the job; `failed`: this worker failed it. */
  readonly event: 'chunk' | 'complete' | 'failed';
  /** The job as the store has it after the event (its counts, total and times). */
  readonly record: JobRecord;
  /** Results this chunk wrote (0 for `failed`). */
  readonly written: number;
  /** Positions of the chunk this worker verified (those without a result yet); absent for `failed`. */
  readonly addresses?: number;
  /** Time the chunk spent verifying, in milliseconds; absent for `failed`. */
  readonly verifyMs?: number;
  /** Time the chunk spent in the store: reading what it needs, committing its results, in milliseconds; absent for `failed`. */
  readonly storeMs?: number;
  /**
   * Time the chunk spent in Redis after its commit, in milliseconds: its events and pace, retries, the clean-up of a
   * job it completed; absent for `failed`. BullMQ's own taking and acknowledging of the chunk is not in it.
   */
  readonly queueMs?: number;
}

/** A running fleet worker. */
export interface FleetWorker {
  /** The worker's id. */
  readonly id: string;
  /**
   * Graceful shutdown: takes no more chunks, finishes those it has (their results are written) for at most
   * `lockMs` (chunks still running after it are left to another worker, which takes them again once their lock
   * expires), then closes its queues and its verifier (if it made it). The caller closes the store. Idempotent.
   */
  close(): Promise<void>;
}

/** The defaults of {@link FleetWorkerOptions}. */
export const WORKER_DEFAULTS = Object.freeze({
  concurrency: 16,
  perChunkConcurrency: 4,
  lockMs: 30_000,
  heartbeatMs: 5000,
  verificationTimeoutMs: 120_000,
});
