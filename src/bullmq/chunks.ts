/**
 * Units of work of a fleet: chunks of positions of one job, grouped by domain, bounded in size.
 * @module
 */
import { domainKey } from '../bulk/work.js';

/** A chunk as it travels on the queue (BullMQ job data). */
export interface ChunkData {
  /** The mailvet job. */
  readonly job: string;
  /** Input positions. */
  readonly positions: number[];
  /** The address at each position. */
  readonly emails: string[];
  /** The try of each position: 0 first, n the n-th greylisting retry. */
  readonly attempts: number[];
}

/** A position to verify. */
export interface ChunkItem {
  readonly position: number;
  readonly email: string;
  readonly attempt: number;
}

/**
 * Cuts `items` of job `job` into chunks of at most `size`, the items of a domain next to each other (so a worker
 * verifies a domain's addresses together and reuses its SMTP sessions), and returns them spread over the
 * queue (neighbours about √n chunks apart, so that the chunks a worker takes at once span many mail hosts). Deterministic: the same items give the same chunks in the same order, so that their queue ids
 * match when two API nodes enqueue the same inputs.
 */
export function chunksOf(job: string, items: readonly ChunkItem[], size: number): ChunkData[] {
  const byDomain = new Map<string, ChunkItem[]>();
  for (const item of items) {
    const key = domainKey(item.email);
    let group = byDomain.get(key);
    if (group === undefined) {
      group = [];
      byDomain.set(key, group);
    }
    group.push(item);
  }
  const keys = [...byDomain.keys()].sort();
  const chunks: ChunkData[] = [];
  let current: ChunkData | undefined;
  for (const key of keys) {
    for (const item of byDomain.get(key)!) {
      if (current === undefined || current.positions.length >= size) {
        current = { job, positions: [], emails: [], attempts: [] };
        chunks.push(current);
      }
      current.positions.push(item.position);
      current.emails.push(item.email);
      current.attempts.push(item.attempt);
    }
  }
  return spread(chunks);
}

/**
 * Reorders domain-sorted chunks so that neighbours on the queue are about √n chunks apart: a worker takes several
 * chunks at once, and chunks next to each other share a domain (so a mail host), whose per-MX limit would leave
 * the worker's sessions to every other host idle. Spread, each worker's first chunks span many domains.
 */
function spread<T>(chunks: readonly T[]): T[] {
  const stride = Math.ceil(Math.sqrt(chunks.length));
  const order: T[] = [];
  for (let start = 0; start < stride; start++) {
    for (let i = start; i < chunks.length; i += stride) order.push(chunks[i]!);
  }
  return order;
}

/** The items of inputs `emails` from position `first`, first tries. */
export function firstTries(first: number, emails: readonly string[]): ChunkItem[] {
  return emails.map((email, i) => ({ position: first + i, email, attempt: 0 }));
}

/** True when `value` looks like a {@link ChunkData} (data from Redis is checked before it is used). */
export function isChunkData(value: unknown): value is ChunkData {
  const data = value as Partial<ChunkData> | null;
  return (
    typeof data === 'object' &&
    data !== null &&
    typeof data.job === 'string' &&
    Array.isArray(data.positions) &&
    Array.isArray(data.emails) &&
    Array.isArray(data.attempts) &&
    data.positions.length === data.emails.length &&
    data.positions.length === data.attempts.length
  );
}
