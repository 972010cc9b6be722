/**
 * `createWorker`: a process of the fleet that takes chunks from the queue, verifies them with its own verifier and
 * writes their results to the store.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Queue, Job as QueueJob, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { exceptionResult, isResult } from '../bulk/job.js';
import { type JobCalls, jobCalls } from '../bulk/known-call.js';
import { type FleetJobStore, isFleetStore } from '../bulk/runner.js';
import type { BulkVerifier, StoredRetry } from '../bulk/types.js';
import { type ErrorCode, isMailvetError, MailvetError, OptionsError } from '../errors.js';
import { integerOption } from '../option-fields.js';
import type { VerifyCallOptions } from '../options.js';
import { type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import { addIndexed, unindexAcknowledged } from './chunk-index.js';
import { tracedChunk } from './chunk-trace.js';
import { type ChunkData, isChunkData } from './chunks.js';
import { forgetJobChunks } from './cleanup.js';
import {
  type BullMq,
  type FleetKeys,
  fleetKeys,
  lastErrorOf,
  loadQueue,
  queueUnavailable,
} from './connection.js';
import { type FleetEvent, publish } from './events.js';
import { beat, leave } from './heartbeat.js';
import { PaceMeter, report } from './pace.js';
import { storeFailureOf } from './store-failure.js';
import {
  type FleetWorker,
  type FleetWorkerOptions,
  WORKER_DEFAULTS,
  type WorkerJobEvent,
  type WorkerVerifier,
  workerVerifier,
} from './worker-options.js';

export {
  type FleetWorker,
  type FleetWorkerOptions,
  WORKER_DEFAULTS,
  type WorkerJobEvent,
} from './worker-options.js';

/** Longest wait between two tries of an unreachable store. */
const MAX_BACKOFF_MS = 30_000;

/**
 * Starts a worker of the fleet: it takes chunks of the queue `verify` (and of its own greylisting retry queue),
 * skips positions that have a result, verifies the others and writes their results, counts and greylisting
 * retries in one transaction. A greylisted address is retried by this worker (greylisting keys on the client
 * address); if the worker is gone past its due time, an API node hands the retry to any worker.
 * @example
 * const store = await postgresStore({ connectionString: 'postgres://postgres@127.0.0.1/mailvet' });
 * const worker = await createWorker({ connection: 'redis://127.0.0.1:6379', store });
 * process.on('SIGTERM', () => void worker.close().then(() => store.close()));
 */
export async function createWorker(options: FleetWorkerOptions): Promise<FleetWorker> {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const keys = fleetKeys(options);
  if (typeof options.store !== 'object' || options.store === null || !isFleetStore(options.store)) {
    throw new OptionsError('store', 'must be a PostgreSQL job store (postgresStore from mailvet/postgres)');
  }
  const concurrency = integerOption(options.concurrency, 'concurrency', WORKER_DEFAULTS.concurrency, 1, 1000);
  const perChunk = integerOption(
    options.perChunkConcurrency,
    'perChunkConcurrency',
    WORKER_DEFAULTS.perChunkConcurrency,
    1,
    1000,
  );
  const lockMs = integerOption(options.lockMs, 'lockMs', WORKER_DEFAULTS.lockMs, 1000, 600_000);
  const timeoutMs = integerOption(
    options.verificationTimeoutMs,
    'verificationTimeoutMs',
    WORKER_DEFAULTS.verificationTimeoutMs,
    10,
    86_400_000,
  );
  const heartbeatMs = integerOption(
    options.heartbeatMs,
    'heartbeatMs',
    WORKER_DEFAULTS.heartbeatMs,
    100,
    600_000,
  );
  const id =
    options.id ??
    `${hostname().replace(/[^A-Za-z0-9_-]/g, '_')}-${process.pid}-${randomBytes(3).toString('hex')}`;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(id)) {
    throw new OptionsError('id', 'must be 1-128 characters of A-Z a-z 0-9 _ -');
  }
  if (options.verifier !== undefined && typeof options.verifier?.verify !== 'function') {
    throw new OptionsError('verifier', 'must have a verify() method');
  }
  if (options.knownResults !== undefined && typeof options.knownResults !== 'boolean') {
    throw new OptionsError('knownResults', 'must be a boolean');
  }
  const { bullmq, redis } = await loadQueue();
  const onError = options.onError ?? (() => {});
  // Heartbeats and events: commands fail (and are reported) rather than wait while Redis is away.
  const client: Redis = redis({ ...keys.redis, maxRetriesPerRequest: 1 });
  const lastError = lastErrorOf(client); // reconnects; the commands report
  try {
    await client.ping();
  } catch (error) {
    client.disconnect();
    throw queueUnavailable(keys.redis, error, lastError());
  }
  let own: WorkerVerifier;
  try {
    own = workerVerifier(options);
  } catch (error) {
    client.disconnect();
    throw error;
  }
  const verifier = own.verifier;
  const retryQueueName = keys.retryQueue(id);
  const retries: Queue = new bullmq.Queue(retryQueueName, { connection: keys.redis, prefix: keys.prefix });
  retries.on('error', onError);
  const run = new ChunkRun(
    options.store,
    verifier,
    perChunk,
    timeoutMs,
    keys,
    client,
    retries,
    bullmq,
    onError,
    options.onJob,
  );
  const settings = {
    connection: keys.redis,
    prefix: keys.prefix,
    concurrency,
    lockDuration: lockMs,
    // A chunk whose worker died is taken again (its positions with a result are skipped), however often.
    maxStalledCount: 1000,
    stalledInterval: Math.max(500, Math.floor(lockMs / 2)),
  };
  const processor = (job: QueueJob) => run.track(run.run(job));
  const workers: Worker[] = [
    new bullmq.Worker(keys.queue, processor, settings),
    new bullmq.Worker(retryQueueName, processor, settings),
  ];
  // An acknowledged chunk is gone (removeOnComplete): its entry leaves its job's index.
  const unindexing = new Set<Promise<void>>();
  const unindex = (job: QueueJob): void => {
    const done = unindexAcknowledged(client, keys, job).catch(onError);
    unindexing.add(done);
    void done.then(() => unindexing.delete(done));
  };
  for (const worker of workers) {
    worker.on('error', onError);
    worker.on('completed', unindex);
  }
  const beatNow = async (): Promise<void> => {
    const value = JSON.stringify({ id, host: hostname(), pid: process.pid, at: Date.now() });
    await beat(client, keys, id, value, heartbeatMs * 3).catch(onError);
  };
  await beatNow();
  const heartbeat = setInterval(() => void beatNow(), heartbeatMs);
  heartbeat.unref?.();
  let closed: Promise<void> | undefined;
  return {
    id,
    close() {
      closed ??= (async () => {
        clearInterval(heartbeat);
        // Stop taking chunks, let the ones taken finish (for at most a lock's time: past it, another worker takes
        // them again anyway), then close without BullMQ's own wait for them, which never ends once the connection
        // was lost and came back (a Redis restart) while they ran, and drop the connections a forced close leaves
        // open (else a `mailvet worker` process would not exit).
        await Promise.all(workers.map((worker) => worker.pause(true)));
        await run.drained(lockMs);
        run.stop();
        await Promise.all(workers.map((worker) => worker.close(true)));
        await Promise.all(workers.map((worker) => worker.disconnect().catch(onError)));
        await Promise.all(unindexing);
        await leave(client, keys, id).catch(onError);
        await forgetIfEmpty(retries).catch(onError);
        await retries.close();
        client.disconnect();
        await own.close();
      })();
      return closed;
    },
  };
}

/** Removes a stopped worker's retry queue from Redis when nothing waits in it (else the fallback needs it). */
async function forgetIfEmpty(queue: Queue): Promise<void> {
  const counts = await queue.getJobCounts();
  if (Object.values(counts).every((count) => count === 0)) await queue.obliterate({ force: true });
}

/**
 * A chunk failed in a way that running it again later may not fix (the database refused its results, the
 * verifier is disposed): BullMQ runs it again after its backoff, and the last run that fails fails the job.
 */
class ChunkFailedError extends MailvetError {
  override name = 'ChunkFailedError';

  constructor(code: ErrorCode, message: string, cause?: unknown) {
    super(code, message, cause === undefined ? {} : { cause });
  }
}

/** The work of one chunk. */
class ChunkRun {
  /** This worker's pace of each job (reported to the API nodes, which size chunks by it). */
  readonly pace = new PaceMeter();

  constructor(
    private readonly store: FleetJobStore,
    private readonly verifier: BulkVerifier,
    private readonly perChunk: number,
    private readonly timeoutMs: number,
    private readonly keys: FleetKeys,
    private readonly client: Redis,
    private readonly retries: Queue,
    private readonly bullmq: BullMq,
    private readonly onError: (error: unknown) => void,
    private readonly onJob: ((event: WorkerJobEvent) => void) | undefined,
  ) {}

  /** Tells `onJob`, if any; what it throws is ignored. */
  tell(event: WorkerJobEvent): void {
    try {
      this.onJob?.(event);
    } catch {
      // an observer's failure is not the chunk's
    }
  }

  #stopped = false;

  /** Makes the chunks still being processed give up at their next store failure (see `persist`). */
  stop(): void {
    this.#stopped = true;
  }

  /** Chunks being processed (see {@link drained}). */
  readonly #active = new Set<Promise<void>>();

  /** Counts `work` among the chunks being processed until it settles; returns it. */
  track(work: Promise<void>): Promise<void> {
    this.#active.add(work);
    const done = () => this.#active.delete(work);
    work.then(done, done);
    return work;
  }

  /** Resolves once no chunk is being processed, or after `limitMs`. */
  async drained(limitMs: number): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, limitMs);
    });
    try {
      while (this.#active.size > 0) {
        const settled = Promise.allSettled([...this.#active]).then(() => true);
        if (!(await Promise.race([settled, limit.then(() => false)]))) return;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Runs chunk `job`. A {@link ChunkFailedError} is thrown (BullMQ runs the chunk again after its backoff) unless
   * this was the chunk's last attempt: then the job is failed in the database (once, whichever worker gets there
   * first) and every API node hears `failed`.
   */
  async run(job: QueueJob): Promise<void> {
    const attempts = job.opts.attempts ?? 1;
    try {
      await tracedChunk(job.data, job.attemptsMade + 1, () => this.process(job.data, attempts));
    } catch (error) {
      if (!(error instanceof ChunkFailedError) || !isChunkData(job.data)) throw error;
      this.onError(error);
      // A stopping worker disposes its verifier under its last chunks: that fails no job, another worker runs them.
      if (this.#stopped || job.attemptsMade + 1 < attempts) throw error;
      const id = job.data.job;
      const failed = await this.persist(() =>
        this.store.fleetFail(id, { code: error.code, message: error.message }, Date.now()),
      );
      if (failed === undefined) return;
      this.tell({ event: 'failed', record: failed, written: 0 });
      await publish(this.client, this.keys.events, { event: 'failed', id }).catch(this.onError);
      await forgetJobChunks(this.bullmq, this.client, this.keys, id).catch(this.onError);
    }
  }

  /**
   * Verifies what the chunk still needs and commits it; throws (BullMQ retries the chunk) on bad data and
   * {@link ChunkFailedError}. Greylisting retries it schedules get `attempts` runs, as the chunk did.
   */
  async process(data: unknown, attempts: number): Promise<void> {
    if (!isChunkData(data)) throw new TypeError('a chunk of the queue is malformed');
    const split = { verifyMs: 0, storeMs: 0, queueMs: 0 };
    let started = performance.now();
    const state = await this.persist(() => this.store.fleetState(data.job, data.positions));
    split.storeMs += performance.now() - started;
    if (state === undefined || state.record.status === 'failed') return; // deleted or failed: nothing to do
    const todo: number[] = [];
    for (let i = 0; i < data.positions.length; i++) {
      const position = data.positions[i]!;
      if (state.final.has(position)) continue;
      if ((state.waiting.get(position) ?? 0) > data.attempts[i]!) continue; // a later retry is scheduled
      todo.push(i);
    }
    if (todo.length === 0) return;
    started = performance.now();
    // As in process: the job's owner is the namespace of its known results; `fresh` and retries ask again.
    const calls = jobCalls(state.record.owner, state.record.fresh === true);
    const results = await this.verifyAll(data, todo, calls);
    split.verifyMs = performance.now() - started;
    const pace = this.pace.add(data.job, todo.length, split.verifyMs);
    const delays = state.record.greylistDelaysMs;
    const now = Date.now();
    const positions: number[] = [];
    const finals: VerificationResult[] = [];
    const waits: StoredRetry[] = [];
    for (let k = 0; k < todo.length; k++) {
      const i = todo[k]!;
      const result = results[k]!;
      const attempt = data.attempts[i]!;
      if (result.sub_status === 'greylisted' && attempt < delays.length) {
        waits.push({
          position: data.positions[i]!,
          attempt: attempt + 1,
          dueAt: now + delays[attempt]!,
          result,
        });
      } else {
        positions.push(data.positions[i]!);
        finals.push(result);
      }
    }
    started = performance.now();
    const committed = await this.persist(() =>
      this.store.fleetCommit(data.job, positions, finals, waits, Date.now()),
    );
    split.storeMs += performance.now() - started;
    if (committed === undefined) return;
    started = performance.now();
    // A job finished meanwhile made these positions final in the commit: nothing to retry.
    if (waits.length > 0 && committed.record.greylistDelaysMs.length > 0)
      await this.scheduleRetries(data, todo, waits, attempts);
    const events: FleetEvent[] = [];
    if (committed.written > 0) events.push({ event: 'progress', id: data.job });
    if (committed.completed) events.push({ event: 'complete', id: data.job });
    // The pace and the events in one round trip (the API nodes cut the job's next chunks by the pace). Not the pace
    // of a job that ended, by this commit or by another of this worker's chunks meanwhile (it forgot the job before
    // its clean-up deleted the pace on this same connection): a later SET would leave the key behind for its TTL.
    const ended = committed.record.status === 'complete' || committed.record.status === 'failed';
    const paceNow = ended || !this.pace.has(data.job) ? undefined : pace;
    if (ended) this.pace.forget(data.job);
    await report(this.client, this.keys, data.job, paceNow, events).catch(this.onError);
    if (committed.completed) {
      // The job's other chunks (duplicates, retries of a worker that is gone) are of no use now.
      const total = committed.record.total;
      await forgetJobChunks(this.bullmq, this.client, this.keys, data.job, total).catch(this.onError);
    }
    split.queueMs = performance.now() - started;
    const told = { record: committed.record, written: committed.written, addresses: todo.length, ...split };
    this.tell({ event: 'chunk', ...told });
    if (committed.completed) this.tell({ event: 'complete', ...told });
  }

  /**
   * Verifies the positions `todo` (indices into the chunk), each distinct address once, `perChunk` at a time, with the
   * job's `calls` (first tries, greylisting retries).
   */
  private async verifyAll(
    data: ChunkData,
    todo: readonly number[],
    calls: JobCalls,
  ): Promise<VerificationResult[]> {
    const distinct = new Map<string, Promise<VerificationResult>>();
    const queue: (() => Promise<void>)[] = [];
    const promises = todo.map((i) => {
      const email = data.emails[i]!;
      const attempt = data.attempts[i]!;
      const key = `${attempt} ${email}`;
      let pending = distinct.get(key);
      if (pending === undefined) {
        pending = new Promise<VerificationResult>((resolve) => {
          const call = attempt === 0 ? calls.first : calls.retry;
          queue.push(async () => resolve(await this.verifyOne(email, call)));
        });
        distinct.set(key, pending);
      }
      return pending;
    });
    const lane = async (): Promise<void> => {
      for (let task = queue.shift(); task !== undefined; task = queue.shift()) await task();
    };
    await Promise.all(Array.from({ length: Math.min(this.perChunk, queue.length) }, lane));
    return Promise.all(promises);
  }

  private async verifyOne(email: string, call: VerifyCallOptions | undefined): Promise<VerificationResult> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<VerificationResult>((resolve) => {
      timer = setTimeout(
        () => resolve(verdictOnlyResult(email, verdictOf('timeout_exceeded'))),
        this.timeoutMs,
      );
    });
    try {
      const verifying = call === undefined ? this.verifier.verify(email) : this.verifier.verify(email, call);
      const result = await Promise.race([Promise.resolve(verifying), late]);
      return isResult(result) ? result : exceptionResult(email);
    } catch (error) {
      // As in process: a disposed verifier cannot go on (an exception of one address is that address's result).
      if (isMailvetError(error) && error.code === 'disposed') {
        throw new ChunkFailedError('disposed', 'the verifier was disposed before the job finished', error);
      }
      return exceptionResult(email);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Puts greylisted positions on this worker's retry queue, delayed until they are due, in their job's index. */
  private async scheduleRetries(
    data: ChunkData,
    todo: readonly number[],
    waits: readonly StoredRetry[],
    attempts: number,
  ) {
    const emailAt = new Map(todo.map((i) => [data.positions[i]!, data.emails[i]!]));
    const byDue = new Map<number, StoredRetry[]>();
    for (const wait of waits) {
      const group = byDue.get(wait.dueAt) ?? [];
      group.push(wait);
      byDue.set(wait.dueAt, group);
    }
    for (const [dueAt, group] of byDue) {
      const chunk: ChunkData = {
        job: data.job,
        positions: group.map((wait) => wait.position),
        emails: group.map((wait) => emailAt.get(wait.position)!),
        attempts: group.map((wait) => wait.attempt),
      };
      const jobId = `${data.job}.w${group[0]!.position}.${group[0]!.attempt}`;
      await addIndexed(this.client, this.keys, [{ job: data.job, queue: this.retries.name, id: jobId }], () =>
        this.retries.add('retry', chunk, {
          delay: Math.max(0, dueAt - Date.now()),
          jobId,
          removeOnComplete: true,
          removeOnFail: { age: 86_400 },
          attempts,
          backoff: { type: 'exponential', delay: 1000 },
        }),
      ).catch(this.onError); // the API node's fallback hands it to any worker once it is overdue
    }
  }

  /**
   * Runs a store call until it succeeds: while the database is unreachable the chunk waits (with backoff). A
   * statement the database refuses (its data, a missing table) is a {@link ChunkFailedError}.
   */
  private async persist<T>(call: () => Promise<T>): Promise<T> {
    for (let wait = 250; ; wait = Math.min(MAX_BACKOFF_MS, wait * 2)) {
      try {
        return await call();
      } catch (error) {
        if (storeFailureOf(error) === 'rejected') {
          const reason = error instanceof Error ? error.message : String(error);
          throw new ChunkFailedError(
            'store_error',
            `the job store refused a chunk's results: ${reason}`,
            error,
          );
        }
        // A stopped worker gives the chunk up (it stays unacknowledged: another worker takes it again) instead
        // of retrying against a store that its owner may have closed, which would keep the process alive.
        if (this.#stopped) throw error;
        this.onError(error);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }
}
