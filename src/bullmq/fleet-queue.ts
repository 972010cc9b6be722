/**
 * The queue of an API node of the fleet: puts a job's inputs on BullMQ in chunks, and makes the queue hold what the
 * database says is pending (the reconcile pass).
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { FleetJobStore } from '../bulk/runner.js';
import type { Clock } from '../bulk/types.js';
import { MailvetError } from '../errors.js';
import { addIndexed } from './chunk-index.js';
import { type ChunkData, type ChunkItem, chunksOf, firstTries } from './chunks.js';
import type { BullMq, FleetKeys } from './connection.js';
import { indexEarlierChunks } from './earlier-chunks.js';
import { writeStore } from './store-failure.js';

/** Addresses read from the store at once when the queue is rebuilt. */
const REBUILD_WINDOW = 32_768;
/** Most overdue retries handed to any worker per reconcile pass. */
const OVERDUE_BATCH = 1000;

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
export interface QueueSettings {
  readonly chunkSize: number;
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
   * Queues the new inputs of job `id` now; if Redis refuses, the inputs are committed already and the next
   * reconcile pass queues them, so the call that added them still succeeds.
   */
  async queueSoon(open: Open, id: string): Promise<void> {
    await this.enqueueInputs(open, id).catch(() => {});
  }

  /** Puts the inputs of `id` (of every job, without an id) that no chunk holds yet on the queue. */
  async enqueueInputs(open: Open, id?: string): Promise<void> {
    const rows = await writeStore('read the addresses', () => this.#store.fleetUnqueued(id));
    for (const row of rows) {
      const chunks = chunksOf(row.id, firstTries(row.first, row.emails), this.#settings.chunkSize);
      await this.#enqueue(open, chunks, (k) => `${row.id}.${row.first}.${k}`);
      await writeStore('mark the addresses queued', () => this.#store.fleetQueued(row.id, [row.first]));
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
}
