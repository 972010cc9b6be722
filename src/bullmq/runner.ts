/**
 * `bullmqRunner`: a `BulkJobManager` on an API node of a worker fleet. Jobs and results live in PostgreSQL; the
 * manager writes inputs there and puts chunks of them on a BullMQ queue; workers verify them and write results.
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import {
  JobFailedError,
  JobFinishedError,
  JobInputError,
  JobNotCompleteError,
  JobNotFoundError,
  LimitError,
  StoreError,
} from '../bulk/errors.js';
import { createInput, ownerOf, paging, readOptions, sourceRows, trimmedEmails } from '../bulk/input.js';
import { isFinished, liveJobOf, snapshot, zeroCounts } from '../bulk/job.js';
import {
  type FleetHealth,
  type FleetJobStore,
  isFleetStore,
  type JobRunner,
  type RunnerContext,
  type RunnerJobs,
} from '../bulk/runner.js';
import { sourcedPage, sourceMismatch } from '../bulk/source.js';
import type {
  AddOptions,
  CreateJobInput,
  Job,
  JobAccess,
  JobEventName,
  JobList,
  JobListener,
  JobRecord,
  ListJobsOptions,
  ResultsOptions,
  SourcedResults,
  StoreHealth,
  StreamOptions,
} from '../bulk/types.js';
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import type { WebhookShare } from '../webhooks/share.js';
import { addIndexed } from './chunk-index.js';
import { type ChunkData, type ChunkItem, chunksOf, firstTries } from './chunks.js';
import { forgetJobChunks } from './cleanup.js';
import { type BullMq, type FleetKeys, type FleetOptions, fleetKeys, loadQueue } from './connection.js';
import { indexEarlierChunks } from './earlier-chunks.js';
import { type FleetEvent, parseEvent, publish } from './events.js';
import { FinishWatch } from './finish-watch.js';
import { liveWorkers } from './heartbeat.js';
import { storeFailureOf } from './store-failure.js';

/** Options of {@link bullmqRunner}. */
export interface BullmqRunnerOptions extends FleetOptions {
  /** Most positions in one chunk (the unit a worker takes; positions of a domain are kept together). @default 100 */
  readonly chunkSize?: number;
  /**
   * How often this API node checks that the queue holds the work the database says is pending, in milliseconds:
   * inputs never queued (a node died between the two writes), Redis emptied (lost its data), greylisting
   * retries overdue. @default 5000
   */
  readonly reconcileMs?: number;
  /**
   * How long after its due time a greylisting retry waits for the worker that was greylisted before any worker
   * may take it, in milliseconds. @default 60000
   */
  readonly retryFallbackMs?: number;
  /** Longest wait of a stream for an event before it looks at the store again, in milliseconds. @default 1000 */
  readonly pollMs?: number;
  /**
   * Runs of a chunk that fails with an error that is not the database being out of reach (the database refuses
   * its results, the worker's verifier is disposed), 1-50, with exponential backoff from 1 s between them: when
   * the last one fails, the job becomes `failed`. @default 5
   */
  readonly chunkAttempts?: number;
}

/** The defaults of {@link BullmqRunnerOptions}. */
export const RUNNER_DEFAULTS = Object.freeze({
  chunkSize: 100,
  reconcileMs: 5000,
  retryFallbackMs: 60_000,
  pollMs: 1000,
  chunkAttempts: 5,
});

const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
const STREAM_PAGE = 256;
/** Addresses read from the store at once when the queue is rebuilt. */
const REBUILD_WINDOW = 32_768;
/** Most overdue retries handed to any worker per reconcile pass. */
const OVERDUE_BATCH = 1000;
/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;
/** How long a webhook claim is kept (past it, a late event of the job would be delivered again). */
const CLAIM_MS = 7 * 86_400_000;
/** The events whose delivery API nodes claim (see `WebhookShare.claim`). */
const WEBHOOK_FINAL_EVENTS = ['bulk.completed', 'bulk.failed'] as const;
/** Collects progress events of a job for this long before reading it once. */
const PROGRESS_COALESCE_MS = 100;
/** How long a node keeps trying to read a job whose completion or failure it heard, to tell its listeners. */
const TELL_RETRY_MS = 120_000;

/** How a chunk job is kept on the queue (`attempts` is the runner's `chunkAttempts`). */
const CHUNK_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { age: 86_400 },
  backoff: { type: 'exponential', delay: 1000 },
};

function int(value: unknown, key: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new OptionsError(key, `must be an integer ${min}-${max}`);
  }
  return value;
}

/**
 * A runner for `BulkJobManager` that hands verification to a worker fleet on BullMQ (Redis), with the
 * manager's store (`postgresStore`) as the record of jobs and results. Every API node with the same store and
 * Redis serves the same jobs; start workers with `createWorker` or `mailvet worker`. See docs/scaling.md.
 * @example
 * const store = await postgresStore({ connectionString: 'postgres://postgres@127.0.0.1/mailvet' });
 * const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: 'redis://127.0.0.1:6379' }) });
 */
export function bullmqRunner(options: BullmqRunnerOptions): JobRunner {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const keys = fleetKeys(options);
  const settings = {
    chunkSize: int(options.chunkSize, 'chunkSize', RUNNER_DEFAULTS.chunkSize, 1, 10_000),
    reconcileMs: int(options.reconcileMs, 'reconcileMs', RUNNER_DEFAULTS.reconcileMs, 100, 3_600_000),
    retryFallbackMs: int(
      options.retryFallbackMs,
      'retryFallbackMs',
      RUNNER_DEFAULTS.retryFallbackMs,
      0,
      86_400_000,
    ),
    pollMs: int(options.pollMs, 'pollMs', RUNNER_DEFAULTS.pollMs, 10, 60_000),
    chunkAttempts: int(options.chunkAttempts, 'chunkAttempts', RUNNER_DEFAULTS.chunkAttempts, 1, 50),
  };
  return {
    name: 'bullmq',
    open(context) {
      if (!isFleetStore(context.store)) {
        throw new OptionsError(
          'store',
          'must be a PostgreSQL job store (postgresStore) for the bullmq runner',
        );
      }
      return new FleetJobs(context, context.store, keys, settings);
    },
  };
}

type Settings = Readonly<Record<keyof typeof RUNNER_DEFAULTS, number>>;

/** Connections of an open API node. */
interface Open {
  readonly bullmq: BullMq;
  readonly queue: Queue;
  readonly client: Redis;
  readonly subscriber: Redis;
}

/** The jobs of a manager on an API node of the fleet. */
class FleetJobs implements RunnerJobs {
  readonly #context: RunnerContext;
  readonly #store: FleetJobStore;
  readonly #keys: FleetKeys;
  readonly #settings: Settings;
  readonly #open: Promise<Open>;
  readonly #listeners: Record<JobEventName, Set<JobListener>> = {
    progress: new Set(),
    complete: new Set(),
    failed: new Set(),
  };
  /** Streams waiting for a job to move. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Jobs with a progress event waiting to be read (coalesced). */
  readonly #progressed = new Set<string>();
  /** The job endings told to the listeners here, and those owed (an event lost on the way: see finish-watch.ts). */
  readonly #finish = new FinishWatch();
  #progressTimer: ReturnType<typeof setTimeout> | undefined;
  #reconcileTimer: ReturnType<typeof setInterval> | undefined;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  #reconciling: Promise<void> | undefined;
  /** Chunks queued by a version that kept no chunk index are indexed (once per fleet: see earlier-chunks.ts). */
  #earlierIndexed = false;
  #closing = false;
  #closed: Promise<void> | undefined;

  constructor(context: RunnerContext, store: FleetJobStore, keys: FleetKeys, settings: Settings) {
    this.#context = context;
    this.#store = store;
    this.#keys = keys;
    this.#settings = settings;
    this.#open = this.#connect();
    this.#open.then(
      () => this.#watch(),
      () => {}, // reported by every call that awaits it
    );
  }

  async #connect(): Promise<Open> {
    const { bullmq, redis } = await loadQueue();
    const client = redis({ ...this.#keys.redis, maxRetriesPerRequest: 1 });
    const subscriber = redis(this.#keys.redis);
    const queue = new bullmq.Queue(this.#keys.queue, {
      connection: this.#keys.redis,
      prefix: this.#keys.prefix,
    });
    for (const emitter of [client, subscriber, queue]) emitter.on('error', () => {}); // reconnects; calls report
    try {
      await client.ping();
      await subscriber.subscribe(this.#keys.events);
    } catch (error) {
      client.disconnect();
      subscriber.disconnect();
      await queue.close().catch(() => {});
      throw new MailvetError('queue_unavailable', `the queue's Redis does not answer: ${String(error)}`, {
        cause: error,
      });
    }
    subscriber.on('message', (_channel: string, message: string) => {
      const event = parseEvent(message);
      if (event !== undefined) this.#heard(event);
    });
    const open = { bullmq, queue, client, subscriber };
    await this.#reconcile(open);
    return open;
  }

  /** Starts the reconcile pass and the retention sweep. */
  #watch(): void {
    if (this.#closing) return;
    this.#reconcileTimer = setInterval(() => {
      void this.#open.then((open) => this.#reconcile(open)).catch(() => {}); // tried again next time
    }, this.#settings.reconcileMs);
    this.#reconcileTimer.unref?.();
    const retention = this.#context.retentionMs;
    if (retention === 0) return;
    const every = Math.min(SWEEP_EVERY_MAX_MS, Math.max(1000, Math.floor(retention / 2)));
    this.#sweepTimer = setInterval(() => void this.#sweep().catch(() => {}), every);
    this.#sweepTimer.unref?.();
  }

  async opened(): Promise<void> {
    try {
      await this.#open;
    } catch (error) {
      throw isMailvetError(error) ? error : new StoreError('open the fleet', error);
    }
  }

  async storeHealth(timeoutMs = 2000): Promise<StoreHealth> {
    return (await within(this.#store.ping(), timeoutMs)) ? 'up' : 'down';
  }

  /**
   * The queue's state, and the workers with a live heartbeat counted in the fleet's registry of live workers: one
   * short script (`TIME`, `ZCOUNT`) whatever else the Redis holds, never a walk of the keyspace (see heartbeat.ts).
   * Workers of an earlier version of mailvet, which write their heartbeat key but no entry in the registry, are not
   * counted (during a rolling upgrade that starts with the API nodes, `workers` is low until they are replaced);
   * `GET /healthz` does not fail on `workers`, only on `queue`.
   */
  async fleetHealth(timeoutMs = 2000): Promise<FleetHealth> {
    const counted = this.#open.then(({ client }) => liveWorkers(client, this.#keys));
    const up = await within(counted, timeoutMs);
    return { queue: up ? 'up' : 'down', workers: up ? await counted : 0 };
  }

  webhookShare(): WebhookShare {
    return {
      save: (id, webhook) => this.#write('save the webhook', () => this.#store.fleetSetWebhook(id, webhook)),
      load: (id) => this.#read('read the webhook', () => this.#store.fleetWebhook(id)),
      claim: async (key) => {
        const open = await this.#ready();
        const claimed = await open.client.set(`${this.#keys.webhookClaims}${key}`, '1', 'PX', CLAIM_MS, 'NX');
        return claimed === 'OK';
      },
    };
  }

  // --- writes ---

  async create(input?: CreateJobInput): Promise<Job> {
    this.#assertOpen();
    const fields = createInput(input);
    if (input?.webhook !== undefined)
      throw new JobInputError('webhook', 'is not supported by the bullmq runner yet');
    const emails = trimmedEmails(
      fields.emails,
      this.#context.maxAddressesPerAdd,
      this.#context.maxEmailLength,
    );
    if (emails.length > this.#context.maxAddressesPerJob) {
      throw new LimitError(
        'maxAddressesPerJob',
        this.#context.maxAddressesPerJob,
        `the job would hold ${emails.length} addresses`,
      );
    }
    const source = sourceRows(input?.source, emails.length, null);
    const open = await this.#ready();
    const id = this.#context.ids();
    if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
      throw new OptionsError('ids', 'must return 1-128 characters of A-Z a-z 0-9 _ -');
    }
    const now = this.#context.clock.now();
    const armed = fields.autoStart;
    const status = !armed ? 'queued' : emails.length === 0 ? 'complete' : 'processing';
    const record: JobRecord = {
      id,
      owner: fields.owner,
      name: fields.name,
      status,
      total: emails.length,
      completed: 0,
      counts: zeroCounts(),
      createdAt: now,
      startedAt: armed ? now : null,
      completedAt: status === 'complete' ? now : null,
      error: null,
      greylistDelaysMs: fields.greylistDelaysMs ?? this.#context.greylistDelaysMs,
      armed,
      source: source?.source ?? null,
    };
    const maxJobs = this.#context.maxJobs;
    await this.#write('save the job', () =>
      this.#store.fleetCreate(
        record,
        emails,
        (jobs) => {
          if (jobs >= maxJobs)
            throw new LimitError('maxJobs', maxJobs, 'too many jobs are held; delete finished ones');
        },
        source?.rows,
      ),
    );
    if (status === 'processing') await this.#queueSoon(open, id);
    if (status === 'complete') await this.#announce(open, { event: 'complete', id });
    return snapshot(liveJobOf(record));
  }

  async add(id: string, emails: readonly string[], access?: AddOptions): Promise<Job> {
    this.#assertOpen();
    const owner = ownerOf(access);
    const trimmed = trimmedEmails(emails, this.#context.maxAddressesPerAdd, this.#context.maxEmailLength);
    // Checked here without a header, and against the job's under its row lock.
    const source = sourceRows(access?.source, trimmed.length, null);
    const open = await this.#ready();
    const max = this.#context.maxAddressesPerJob;
    const record = await this.#write('save the addresses', () =>
      this.#store.fleetAppend(
        id,
        trimmed,
        this.#context.clock.now(),
        (before) => {
          if (before.owner !== owner) throw new JobNotFoundError(id);
          const mismatch =
            source === undefined || (before.source ?? null) === null
              ? undefined
              : sourceMismatch(before.source!, source.source.columns);
          if (mismatch !== undefined) throw new JobInputError('source.columns', mismatch);
          if (before.status === 'failed') throw new JobFinishedError(before.status);
          if (before.total + trimmed.length > max) {
            throw new LimitError(
              'maxAddressesPerJob',
              max,
              `the job would hold ${before.total + trimmed.length} addresses`,
            );
          }
        },
        source,
      ),
    );
    if (record === undefined) throw new JobNotFoundError(id);
    if (record.status === 'processing') await this.#queueSoon(open, id);
    await this.#announce(open, { event: 'progress', id });
    return this.#snapshot(record);
  }

  async start(id: string, access?: JobAccess): Promise<Job> {
    this.#assertOpen();
    const owner = ownerOf(access);
    const open = await this.#ready();
    const started = await this.#write('start the job', () =>
      this.#store.fleetStart(id, this.#context.clock.now(), (before) => {
        if (before.owner !== owner) throw new JobNotFoundError(id);
        if (before.status === 'failed') throw new JobFinishedError(before.status);
      }),
    );
    if (started === undefined) throw new JobNotFoundError(id);
    if (started.record.status === 'processing') await this.#queueSoon(open, id);
    if (started.completed) await this.#announce(open, { event: 'complete', id });
    return this.#snapshot(started.record);
  }

  async delete(id: string, access?: JobAccess): Promise<void> {
    const open = await this.#ready();
    await this.#find(id, access);
    await this.#write('delete the job', () => this.#store.deleteJob(id));
    this.#wake(id);
    await this.#forget(open, id);
  }

  /**
   * Removes the chunks of deleted job `id` from the queues; if Redis refuses, those chunks find no job when a
   * worker takes them and are dropped then.
   */
  async #forget(open: Open, id: string): Promise<void> {
    await forgetJobChunks(open.bullmq, open.client, this.#keys, id).catch(() => {});
    const claims = WEBHOOK_FINAL_EVENTS.map((event) => `${this.#keys.webhookClaims}${id}:${event}`);
    await open.client.del(...claims).catch(() => {});
  }

  // --- reads ---

  async get(id: string, access?: JobAccess): Promise<Job | undefined> {
    const owner = ownerOf(access);
    await this.#ready();
    const record = await this.#read('read the job', () => this.#store.getJob(id));
    if (record === undefined || record.owner !== owner) return undefined;
    return this.#snapshot(record);
  }

  async list(options?: ListJobsOptions): Promise<JobList> {
    const fields = readOptions(options);
    const owner = ownerOf(options);
    const { offset, limit } = paging(fields);
    await this.#ready();
    const records = await this.#read('list the jobs', () => this.#store.listJobs());
    const visible = records.filter((record) => record.owner === owner);
    const page = visible.slice(offset, offset + limit);
    return { jobs: await Promise.all(page.map((record) => this.#snapshot(record))), total: visible.length };
  }

  async results(id: string, options?: ResultsOptions): Promise<VerificationResult[]> {
    const { page } = await this.#page(id, options);
    return page.filter((result) => result !== undefined);
  }

  async sourceResults(id: string, options?: ResultsOptions): Promise<SourcedResults> {
    const { record, start, page } = await this.#page(id, options);
    const source = record.source ?? null;
    if (source === null || page.length === 0) return sourcedPage(source, page, []);
    const rows = await this.#read('read the rows', () => this.#store.getRows(id, start, page.length));
    return sourcedPage(source, page, rows);
  }

  /** The positions a `results` call reads, `undefined` where a partial read has no final result. */
  async #page(
    id: string,
    options: ResultsOptions | undefined,
  ): Promise<{ record: JobRecord; start: number; page: (VerificationResult | undefined)[] }> {
    const fields = readOptions(options);
    const { offset, limit } = paging(fields);
    const partial = fields.partial ?? false;
    if (typeof partial !== 'boolean') throw new JobInputError('partial', 'must be a boolean');
    await this.#ready();
    const record = await this.#find(id, options);
    if (!partial && record.status === 'failed') throw new JobFailedError(await this.#snapshot(record));
    if (!partial && record.status !== 'complete') throw new JobNotCompleteError(await this.#snapshot(record));
    const start = Math.min(offset, record.total);
    const count = Math.min(limit, record.total - start);
    const page =
      count === 0
        ? []
        : [...(await this.#read('read results', () => this.#store.getResults(id, start, count)))];
    if (!partial && page.includes(undefined)) {
      const missing = start + page.indexOf(undefined);
      throw new StoreError('read results', new Error(`no result at position ${missing} of a complete job`));
    }
    return { record, start, page };
  }

  stream(id: string, options?: StreamOptions): AsyncIterable<VerificationResult> {
    const fields = readOptions(options);
    const { offset } = paging(fields);
    return this.#stream(id, options, offset);
  }

  async *#stream(
    id: string,
    access: JobAccess | undefined,
    offset: number,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    await this.#ready();
    let record = await this.#find(id, access);
    let position = offset;
    for (;;) {
      // Registered before reading, so that an event between the read and the wait is not missed.
      const moved = this.#moved(id);
      if (position < record.total) {
        const page = await this.#read('read results', () =>
          this.#store.getResults(id, position, Math.min(STREAM_PAGE, record.total - position)),
        );
        let ready = 0;
        while (ready < page.length && page[ready] !== undefined) ready++;
        for (let i = 0; i < ready; i++) yield page[i]!;
        position += ready;
        if (ready === page.length) {
          moved.cancel();
          record = await this.#find(id, access);
          continue;
        }
      } else if (record.status === 'complete') {
        moved.cancel();
        return;
      }
      if (record.status === 'failed') {
        moved.cancel();
        for (let at = position; at < record.total; at += STREAM_PAGE) {
          const page = await this.#read('read results', () =>
            this.#store.getResults(id, at, Math.min(STREAM_PAGE, record.total - at)),
          );
          for (const result of page) if (result !== undefined) yield result;
        }
        throw new JobFailedError(await this.#snapshot(record));
      }
      await moved.promise;
      record = await this.#find(id, access);
    }
  }

  on(event: JobEventName, listener: JobListener): () => void {
    if (!(event in this.#listeners))
      throw new JobInputError('event', 'must be one of progress, complete, failed');
    if (typeof listener !== 'function') throw new JobInputError('listener', 'must be a function');
    const listeners = this.#listeners[event];
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }

  close(): Promise<void> {
    this.#closed ??= this.#shutDown();
    return this.#closed;
  }

  async #shutDown(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reconcileTimer);
    clearInterval(this.#sweepTimer);
    clearTimeout(this.#progressTimer);
    const open = await this.#open.catch(() => undefined);
    await this.#reconciling?.catch(() => {});
    if (open !== undefined) {
      await open.queue.close().catch(() => {});
      open.subscriber.disconnect();
      open.client.disconnect();
    }
    for (const id of [...this.#waiters.keys()]) this.#wake(id);
    try {
      await this.#store.close?.();
    } catch (error) {
      throw new StoreError('close', error);
    }
  }

  // --- the queue ---

  /**
   * Queues the new inputs of job `id` now; if Redis refuses, the inputs are committed already and the next
   * reconcile pass queues them, so the call that added them still succeeds.
   */
  async #queueSoon(open: Open, id: string): Promise<void> {
    await this.#enqueueInputs(open, id).catch(() => {});
  }

  /** Puts the inputs of `id` (of every job, without an id) that no chunk holds yet on the queue. */
  async #enqueueInputs(open: Open, id?: string): Promise<void> {
    const rows = await this.#write('read the addresses', () => this.#store.fleetUnqueued(id));
    for (const row of rows) {
      const chunks = chunksOf(row.id, firstTries(row.first, row.emails), this.#settings.chunkSize);
      await this.#enqueue(open, chunks, (k) => `${row.id}.${row.first}.${k}`);
      await this.#write('mark the addresses queued', () => this.#store.fleetQueued(row.id, [row.first]));
    }
  }

  /**
   * Adds `chunks` with deterministic ids (an id already on the queue is not added twice), each in its job's chunk
   * index (see chunk-index.ts).
   */
  async #enqueue(
    open: Open,
    chunks: readonly ChunkData[],
    idOf: (k: number) => string,
    delay = 0,
  ): Promise<void> {
    const queued = chunks.map((data, k) => ({ data, id: idOf(k) }));
    const indexed = queued.map(({ data, id }) => ({ job: data.job, queue: this.#keys.queue, id }));
    const options = {
      ...CHUNK_OPTIONS,
      attempts: this.#settings.chunkAttempts,
      ...(delay > 0 ? { delay } : {}),
    };
    try {
      await addIndexed(open.client, this.#keys, indexed, () =>
        open.queue.addBulk(
          queued.map(({ data, id }) => ({ name: 'chunk', data, opts: { ...options, jobId: id } })),
        ),
      );
    } catch (error) {
      throw new MailvetError('queue_unavailable', `the queue refused the chunks: ${String(error)}`, {
        cause: error,
      });
    }
  }

  /**
   * Makes the queue hold what the database says is pending: rebuilds it when Redis lost its data (the marker key
   * is gone), queues inputs no chunk holds, hands overdue greylisting retries to any worker, and retries chunks
   * that failed. The first pass of a process also indexes the chunks of an earlier version, when no API node of the
   * fleet did that yet. One pass at a time.
   */
  #reconcile(open: Open): Promise<void> {
    this.#reconciling ??= this.#reconcilePass(open).finally(() => {
      this.#reconciling = undefined;
    });
    return this.#reconciling;
  }

  async #reconcilePass(open: Open): Promise<void> {
    if (this.#closing) return;
    await this.#tellMissed().catch(() => {}); // the database is out of reach: the next pass lists again
    if (!this.#earlierIndexed) {
      await indexEarlierChunks(open.client, this.#keys);
      this.#earlierIndexed = true;
    }
    const generation = randomUUID();
    if ((await open.client.set(this.#keys.marker, generation, 'NX')) === 'OK')
      await this.#rebuild(open, generation);
    await this.#enqueueInputs(open);
    const overdue = await this.#store.fleetOverdue(
      this.#context.clock.now() - this.#settings.retryFallbackMs,
      OVERDUE_BATCH,
    );
    for (const retry of overdue) {
      const item = { position: retry.position, email: retry.email, attempt: retry.attempt };
      await this.#enqueue(
        open,
        chunksOf(retry.id, [item], 1),
        () => `${retry.id}.g${retry.position}.${retry.attempt}`,
      );
    }
    await open.queue.retryJobs({ state: 'failed' });
  }

  /** Redis lost its data: queues every pending position of every `processing` job again, from the database. */
  async #rebuild(open: Open, generation: string): Promise<void> {
    const now = this.#context.clock.now();
    for (const record of await this.#store.fleetProcessing()) {
      const final = new Set(await this.#store.finalPositions(record.id));
      const waiting = new Map(
        (await this.#store.getRetries(record.id)).map((retry) => [retry.position, retry]),
      );
      let k = 0;
      for (let from = 0; from < record.total; from += REBUILD_WINDOW) {
        const emails = await this.#store.getInputs(record.id, from, REBUILD_WINDOW);
        const items: ChunkItem[] = [];
        for (let i = 0; i < emails.length; i++) {
          const position = from + i;
          if (final.has(position)) continue;
          const retry = waiting.get(position);
          if (retry === undefined) items.push({ position, email: emails[i]!, attempt: 0 });
          else {
            const item = { position, email: emails[i]!, attempt: retry.attempt };
            const id = `${record.id}.b${generation}.r${position}`;
            await this.#enqueue(open, chunksOf(record.id, [item], 1), () => id, retry.dueAt - now);
          }
        }
        const chunks = chunksOf(record.id, items, this.#settings.chunkSize);
        const base = k;
        await this.#enqueue(open, chunks, (j) => `${record.id}.b${generation}.${base + j}`);
        k += chunks.length;
      }
    }
  }

  /** Forgets finished jobs older than the retention. */
  async #sweep(): Promise<void> {
    const open = await this.#open;
    const before = this.#context.clock.now() - this.#context.retentionMs;
    for (const record of await this.#store.listJobs()) {
      if (
        record.completedAt !== null &&
        record.completedAt <= before &&
        (record.status === 'complete' || record.status === 'failed')
      ) {
        await this.#store.deleteJob(record.id);
        await this.#forget(open, record.id);
      }
    }
  }

  // --- events ---

  /** Publishes `event` to every API node (this one included). */
  async #announce(open: Open, event: FleetEvent): Promise<void> {
    await publish(open.client, this.#keys.events, event).catch(() => {
      // Redis is down: streams and listeners catch up on their next read.
    });
  }

  /** Tells the listeners of the job endings whose events never arrived here (see {@link FinishWatch}). */
  async #tellMissed(): Promise<void> {
    const listening = this.#listeners.complete.size + this.#listeners.failed.size > 0;
    for (const record of this.#finish.missed(await this.#store.listJobs())) {
      if (listening) this.#heard({ event: record.status, id: record.id });
      else this.#finish.claim(record); // nobody to tell: a listener added later hears of later endings
    }
  }

  #heard(event: FleetEvent): void {
    if (event.event === 'failed') {
      this.#progressed.delete(event.id);
      void this.#tell(event.id, ['failed']);
      return;
    }
    if (event.event === 'complete') {
      this.#progressed.delete(event.id);
      void this.#tell(event.id, ['progress', 'complete']);
      return;
    }
    this.#finish.running(event.id);
    this.#progressed.add(event.id);
    this.#progressTimer ??= setTimeout(() => {
      this.#progressTimer = undefined;
      const ids = [...this.#progressed];
      this.#progressed.clear();
      for (const id of ids) void this.#tell(id, ['progress']);
    }, PROGRESS_COALESCE_MS);
  }

  /**
   * Wakes the streams of job `id` and tells the listeners of `events` with the job as stored. A job that cannot
   * be read (the database out of reach) is read again, with backoff, for as long as {@link TELL_RETRY_MS} when
   * the events end the job (`complete`, `failed`: a webhook hangs on them), until the runner closes; a progress
   * event is simply dropped, the next one supersedes it. A job that no longer exists tells nobody, and an ending
   * already told here (heard from an event and from a listing) is not told again.
   */
  async #tell(id: string, events: readonly JobEventName[]): Promise<void> {
    this.#wake(id);
    if (events.every((event) => this.#listeners[event].size === 0)) return;
    const final = events.includes('complete') || events.includes('failed');
    const giveUpAt = this.#context.clock.now() + (final ? TELL_RETRY_MS : 0);
    let job: Job | undefined;
    let record: JobRecord | undefined;
    for (let pause = 250; job === undefined; pause = Math.min(pause * 2, 5000)) {
      try {
        record = await this.#store.getJob(id);
        if (record === undefined) return;
        job = await this.#snapshot(record);
      } catch {
        if (this.#closing || this.#context.clock.now() + pause > giveUpAt) return;
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
      }
    }
    // An ending heard twice (its event, then a listing: see finish-watch.ts) is told once.
    if (final && !this.#finish.claim(record!)) return;
    for (const event of events) {
      for (const listener of [...this.#listeners[event]]) {
        try {
          listener(job);
        } catch (error) {
          queueMicrotask(() => {
            throw error;
          });
        }
      }
    }
  }

  /** A promise that settles when job `id` moves (an event) or after `pollMs`. */
  #moved(id: string): { promise: Promise<void>; cancel(): void } {
    let waiters = this.#waiters.get(id);
    if (waiters === undefined) {
      waiters = new Set();
      this.#waiters.set(id, waiters);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake!: () => void;
    const set = waiters;
    const promise = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(id) === set) this.#waiters.delete(id);
        resolve();
      };
      timer = setTimeout(wake, this.#settings.pollMs);
    });
    set.add(wake);
    return { promise, cancel: wake };
  }

  #wake(id: string): void {
    const waiters = this.#waiters.get(id);
    if (waiters === undefined) return;
    for (const wake of [...waiters]) wake();
  }

  // --- helpers ---

  async #ready(): Promise<Open> {
    this.#assertOpen();
    try {
      return await this.#open;
    } catch (error) {
      throw isMailvetError(error) ? error : new StoreError('open the fleet', error);
    }
  }

  #assertOpen(): void {
    if (this.#closing) throw new MailvetError('disposed', 'the job manager has been closed');
  }

  /** The job, or `job_not_found` when it is missing or another owner's. */
  async #find(id: string, access: JobAccess | undefined): Promise<JobRecord> {
    const owner = ownerOf(access);
    const record = await this.#read('read the job', () => this.#store.getJob(id));
    if (record === undefined || record.owner !== owner) throw new JobNotFoundError(String(id));
    return record;
  }

  /** The wire shape of a stored job, with its greylisting retries as the store has them. */
  async #snapshot(record: JobRecord): Promise<Job> {
    const job = snapshot(liveJobOf(record));
    if (isFinished(liveJobOf(record))) return job;
    const waiting = await this.#read('read the retries', () => this.#store.fleetWaiting(record.id));
    return {
      ...job,
      retries: {
        ...job.retries,
        waiting: waiting.count,
        next_retry_at: waiting.nextDueAt === null ? null : new Date(waiting.nextDueAt).toISOString(),
      },
    };
  }

  /** Runs a store read; a failure is `store_unavailable` (database out of reach) or `store_error`. */
  async #read<T>(operation: string, call: () => T | Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw storeError(operation, error);
    }
  }

  /** Runs a store write; mailvet errors (a refused check) pass through, anything else as for reads. */
  async #write<T>(operation: string, call: () => T | Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (isMailvetError(error)) throw error;
      throw storeError(operation, error);
    }
  }
}

/**
 * The error of a failed store call: `store_unavailable` when the database is out of reach (the call may be
 * repeated once it is back; HTTP 503), `store_error` otherwise.
 */
function storeError(operation: string, error: unknown): MailvetError {
  if (storeFailureOf(error) === 'unreachable') {
    return new MailvetError('store_unavailable', `the job store is unreachable (to ${operation})`, {
      cause: error,
    });
  }
  return new StoreError(operation, error);
}

/** True when `promise` resolves within `timeoutMs`. */
async function within(promise: Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
