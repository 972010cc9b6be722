/**
 * The queue of an API node of the fleet: puts a job's inputs on BullMQ in chunks, and makes the queue hold what the
 * database says is pending (the reconcile pass).
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FleetJobStore, UnqueuedInputs } from '../bulk/runner.js';
import type { Clock } from '../bulk/types.js';
import { MailvetError } from '../errors.js';
import { addIndexed } from './chunk-index.js';
import { type ChunkData, type ChunkItem, chunksOf, firstTries } from './chunks.js';
import type { BullMq, FleetKeys } from './connection.js';
import { indexEarlierChunks } from './earlier-chunks.js';
import { liveWorkers } from './heartbeat.js';
import { type ChunkSizing, chunkSizeFor, readPace, spreadChunkSize } from './pace.js';
import { writeStore } from './store-failure.js';

/** Addresses read from the store at once when the queue is rebuilt. */
const REBUILD_WINDOW = 32_768;
/** Most overdue retries handed to any worker per reconcile pass. */
const OVERDUE_BATCH = 1000;

/**
 * How much of a job is queued ahead of the workers: this many chunks of its current size. The rest of its inputs
 * waits in the database, to be cut by the pace its first chunks tell (see pace.ts).
 */
const AHEAD_CHUNKS = 128;
/** Inputs rows (each at most INPUT_CHUNK addresses) read from the store at once when a job is fed. */
const FEED_ROWS = 4;

/** How a chunk job is kept on the queue (`attempts` is the runner's `chunkAttempts`). */
const CHUNK_OPTIONS: JobsOptions = {
  removeOnComplete: true,
  removeOnFail: { age: 86_400 },
  backoff: { type: 'exponential', delay: 1000 },
};

/** Connections of an open API node. */
export interface Open {
  readonly bullmq: BullMq;
  readonly queue: Queue;
  readonly client: Redis;
  readonly subscriber: Redis;
}

/** The runner's settings the queue uses. */
export interface QueueSettings extends ChunkSizing {
  readonly chunkAttempts: number;
  readonly retryFallbackMs: number;
}

/** What the queue reaches of the API node. */
export interface QueueContext {
  readonly store: FleetJobStore;
  readonly keys: FleetKeys;
  readonly clock: Clock;
  /** True once the node is closing: no more passes. */
  closing(): boolean;
  /** Runs first in each reconcile pass (the node tells the job endings it missed). */
  beforePass(): Promise<void>;
}

/** Puts work on the queue, and keeps it in step with the database. */
export class FleetQueue {
  readonly #settings: QueueSettings;
  readonly #context: QueueContext;
  readonly #store: FleetJobStore;
  readonly #keys: FleetKeys;
  #reconciling: Promise<void> | undefined;
  /** Chunks queued by a version that kept no chunk index are indexed (once per fleet: see earlier-chunks.ts). */
  #earlierIndexed = false;

  constructor(settings: QueueSettings, context: QueueContext) {
    this.#settings = settings;
    this.#context = context;
    this.#store = context.store;
    this.#keys = context.keys;
  }

  /** Waits for the reconcile pass in progress, if any (closing). */
  async settled(): Promise<void> {
    await this.#reconciling?.catch(() => {});
  }

  /**
   * Queues the new inputs of job `id` now (as much as {@link feed} does); if Redis refuses, the inputs are committed
   * already and the next reconcile pass queues them, so the call that added them still succeeds.
   */
  async queueSoon(open: Open, id: string): Promise<void> {
    this.#queuedWhole.delete(id);
    await this.feed(open, id).catch(() => {});
  }

  /** Jobs being fed, and those to feed again when that ends (a progress event came meanwhile). */
  readonly #feeding = new Map<string, Promise<void>>();
  readonly #feedAgain = new Set<string>();
  /**
   * Jobs this node found wholly queued: their progress events feed nothing (inputs added through another node are
   * queued by that node, or by the next reconcile pass of any node).
   */
  readonly #queuedWhole = new Set<string>();

  /** Forgets job `id` (it ended or was deleted). */
  ended(id: string): void {
    this.#queuedWhole.delete(id);
  }

  /**
   * Tops up the queue of job `id` (a progress event of it: its chunks are being taken), one feed of a job at a time
   * (an event during one runs another after it). Failures are left to the next reconcile pass.
   */
  fed(open: Open, id: string): void {
    if (this.#queuedWhole.has(id)) return;
    if (this.#feeding.has(id)) {
      this.#feedAgain.add(id);
      return;
    }
    const run = (async () => {
      do {
        this.#feedAgain.delete(id);
        await this.feed(open, id).catch(() => {});
      } while (this.#feedAgain.has(id) && !this.#context.closing());
    })().finally(() => this.#feeding.delete(id));
    this.#feeding.set(id, run);
  }

  /** Waits for the feeds in progress (closing). */
  async fedAll(): Promise<void> {
    await Promise.all([...this.#feeding.values()]);
  }

  /**
   * Puts inputs of job `id` that no chunk holds yet on the queue, cut by the job's pace (see pace.ts), until
   * {@link AHEAD_CHUNKS} chunks of that size wait ahead of the workers; while the pace is unknown, one inputs row
   * per call. With several live workers, a row is cut smaller when what the job has pending would make too few chunks
   * for each of them (`spreadChunkSize`).
   */
  async feed(open: Open, id: string): Promise<void> {
    const [pace, workers] = await Promise.all([
      readPace(open.client, this.#keys, id),
      liveWorkers(open.client, this.#keys),
    ]);
    const size = chunkSizeFor(pace, this.#settings);
    const window = AHEAD_CHUNKS * size;
    // Until the pace is known, one row per feed: the first chunks of a job tell it soon.
    let rowsLeft = pace === undefined ? 1 : Number.POSITIVE_INFINITY;
    let ahead = await writeStore('read the job', () => this.#store.fleetAhead(id));
    while (ahead < window && rowsLeft > 0) {
      const rows = await writeStore('read the addresses', () =>
        this.#store.fleetUnqueued(id, Math.min(FEED_ROWS, rowsLeft)),
      );
      if (rows.length === 0) {
        this.#queuedWhole.add(id);
        return;
      }
      for (const row of rows) {
        await this.#queueRow(open, row, spreadChunkSize(size, ahead + row.emails.length, workers));
        ahead += row.emails.length;
        rowsLeft--;
        if (ahead >= window) return;
      }
    }
  }

  /** Feeds every job with inputs no chunk holds yet (the reconcile pass). */
  async enqueueInputs(open: Open): Promise<void> {
    const rows = await writeStore('read the addresses', () => this.#store.fleetUnqueued(undefined, 1));
    for (const id of new Set(rows.map((row) => row.id))) await this.feed(open, id);
  }

  /**
   * Queues one inputs row in chunks of `size`, then marks it queued. The chunk ids name the size: API nodes that cut
   * the same row alike queue each chunk once, and a row cut in two ways (two paces) is queued twice, never lost.
   */
  async #queueRow(open: Open, row: UnqueuedInputs, size: number): Promise<void> {
    const chunks = chunksOf(row.id, firstTries(row.first, row.emails), size);
    const tag = size === this.#settings.chunkSize ? '' : `s${size}.`;
    await this.#enqueue(open, chunks, (k) => `${row.id}.${row.first}.${tag}${k}`);
    await writeStore('mark the addresses queued', () => this.#store.fleetQueued(row.id, [row.first]));
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
  reconcile(open: Open): Promise<void> {
    this.#reconciling ??= this.#reconcilePass(open).finally(() => {
      this.#reconciling = undefined;
    });
    return this.#reconciling;
  }

  async #reconcilePass(open: Open): Promise<void> {
    if (this.#context.closing()) return;
    await this.#context.beforePass().catch(() => {}); // the database is out of reach: the next pass tries again
    if (!this.#earlierIndexed) {
      await indexEarlierChunks(open.client, this.#keys);
      this.#earlierIndexed = true;
    }
    const generation = randomUUID();
    if ((await open.client.set(this.#keys.marker, generation, 'NX')) === 'OK')
      await this.#rebuild(open, generation);
    await this.enqueueInputs(open);
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
      const size = chunkSizeFor(await readPace(open.client, this.#keys, record.id), this.#settings);
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
        const chunks = chunksOf(record.id, items, size);
        const base = k;
        await this.#enqueue(open, chunks, (j) => `${record.id}.b${generation}.${base + j}`);
        k += chunks.length;
      }
    }
  }
}
