/**
 * `bullmqRunner`: a `BulkJobManager` on an API node of a worker fleet. Jobs and results live in PostgreSQL; the
 * manager writes inputs there and puts chunks of them on a BullMQ queue; workers verify them and write results.
 * @module
 */
import { JobFailedError, JobNotFoundError, StoreError } from '../bulk/errors.js';
import { isFinished, liveJobOf, snapshot, zeroCounts } from '../bulk/job.js';
import {
  type FleetHealth,
  type FleetJobStore,
  isFleetStore,
  type JobEngine,
  type JobRunner,
  type NewJob,
  type ResultsView,
  type RunnerContext,
} from '../bulk/runner.js';
import type { EncodedSource } from '../bulk/source.js';
import type { Job, JobList, JobRecord, StoreHealth } from '../bulk/types.js';
import { isMailvetError, MailvetError, OptionsError } from '../errors.js';
import type { VerificationResult } from '../result.js';
import type { WebhookShare } from '../webhooks/share.js';
import { forgetJobChunks } from './cleanup.js';
import { type FleetKeys, fleetKeys, loadQueue } from './connection.js';
import { type FleetEvent, parseEvent, publish } from './events.js';
import { FleetNews } from './fleet-news.js';
import { FleetQueue, type Open } from './fleet-queue.js';
import { liveWorkers } from './heartbeat.js';
import { type BullmqRunnerOptions, type RunnerSettings, runnerSettings } from './runner-options.js';
import { readStore, writeStore } from './store-failure.js';

export { type BullmqRunnerOptions, RUNNER_DEFAULTS } from './runner-options.js';

/** Results a stream reads from the store at once. */
const STREAM_PAGE = 256;
/** Longest pause between two retention sweeps. */
const SWEEP_EVERY_MAX_MS = 3_600_000;
/** How long a webhook claim is kept (past it, a late event of the job would be delivered again). */
const CLAIM_MS = 7 * 86_400_000;
/** The events whose delivery API nodes claim (see `WebhookShare.claim`). */
const WEBHOOK_FINAL_EVENTS = ['bulk.completed', 'bulk.failed'] as const;

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
  const settings = runnerSettings(options);
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

/** The jobs of a manager on an API node of the fleet. */
class FleetJobs implements JobEngine {
  readonly keepsRows = true;
  readonly #context: RunnerContext;
  readonly #store: FleetJobStore;
  readonly #keys: FleetKeys;
  readonly #settings: RunnerSettings;
  readonly #open: Promise<Open>;
  readonly #queue: FleetQueue;
  readonly #news: FleetNews;
  #reconcileTimer: ReturnType<typeof setInterval> | undefined;
  #sweepTimer: ReturnType<typeof setInterval> | undefined;
  #closing = false;
  #closed: Promise<void> | undefined;

  constructor(context: RunnerContext, store: FleetJobStore, keys: FleetKeys, settings: RunnerSettings) {
    this.#context = context;
    this.#store = store;
    this.#keys = keys;
    this.#settings = settings;
    const closing = (): boolean => this.#closing;
    this.#news = new FleetNews(settings.pollMs, {
      store,
      events: context.events,
      clock: context.clock,
      closing,
      snapshot: (record) => this.#snapshot(record),
    });
    this.#queue = new FleetQueue(settings, {
      store,
      keys,
      clock: context.clock,
      closing,
      beforePass: () => this.#news.tellMissed(),
    });
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
    const open = { bullmq, queue, client, subscriber };
    subscriber.on('message', (_channel: string, message: string) => {
      const event = parseEvent(message);
      if (event === undefined) return;
      this.#news.heard(event);
      // A job's chunks are being taken: its queue is topped up, cut by the pace its workers report.
      if (event.event === 'progress' && !this.#closing) this.#queue.fed(open, event.id);
      else if (event.event !== 'progress') this.#queue.ended(event.id);
    });
    await this.#queue.reconcile(open);
    return open;
  }

  /** Starts the reconcile pass and the retention sweep. */
  #watch(): void {
    if (this.#closing) return;
    this.#reconcileTimer = setInterval(() => {
      void this.#open.then((open) => this.#queue.reconcile(open)).catch(() => {}); // tried again next time
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
      save: (id, webhook) => writeStore('save the webhook', () => this.#store.fleetSetWebhook(id, webhook)),
      load: (id) => readStore('read the webhook', () => this.#store.fleetWebhook(id)),
      claim: async (key) => {
        const open = await this.#ready();
        const claimed = await open.client.set(`${this.#keys.webhookClaims}${key}`, '1', 'PX', CLAIM_MS, 'NX');
        return claimed === 'OK';
      },
    };
  }

  // --- writes ---

  async create(job: NewJob): Promise<Job> {
    const open = await this.#ready();
    const id = this.#context.rules.newId();
    const now = this.#context.clock.now();
    const { emails, autoStart: armed, source } = job;
    const status = !armed ? 'queued' : emails.length === 0 ? 'complete' : 'processing';
    const record: JobRecord = {
      id,
      owner: job.owner,
      name: job.name,
      status,
      total: emails.length,
      completed: 0,
      counts: zeroCounts(),
      createdAt: now,
      startedAt: armed ? now : null,
      completedAt: status === 'complete' ? now : null,
      error: null,
      greylistDelaysMs: job.greylistDelaysMs ?? this.#context.greylistDelaysMs,
      armed,
      source: source?.source ?? null,
      ...(job.fresh ? { fresh: true } : {}),
    };
    const rules = this.#context.rules;
    await writeStore('save the job', () =>
      this.#store.fleetCreate(record, emails, (jobs) => rules.admitJob(jobs), source?.rows),
    );
    const created = snapshot(liveJobOf(record));
    const events = this.#context.events;
    if (events.has('created')) events.emit('created', created);
    if (status === 'processing' && events.has('started')) events.emit('started', created);
    if (status === 'processing') await this.#queue.queueSoon(open, id);
    if (status === 'complete') await this.#announce(open, { event: 'complete', id });
    return created;
  }

  async add(
    id: string,
    owner: string | null,
    emails: readonly string[],
    source: EncodedSource | undefined,
  ): Promise<Job> {
    const open = await this.#ready();
    const rules = this.#context.rules;
    // Checked under the job's row lock: its owner, header, status and size as they are then.
    const record = await writeStore('save the addresses', () =>
      this.#store.fleetAppend(
        id,
        emails,
        this.#context.clock.now(),
        (before) => rules.admitAdd(before, owner, emails.length, source),
        source,
      ),
    );
    if (record === undefined) throw new JobNotFoundError(id);
    if (record.status === 'processing') await this.#queue.queueSoon(open, id);
    await this.#announce(open, { event: 'progress', id });
    return this.#snapshot(record);
  }

  async start(id: string, owner: string | null): Promise<Job> {
    const open = await this.#ready();
    const rules = this.#context.rules;
    const started = await writeStore('start the job', () =>
      this.#store.fleetStart(id, this.#context.clock.now(), (before) => rules.admitStart(before, owner)),
    );
    if (started === undefined) throw new JobNotFoundError(id);
    if (started.record.status === 'processing') await this.#queue.queueSoon(open, id);
    if (started.completed) await this.#announce(open, { event: 'complete', id });
    return this.#snapshot(started.record);
  }

  async finish(id: string, owner: string | null): Promise<Job> {
    const open = await this.#ready();
    const rules = this.#context.rules;
    const finished = await writeStore('finish the job', () =>
      this.#store.fleetFinish(id, this.#context.clock.now(), (before) => rules.admitFinish(before, owner)),
    );
    if (finished === undefined) throw new JobNotFoundError(id);
    if (finished.ended > 0) await this.#announce(open, { event: 'progress', id });
    if (finished.completed) {
      await this.#announce(open, { event: 'complete', id });
      // Its delayed retry chunks are of no use now (a worker that took one finds its positions final).
      await forgetJobChunks(open.bullmq, open.client, this.#keys, id, finished.record.total).catch(() => {});
    }
    return this.#snapshot(finished.record);
  }

  async delete(id: string, owner: string | null): Promise<void> {
    const open = await this.#ready();
    await this.#find(id, owner);
    await writeStore('delete the job', () => this.#store.deleteJob(id));
    this.#news.wake(id);
    await this.#forget(open, id);
  }

  /**
   * Removes the chunks of deleted job `id` from the queues; if Redis refuses, those chunks find no job when a
   * worker takes them and are dropped then.
   */
  async #forget(open: Open, id: string): Promise<void> {
    this.#context.forgotten(id); // the manager frees what the job held (heldBytes)
    this.#queue.ended(id);
    await forgetJobChunks(open.bullmq, open.client, this.#keys, id).catch(() => {});
    const claims = WEBHOOK_FINAL_EVENTS.map((event) => `${this.#keys.webhookClaims}${id}:${event}`);
    await open.client.del(...claims).catch(() => {});
  }

  // --- reads ---

  async get(id: string, owner: string | null): Promise<Job | undefined> {
    await this.#ready();
    const record = await readStore('read the job', () => this.#store.getJob(id));
    if (record === undefined || record.owner !== owner) return undefined;
    return this.#snapshot(record);
  }

  async list(owner: string | null, offset: number, limit: number): Promise<JobList> {
    await this.#ready();
    const records = await readStore('list the jobs', () => this.#store.listJobs());
    const visible = records.filter((record) => record.owner === owner);
    const page = visible.slice(offset, offset + limit);
    return { jobs: await Promise.all(page.map((record) => this.#snapshot(record))), total: visible.length };
  }

  async view(id: string, owner: string | null): Promise<ResultsView> {
    await this.#ready();
    const record = await this.#find(id, owner);
    return {
      status: record.status,
      total: record.total,
      source: record.source ?? null,
      snapshot: () => this.#snapshot(record),
      results: async (offset, count) => [
        ...(await readStore('read results', () => this.#store.getResults(id, offset, count))),
      ],
      rows: (offset, count) => readStore('read the rows', () => this.#store.getRows(id, offset, count)),
    };
  }

  async *stream(
    id: string,
    owner: string | null,
    offset: number,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    await this.#ready();
    let record = await this.#find(id, owner);
    let position = offset;
    for (;;) {
      // Registered before reading, so that an event between the read and the wait is not missed.
      const moved = this.#news.moved(id);
      if (position < record.total) {
        const page = await readStore('read results', () =>
          this.#store.getResults(id, position, Math.min(STREAM_PAGE, record.total - position)),
        );
        let ready = 0;
        while (ready < page.length && page[ready] !== undefined) ready++;
        for (let i = 0; i < ready; i++) yield page[i]!;
        position += ready;
        if (ready === page.length) {
          moved.cancel();
          record = await this.#find(id, owner);
          continue;
        }
      } else if (record.status === 'complete') {
        moved.cancel();
        return;
      }
      if (record.status === 'failed') {
        moved.cancel();
        for (let at = position; at < record.total; at += STREAM_PAGE) {
          const page = await readStore('read results', () =>
            this.#store.getResults(id, at, Math.min(STREAM_PAGE, record.total - at)),
          );
          for (const result of page) if (result !== undefined) yield result;
        }
        throw new JobFailedError(await this.#snapshot(record));
      }
      await moved.promise;
      record = await this.#find(id, owner);
    }
  }

  close(): Promise<void> {
    this.#closed ??= this.#shutDown();
    return this.#closed;
  }

  async #shutDown(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#reconcileTimer);
    clearInterval(this.#sweepTimer);
    this.#news.stop();
    const open = await this.#open.catch(() => undefined);
    await this.#queue.settled();
    await this.#queue.fedAll();
    if (open !== undefined) {
      await open.queue.close().catch(() => {});
      open.subscriber.disconnect();
      open.client.disconnect();
    }
    this.#news.wakeAll();
    try {
      await this.#store.close?.();
    } catch (error) {
      throw new StoreError('close', error);
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
  async #find(id: string, owner: string | null): Promise<JobRecord> {
    const record = await readStore('read the job', () => this.#store.getJob(id));
    if (record === undefined || record.owner !== owner) throw new JobNotFoundError(String(id));
    return record;
  }

  /** The wire shape of a stored job, with its greylisting retries as the store has them. */
  async #snapshot(record: JobRecord): Promise<Job> {
    const job = snapshot(liveJobOf(record));
    if (isFinished(liveJobOf(record))) return job;
    const waiting = await readStore('read the retries', () => this.#store.fleetWaiting(record.id));
    return {
      ...job,
      retries: {
        ...job.retries,
        waiting: waiting.count,
        next_retry_at: waiting.nextDueAt === null ? null : new Date(waiting.nextDueAt).toISOString(),
      },
    };
  }
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
