/**
 * The fleet's index of each job's chunks: a Redis SET per job (`FleetKeys.jobChunks(id)`) whose members name the
 * chunks the fleet put on its queues, `<queue>:<chunk id>` (the chunk's BullMQ key without the prefix), so that
 * cleaning up after a job reads what the job has instead of walking the keyspace.
 *
 * Every chunk the fleet queues is in its job's index: the entry is written before the chunk is added (chunks an
 * earlier version queued are indexed once: earlier-chunks.ts). An entry leaves the index once its chunk is gone: a
 * worker removes it when it acknowledges the chunk, a clean-up when it removed the chunk or found it gone. The index
 * may name chunks that are gone (never added: a crash before the add; acknowledged, the removal of the entry lost):
 * harmless, the next clean-up of the job removes those entries. An index whose entries are all removed no longer
 * exists (Redis deletes an empty SET).
 * @module
 */
import type { Redis } from 'ioredis';
import { isChunkData } from './chunks.js';
import type { FleetKeys } from './connection.js';

/** A chunk the fleet puts on one of its queues. */
export interface QueuedChunk {
  /** The mailvet job it belongs to. */
  readonly job: string;
  /** The queue (its name without the prefix): the shared queue or a worker's retry queue. */
  readonly queue: string;
  /** Its id on that queue (the BullMQ job id). */
  readonly id: string;
}

/** Removes from the index `KEYS[1]` each entry `ARGV[i]` whose chunk `KEYS[i + 1]` is gone, in one atomic step. */
const UNINDEX_GONE = `
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 0 then redis.call('SREM', KEYS[1], ARGV[i]) end
end
return 0`;

/** Most entries handled by one script call (a call holds Redis while it runs). */
const BATCH = 1000;

/** The index entry of chunk `id` on queue `queue`. */
export function indexEntry(queue: string, id: string): string {
  return `${queue}:${id}`;
}

/** The queue and chunk id an index entry names, or `undefined` for one this module did not write. */
export function parseEntry(entry: string): { queue: string; id: string } | undefined {
  const colon = entry.indexOf(':');
  if (colon <= 0 || colon === entry.length - 1) return undefined;
  return { queue: entry.slice(0, colon), id: entry.slice(colon + 1) };
}

/**
 * Puts `chunks` on a queue with `add`, their index entries written before it (a crash in between leaves an entry for
 * a chunk that was never added: harmless) and again after it: a clean-up or an acknowledgement that found an
 * earlier chunk of the same id gone while `add` was running may have removed the entry, and the chunk is back.
 * Throws what Redis or `add` throws (a chunk is never added without its entry).
 */
export async function addIndexed(
  client: Redis,
  keys: FleetKeys,
  chunks: readonly QueuedChunk[],
  add: () => Promise<unknown>,
): Promise<void> {
  await index(client, keys, chunks);
  await add();
  await index(client, keys, chunks);
}

/** Writes the index entries of `chunks` (one transaction). */
async function index(client: Redis, keys: FleetKeys, chunks: readonly QueuedChunk[]): Promise<void> {
  if (chunks.length === 0) return;
  const byJob = new Map<string, string[]>();
  for (const chunk of chunks) {
    const entries = byJob.get(chunk.job) ?? [];
    entries.push(indexEntry(chunk.queue, chunk.id));
    byJob.set(chunk.job, entries);
  }
  const multi = client.multi();
  for (const [job, entries] of byJob) multi.sadd(keys.jobChunks(job), ...entries);
  for (const [error] of (await multi.exec()) ?? []) if (error) throw error;
}

/** Removes from the index of job `job` those of `entries` whose chunk is gone; the others stay. */
export async function unindexGone(
  client: Redis,
  keys: FleetKeys,
  job: string,
  entries: readonly string[],
): Promise<void> {
  for (let from = 0; from < entries.length; from += BATCH) {
    const batch = entries.slice(from, from + BATCH);
    const chunkKeys = batch.map((entry) => `${keys.prefix}:${entry}`);
    await client.eval(UNINDEX_GONE, 1 + batch.length, keys.jobChunks(job), ...chunkKeys, ...batch);
  }
}

/**
 * Removes the index entry of a chunk a worker acknowledged (BullMQ removed it: `removeOnComplete`), so that an index
 * names little more than the chunks still queued, and that of a job with nothing queued is gone. Data that is not a
 * chunk is left alone.
 */
export async function unindexAcknowledged(
  client: Redis,
  keys: FleetKeys,
  chunk: { readonly queueName: string; readonly id?: string | undefined; readonly data: unknown },
): Promise<void> {
  if (chunk.id === undefined || !isChunkData(chunk.data)) return;
  await unindexGone(client, keys, chunk.data.job, [indexEntry(chunk.queueName, chunk.id)]);
}
