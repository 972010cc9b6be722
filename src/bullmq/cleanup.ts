/**
 * Removing what a job left on the fleet's queues once it ended or was deleted: its chunks (waiting, delayed,
 * failed) on the shared queue and on every worker's greylisting retry queue, and the retry queues of workers that
 * are gone and have nothing left.
 * @module
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { parseEntry, unindexGone } from './chunk-index.js';
import { isChunkData } from './chunks.js';
import type { BullMq, FleetKeys } from './connection.js';

/** Index entries read at once. */
const PAGE = 1000;

/**
 * Removes the chunks of job `id` from every queue of the fleet: all of them (`below` undefined: the job was
 * deleted or failed), or those whose positions are all below `below` (the job completed with `below` positions:
 * chunks of addresses added after the completion are kept). A chunk a worker holds is left (it is removed when
 * that worker acknowledges it). Then drops the retry queues touched whose worker has no heartbeat and that hold
 * nothing.
 *
 * The chunks are those the job's index names (see chunk-index.ts), and the entries of those that are gone leave
 * the index: once nothing of the job is left, its index is gone too. Cost: a few commands per chunk of the job
 * still indexed, whatever else Redis holds (no SCAN). Chunks queued by a version of mailvet that kept no index are
 * indexed once per fleet by the first API node of this version (see earlier-chunks.ts).
 */
export async function forgetJobChunks(
  bullmq: BullMq,
  client: Redis,
  keys: FleetKeys,
  id: string,
  below?: number,
): Promise<void> {
  const queues = new Map<string, Queue>();
  const queueOf = (name: string): Queue => {
    let queue = queues.get(name);
    if (queue === undefined) {
      queue = new bullmq.Queue(name, { connection: client, prefix: keys.prefix });
      queue.on('error', () => {}); // the calls below report
      queues.set(name, queue);
    }
    return queue;
  };
  try {
    await client.del(keys.jobPace(id)); // the job's pace (see pace.ts) is of no use either
    let cursor = '0';
    do {
      const [next, entries] = await client.sscan(keys.jobChunks(id), cursor, 'COUNT', PAGE);
      cursor = next;
      for (const entry of entries) {
        const chunk = parseEntry(entry);
        if (chunk === undefined) continue;
        const queue = queueOf(chunk.queue);
        if (below !== undefined && !(await finalOnly(client, `${keys.prefix}:${entry}`, below))) continue;
        await queue.remove(chunk.id); // 0 when a worker holds it: it stays, with its entry
      }
      await unindexGone(client, keys, id, entries);
    } while (cursor !== '0');
    const retry = keys.retryQueue('');
    for (const [name, queue] of queues) {
      if (!name.startsWith(retry)) continue;
      if ((await client.exists(`${keys.workers}${name.slice(retry.length)}`)) === 1) continue;
      const counts = await queue.getJobCounts();
      if (Object.values(counts).every((count) => count === 0)) await queue.obliterate({ force: true });
    }
  } finally {
    for (const queue of queues.values()) await queue.close();
  }
}

/** True when the chunk stored at `key` holds only positions below `below` (all of them have a result). */
async function finalOnly(client: Redis, key: string, below: number): Promise<boolean> {
  const text = await client.hget(key, 'data');
  if (text === null) return false;
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return false;
  }
  return isChunkData(data) && data.positions.every((position) => position < below);
}
