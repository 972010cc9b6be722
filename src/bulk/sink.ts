/**
 * Where a job's final results go: buffered as they come, handed to the store in batches, in order with the job's
 * other store calls, and read back. How a batch reaches the store is the one thing that differs between stores,
 * chosen once: {@link memoryResults} hands each batch over at once and saves the record after it;
 * {@link durableResults} commits results, record and greylisting retries in one transaction, about once a second,
 * and holds a job back while the database is behind.
 * @module
 */
import type { VerificationResult } from '../result.js';
import { JobFailedError, JobNotFoundError, StoreError } from './errors.js';
import { isFinished, type LiveJob, recordOf, resultBytes, snapshot } from './job.js';
import type { DurableJobStore, JobError, JobEventName, JobStore, StoredRetry } from './job-types.js';

/** Positions a stream reads from the store at once. */
const STREAM_PAGE = 256;
/** Results handed to a store in one call, at most (fewer when the job goes idle or a reader waits). */
const FLUSH_SIZE = 256;
/**
 * Longest time a durable store's job keeps final results unwritten while verifications go on, in milliseconds:
 * what a crash can cost is re-verifying about this much work.
 */
const DURABLE_FLUSH_MS = 1000;

/**
 * The bounds of a durable store's result buffers, per job, in bytes (results counted by {@link resultBytes}), so
 * that what a job holds for the database does not depend on how large its results are (a transcript, a long reason).
 */
export interface DurableBufferBytes {
  /**
   * A job's final results go to the store in one commit once they hold this many bytes (or once
   * {@link DURABLE_FLUSH_MS} passed, or the job went idle, or a reader waits).
   * @default 1048576 (1 MiB: about 3,000 results of a typical list)
   */
  readonly flushBytes: number;
  /**
   * Most bytes of final results of one job waiting for the store (buffered, and in the commit under way): past it
   * the job takes no new work until the store catches up, so that a slow database bounds memory.
   * @default 4194304 (4 MiB: about 12,000 results of a typical list)
   */
  readonly maxUnwrittenBytes: number;
}

/** The documented defaults of {@link DurableBufferBytes}. */
export const DURABLE_BUFFER_DEFAULTS: DurableBufferBytes = Object.freeze({
  flushBytes: 1_048_576,
  maxUnwrittenBytes: 4_194_304,
});

/** How final results reach one kind of store: the part of the sink that differs between stores. */
export interface StoreWrites {
  /** True when the job's buffered results should be flushed now, beyond the sink's own reasons. */
  due(job: LiveJob): boolean;
  /** A greylisted position starts waiting for its retry. */
  waiting(job: LiveJob, retry: StoredRetry): void;
  /**
   * Hands results accounted for in the job's counts (`bytes` of them, by {@link resultBytes}) to the store, or
   * keeps them for the next commit (then it returns nothing to wait for). It takes the arrays over: the caller
   * never changes them afterwards.
   */
  write(
    job: LiveJob,
    positions: number[],
    results: VerificationResult[],
    bytes: number,
  ): Promise<void> | undefined;
  /** Saves the changed record of a job whose store works (with the results kept for it, in one commit). */
  save(job: LiveJob): Promise<void>;
  /**
   * Adds to `into` (by position) the results of the `wanted` positions among those in memory that the store may
   * not have yet. Only what is wanted is copied: the results waiting for a commit can be thousands.
   */
  unwritten(job: LiveJob, wanted: ReadonlySet<number>, into: Map<number, VerificationResult>): void;
  /** The stored results at the distinct `positions`. */
  storedAt(job: LiveJob, positions: readonly number[]): Promise<(VerificationResult | undefined)[]>;
  /** True when the store is behind on the job's results: it takes no new work until a flush ends. */
  backlogged(job: LiveJob): boolean;
  /** True when the end of a flush may let a held-back job run again. */
  readonly paced: boolean;
}

/** What the sink reaches of the engine. */
export interface SinkContext {
  /** Fails the job (a broken store, a lost result). */
  fail(job: LiveJob, error: JobError): void;
  /** The store failed `operation`: a lost lease hands the job over, anything else fails it. */
  storeFailed(job: LiveJob, operation: string, error: unknown): void;
  /** Marks a processing job whose every position is final `complete`. */
  complete(job: LiveJob): void;
  /** Tells the listeners of `event`. */
  emit(event: JobEventName, job: LiveJob): void;
  /** Wakes the streams of the job. */
  wake(job: LiveJob): void;
  /** Offers the job to the scheduler again and starts verifications. */
  ready(job: LiveJob): void;
  /** Final results just counted in the job (for usage metering). */
  counted(job: LiveJob, results: readonly VerificationResult[]): void;
}

/** The message of a job failed by its store. */
export function storeMessage(operation: string, error: unknown): string {
  return `the job store failed to ${operation}${error instanceof Error ? `: ${error.message}` : ''}`;
}

/** Keeps results the store refused (or never got) in memory, so that none is lost. */
function keep(job: LiveJob, positions: readonly number[], results: readonly VerificationResult[]): void {
  job.unsaved ??= new Map();
  for (let i = 0; i < positions.length; i++) job.unsaved.set(positions[i]!, results[i]!);
}

/** A store that is not durable: each batch is handed over at once; the record is saved after it. */
export function memoryResults(store: JobStore, context: Pick<SinkContext, 'fail'>): StoreWrites {
  return {
    due: (job) => job.bufferPositions.length >= FLUSH_SIZE,
    waiting() {},
    async write(job, positions, results) {
      if (!job.storeBroken) {
        try {
          await store.putResults(job.id, positions, results);
          return;
        } catch (error) {
          job.storeBroken = true;
          keep(job, positions, results);
          context.fail(job, { code: 'store_error', message: storeMessage('write results', error) });
          return;
        }
      }
      keep(job, positions, results);
    },
    async save(job) {
      job.dirty = false;
      try {
        await store.saveJob(recordOf(job));
      } catch (error) {
        job.storeBroken = true;
        context.fail(job, { code: 'store_error', message: storeMessage('save the job', error) });
      }
    },
    unwritten() {},
    async storedAt(job, positions) {
      const found: (VerificationResult | undefined)[] = [];
      for (const position of positions) found.push((await store.getResults(job.id, position, 1))[0]);
      return found;
    },
    backlogged: () => false,
    paced: false,
  };
}

/** What a durable store's sink holds of one job for its next commit (with the record, in one transaction). */
interface PendingCommit {
  /** Final results accounted for but not yet committed. */
  positions: number[];
  results: VerificationResult[];
  /** The estimated bytes of `results`. */
  bytes: number;
  /** Greylisted positions that started waiting since the last commit. */
  retries: StoredRetry[];
}

/** A durable store: results, record and new retries go in one commit, at least every {@link DURABLE_FLUSH_MS}. */
export function durableResults(
  store: DurableJobStore,
  context: Pick<SinkContext, 'storeFailed'>,
  bounds: DurableBufferBytes = DURABLE_BUFFER_DEFAULTS,
): StoreWrites {
  /** Each job's next commit: this sink's own state, which no other object sees. */
  const pending = new WeakMap<LiveJob, PendingCommit>();
  const emptyCommit = (): PendingCommit => ({ positions: [], results: [], bytes: 0, retries: [] });
  const pendingOf = (job: LiveJob): PendingCommit => {
    let commit = pending.get(job);
    if (commit === undefined) {
      commit = emptyCommit();
      pending.set(job, commit);
    }
    return commit;
  };
  return {
    due: (job) =>
      job.bufferBytes >= bounds.flushBytes || performance.now() - job.flushedAt >= DURABLE_FLUSH_MS,
    waiting(job, retry) {
      pendingOf(job).retries.push(retry);
      job.dirty = true;
    },
    write(job, positions, results, bytes) {
      if (job.storeBroken) {
        keep(job, positions, results);
        return undefined;
      }
      const commit = pendingOf(job);
      if (commit.positions.length === 0) {
        // Taken over as they are: a flush's batch is most of a commit, and copying it made garbage of its size.
        commit.positions = positions;
        commit.results = results;
      } else {
        for (let i = 0; i < positions.length; i++) {
          commit.positions.push(positions[i]!);
          commit.results.push(results[i]!);
        }
      }
      commit.bytes += bytes;
      return undefined;
    },
    async save(job) {
      const { positions, results, retries } = pendingOf(job);
      pending.set(job, emptyCommit());
      job.dirty = false;
      try {
        await store.putResults(job.id, positions, results, { record: recordOf(job), retries });
      } catch (error) {
        keep(job, positions, results);
        context.storeFailed(job, 'write results', error);
      }
    },
    unwritten(job, wanted, into) {
      const commit = pending.get(job);
      if (commit === undefined) return;
      const { positions, results } = commit;
      for (let k = 0; k < positions.length; k++) {
        if (wanted.has(positions[k]!)) into.set(positions[k]!, results[k]!);
      }
    },
    storedAt: (job, positions) => store.getResultsAt(job.id, positions),
    backlogged: (job) => job.bufferBytes + (pending.get(job)?.bytes ?? 0) >= bounds.maxUnwrittenBytes,
    paced: true,
  };
}

/** Runs a job's store calls in order, flushes its results through {@link StoreWrites}, and reads them back. */
export class ResultSink {
  readonly #store: JobStore;
  readonly #writes: StoreWrites;
  readonly #context: SinkContext;

  constructor(store: JobStore, writes: StoreWrites, context: SinkContext) {
    this.#store = store;
    this.#writes = writes;
    this.#context = context;
  }

  /** Runs `operation` after every earlier store call of `job`. */
  enqueue<T>(job: LiveJob, operation: () => T | Promise<T>): Promise<T> {
    const run = job.chain.then(operation);
    job.chain = run.then(noop, noop);
    return run;
  }

  /** Flushes the job once its earlier store calls are done (once, however often it is asked meanwhile). */
  scheduleFlush(job: LiveJob): void {
    if (job.flushQueued || job.deleted) return;
    job.flushQueued = true;
    void this.enqueue(job, () => this.#flush(job));
  }

  /** A verification of the job settled: flushes when a batch is full, the job went idle or a reader waits. */
  settled(job: LiveJob): void {
    if (this.#writes.due(job) || job.inFlight === 0 || job.waiters.length > 0) this.scheduleFlush(job);
  }

  /** A greylisted position starts waiting for its retry. */
  waiting(job: LiveJob, retry: StoredRetry): void {
    this.#writes.waiting(job, retry);
  }

  /** True when the store is behind on the job's results. */
  backlogged(job: LiveJob): boolean {
    return this.#writes.backlogged(job);
  }

  /** Writes what is pending to the store and waits for every store call of `job` so far. */
  async sync(job: LiveJob): Promise<void> {
    if (job.bufferPositions.length > 0 || job.dirty || (job.work?.copies.length ?? 0) > 0) {
      this.scheduleFlush(job);
    }
    await job.chain;
  }

  /** Positions `offset` to `offset + count - 1` (in order), from the store and the results it refused. */
  async read(job: LiveJob, offset: number, count: number): Promise<(VerificationResult | undefined)[]> {
    if (count === 0) return [];
    let stored: ReadonlyArray<VerificationResult | undefined>;
    try {
      stored = await this.enqueue(job, () => this.#store.getResults(job.id, offset, count));
    } catch (error) {
      throw new StoreError('read results', error);
    }
    const page: (VerificationResult | undefined)[] = [];
    for (let i = 0; i < count; i++) page.push(stored[i] ?? job.unsaved?.get(offset + i));
    return page;
  }

  /**
   * Results in input order from `offset`, each yielded once it and every earlier one are final; ends when the job
   * is complete. A failed job yields the results it has (skipping gaps), then throws `job_failed`; a deleted one
   * throws `job_not_found`.
   */
  async *stream(job: LiveJob, offset: number): AsyncGenerator<VerificationResult, void, undefined> {
    let position = offset;
    for (;;) {
      if (job.deleted) throw new JobNotFoundError(job.id);
      await this.sync(job);
      if (job.deleted) throw new JobNotFoundError(job.id);
      const version = job.version;
      if (position < job.total) {
        const page = await this.read(job, position, Math.min(STREAM_PAGE, job.total - position));
        let ready = 0;
        while (ready < page.length && page[ready] !== undefined) ready++;
        for (let i = 0; i < ready; i++) yield page[i]!;
        position += ready;
        if (ready === page.length) continue;
      } else if (job.status === 'complete') {
        return;
      }
      if (job.status === 'failed') {
        yield* this.#rest(job, position);
        throw new JobFailedError(snapshot(job));
      }
      if (job.version !== version) continue;
      const changed = new Promise<void>((resolve) => job.waiters.push(resolve));
      // Results buffered since the sync above are flushed now that a reader waits (flushing wakes it).
      if (job.bufferPositions.length > 0) this.scheduleFlush(job);
      await changed;
    }
  }

  /** The results a failed job has from `position` on, skipping gaps. */
  async *#rest(job: LiveJob, position: number): AsyncGenerator<VerificationResult, void, undefined> {
    for (let at = position; at < job.total; at += STREAM_PAGE) {
      const page = await this.read(job, at, Math.min(STREAM_PAGE, job.total - at));
      for (const result of page) if (result !== undefined) yield result;
    }
  }

  /** Hands buffered results and copies to the store, then saves the metadata and tells listeners. Never throws. */
  async #flush(job: LiveJob): Promise<void> {
    job.flushQueued = false;
    job.flushedAt = performance.now();
    if (job.deleted) return;
    const before = job.completed;
    const positions = job.bufferPositions;
    const results = job.bufferResults;
    const bytes = job.bufferBytes;
    job.bufferPositions = [];
    job.bufferResults = [];
    job.bufferBytes = 0;
    if (positions.length > 0) await this.#write(job, positions, results, bytes);
    if (job.deleted) return;
    const copies = job.work?.copies ?? [];
    if (copies.length > 0) {
      job.work!.copies = [];
      await this.#copy(job, copies);
      if (job.deleted) return;
    }
    const completes = job.status === 'processing' && job.completed === job.total;
    if (completes) this.#context.complete(job);
    if (job.dirty && !job.storeBroken) {
      await this.#writes.save(job);
      if (job.deleted) return;
    }
    if (job.completed !== before) this.#context.emit('progress', job);
    if (completes) this.#context.emit('complete', job);
    if (isFinished(job) && job.inFlight === 0 && (job.work?.copies.length ?? 0) === 0) {
      job.work = null; // the deduplication index and queues are no longer needed
      job.retries = null;
    }
    this.#context.wake(job);
    if (this.#writes.paced) this.#context.ready(job); // it may have waited for this write (backpressure)
  }

  /** Counts results in the job, then hands them to the store. */
  async #write(
    job: LiveJob,
    positions: number[],
    results: VerificationResult[],
    bytes: number,
  ): Promise<void> {
    job.completed += positions.length;
    for (const result of results) job.counts[result.status]++;
    this.#context.counted(job, results);
    job.dirty = true;
    const written = this.#writes.write(job, positions, results, bytes);
    if (written !== undefined) await written;
  }

  /** Fills duplicates of addresses whose result was final already when they were added. */
  async #copy(job: LiveJob, pairs: readonly number[]): Promise<void> {
    const wanted = new Set<number>();
    for (let i = 0; i < pairs.length; i += 2) wanted.add(pairs[i]!);
    // Results still in memory, of the wanted positions only: refused by the store, waiting for a commit, or final
    // while this flush ran (still buffered). A later source wins, as one position has one final result.
    const local = new Map<number, VerificationResult>();
    if (job.unsaved !== null) {
      for (const position of wanted) {
        const result = job.unsaved.get(position);
        if (result !== undefined) local.set(position, result);
      }
    }
    this.#writes.unwritten(job, wanted, local);
    const buffered = job.bufferPositions;
    for (let k = 0; k < buffered.length; k++) {
      if (wanted.has(buffered[k]!)) local.set(buffered[k]!, job.bufferResults[k]!);
    }
    const distinct: number[] = [];
    for (const position of wanted) if (!local.has(position)) distinct.push(position);
    const stored = new Map<number, VerificationResult | undefined>();
    try {
      if (distinct.length > 0) {
        const found = await this.#writes.storedAt(job, distinct);
        for (let i = 0; i < distinct.length; i++) stored.set(distinct[i]!, found[i]);
      }
    } catch (error) {
      job.storeBroken = true;
      this.#context.fail(job, { code: 'store_error', message: storeMessage('read results', error) });
      return;
    }
    const positions: number[] = [];
    const results: VerificationResult[] = [];
    let bytes = 0;
    for (let i = 0; i < pairs.length; i += 2) {
      const from = pairs[i]!;
      const result = local.get(from) ?? stored.get(from);
      if (result === undefined) {
        this.#context.fail(job, {
          code: 'store_error',
          message: `the job store lost the result at position ${from}`,
        });
        return;
      }
      positions.push(pairs[i + 1]!);
      results.push(result);
      bytes += resultBytes(result);
    }
    await this.#write(job, positions, results, bytes);
  }
}

const noop = (): void => {};
