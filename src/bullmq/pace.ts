/**
 * Chunks sized by the work: workers report how long verification takes per address on each job (its pace), and an API
 * node cuts a job's inputs into chunks that hold a worker slot for about a target time. Offline checks (tens of
 * microseconds per address) get large chunks, so the queue and database round trips of a chunk are paid per
 * thousands of addresses; SMTP work (milliseconds per address) keeps the small chunks that spread a job over workers.
 *
 * A job whose pace is not known yet (no chunk of it committed) is cut with the smallest size, and only a window of it
 * is queued ahead (see fleet-queue.ts): the rest is cut once the first chunks tell the pace.
 * @module
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from './connection.js';
import type { FleetEvent } from './events.js';

/** How long a pace is kept in Redis after its last report (a job that long idle is measured again). */
const PACE_TTL_MS = 3_600_000;
/** Weight of a chunk's measure in a worker's running pace of a job. */
const PACE_WEIGHT = 0.3;

/** The sizing settings (the runner's `chunkSize`, `maxChunkSize`, `chunkTargetMs`). */
export interface ChunkSizing {
  /** Smallest chunk: the size of chunks of a job whose pace is unknown. */
  readonly chunkSize: number;
  /** Largest chunk. */
  readonly maxChunkSize: number;
  /** How long a chunk should take to verify in one worker slot, in milliseconds. */
  readonly chunkTargetMs: number;
}

/**
 * The size of the next chunks of a job verified at `paceMs` milliseconds per address (`undefined`: not measured
 * yet): `chunkTargetMs / paceMs`, within `chunkSize`..`maxChunkSize`.
 */
export function chunkSizeFor(paceMs: number | undefined, sizing: ChunkSizing): number {
  if (paceMs === undefined || !Number.isFinite(paceMs) || paceMs < 0) return sizing.chunkSize;
  const fit = paceMs === 0 ? sizing.maxChunkSize : Math.floor(sizing.chunkTargetMs / paceMs);
  return Math.min(sizing.maxChunkSize, Math.max(sizing.chunkSize, fit));
}

/**
 * Chunks of what a job has pending that each live worker should find on the queue, at least: four times a worker's
 * default `concurrency`. A worker takes up to `concurrency` chunks at once (while its mail hosts let it verify far
 * fewer addresses at once), so with fewer chunks the first workers to ask would hold most of a job and the last
 * would idle; with this many, each worker takes several rounds of chunks and the fleet shares the job by each
 * worker's speed, down to a short end.
 */
export const CHUNKS_PER_LIVE_WORKER = 64;

/**
 * The size of chunks cut from a row of a job that has `pending` positions queued or being cut (not final) while
 * `workers` workers are live: `size` (the pace's, see {@link chunkSizeFor}), made smaller when the fleet would
 * otherwise find fewer than {@link CHUNKS_PER_LIVE_WORKER} chunks per worker, never below 1. A single worker takes
 * `size`: it has nobody to share with.
 */
export function spreadChunkSize(size: number, pending: number, workers: number): number {
  if (!(workers > 1) || !(pending > 0)) return size;
  return Math.max(1, Math.min(size, Math.ceil(pending / (workers * CHUNKS_PER_LIVE_WORKER))));
}

/** Parses a pace read from Redis; `undefined` for a missing or malformed one. */
export function parsePace(value: string | null): number | undefined {
  if (value === null) return undefined;
  const pace = Number(value);
  return Number.isFinite(pace) && pace >= 0 ? pace : undefined;
}

/** Reads the pace of job `job` (milliseconds per address), or `undefined` when no worker reported one. */
export async function readPace(client: Redis, keys: FleetKeys, job: string): Promise<number | undefined> {
  return parsePace(await client.get(keys.jobPace(job)));
}

/** A worker's running pace of each job it verifies (an exponentially weighted mean of its chunks). */
export class PaceMeter {
  readonly #paces = new Map<string, number>();
  readonly #limit: number;

  /** Keeps the paces of at most `limit` jobs (the oldest is dropped). */
  constructor(limit = 1024) {
    this.#limit = limit;
  }

  /** Adds a chunk of job `job` whose `addresses` took `ms` to verify; returns the job's running pace. */
  add(job: string, addresses: number, ms: number): number {
    const measured = ms / Math.max(1, addresses);
    const held = this.#paces.get(job);
    const pace = held === undefined ? measured : held + PACE_WEIGHT * (measured - held);
    this.#paces.delete(job);
    this.#paces.set(job, pace);
    if (this.#paces.size > this.#limit) this.#paces.delete(this.#paces.keys().next().value!);
    return pace;
  }

  /** Whether this meter holds a pace of job `job` (not forgotten since it ended). */
  has(job: string): boolean {
    return this.#paces.has(job);
  }

  /** Forgets job `job` (it ended). */
  forget(job: string): void {
    this.#paces.delete(job);
  }
}

/**
 * Tells the fleet about a chunk in one round trip: its job's pace (when measured) and `events` on the events
 * channel, in one pipeline.
 */
export async function report(
  client: Redis,
  keys: FleetKeys,
  job: string,
  paceMs: number | undefined,
  events: readonly FleetEvent[],
): Promise<void> {
  const pipeline = client.pipeline();
  if (paceMs !== undefined) pipeline.set(keys.jobPace(job), String(paceMs), 'PX', PACE_TTL_MS);
  for (const event of events) pipeline.publish(keys.events, JSON.stringify(event));
  for (const [error] of (await pipeline.exec()) ?? []) if (error) throw error;
}
