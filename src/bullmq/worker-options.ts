/**
 * The options of `createWorker`, their defaults, what its `onJob` is told, the worker it returns, and the verifier it
 * makes.
 * @module
 */
import type { FleetJobStore } from '../bulk/runner.js';
import type { BulkVerifier, JobRecord } from '../bulk/types.js';
import type { VerifyOptions } from '../options.js';
import { hasKnownResults, type StoreKnownResults } from '../postgres/known-results.js';
import { createVerifier } from '../verifier.js';
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
  /**
   * Options of the verifier the worker makes when `verifier` is not given. Its `knownResults` default to the
   * store's (see `knownResults`); `knownResultsTtlMs` sets how long they answer. @default {}
   */
  readonly verifierOptions?: VerifyOptions;
  /**
   * Whether the verifier the worker makes keeps known results in the store's database (`store.knownResults()`,
   * stopped by `close()`), shared by every worker and API node on it: a job's first tries are answered from the
   * verdicts of its owner's earlier jobs (the owner is their namespace, as in process), unless the job was created
   * with `fresh`. `false`: ask every mail server every time. Ignored when `verifier` is given (wire its
   * `knownResults`: the worker passes each job's namespace and `fresh` to it) or `verifierOptions.knownResults` is.
   * @default true
   */
  readonly knownResults?: boolean;
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

/** The verifier of a worker, and how to release what the worker made for it. */
export interface WorkerVerifier {
  /** `options.verifier`, or the one the worker made. */
  readonly verifier: BulkVerifier;
  /** Disposes of the verifier the worker made and stops its known results' sweep; nothing for a given one. */
  close(): Promise<void>;
}

/**
 * The worker's verifier: `options.verifier` (the caller's), or one of `verifierOptions` that keeps known results in
 * the store's database (see {@link FleetWorkerOptions.knownResults}). Throws an `OptionsError` for bad options.
 */
export function workerVerifier(options: FleetWorkerOptions): WorkerVerifier {
  if (options.verifier !== undefined) return { verifier: options.verifier, close: async () => {} };
  const known = storeKnownResults(options);
  try {
    const owned = createVerifier({
      ...(known === undefined ? {} : { knownResults: known }),
      ...options.verifierOptions,
    });
    return {
      verifier: owned,
      async close() {
        await owned.dispose();
        await known?.close();
      },
    };
  } catch (error) {
    void known?.close(); // nothing was verified: nothing waits to be written
    throw error;
  }
}

/**
 * The known results the worker's own verifier keeps: the store's, or `undefined` when it is told not to, is given
 * others, or its store cannot keep them.
 */
function storeKnownResults(options: FleetWorkerOptions): StoreKnownResults | undefined {
  if (options.knownResults === false) return undefined;
  if (options.verifierOptions?.knownResults !== undefined || !hasKnownResults(options.store))
    return undefined;
  return options.store.knownResults();
}
