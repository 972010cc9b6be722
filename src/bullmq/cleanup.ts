/**
 * Removing what a job left on the fleet's queues once it ended or was deleted: its chunks (waiting, delayed,
 * failed) on the shared queue and on every worker's greylisting retry queue, and the retry queues of workers that
 * are gone and have nothing left.
 * @module
 */
import type { Redis } from 'ioredis';
import { isChunkData } from './chunks.js';
import type { BullMq, FleetKeys } from './connection.js';

/**
 * Removes the chunks of job `id` from every queue of the fleet: all of them (`below` undefined: the job was
 * deleted or failed), or those whose positions are all below `below` (the job completed with `below` positions:
 * chunks of addresses added after the completion are kept). A chunk a worker holds is left (it is removed when
 * that worker acknowledges it). Then drops the retry queues touched whose worker has no heartbeat and that hold
 * nothing. Cost: one SCAN of the Redis keys under the fleet's prefix.
 */
export async function forgetJobChunks(
  bullmq: BullMq,
  client: Redis,
  keys: FleetKeys,
  id: string,
  below?: number,
): Promise<void> {
  const head = `${keys.prefix}:`;
  const byQueue = new Map<string, Set<string>>();
  let cursor = '0';
  do {
    const [next, found] = await client.scan(cursor, 'MATCH', `${head}${keys.queue}*:${id}.*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) {
      const [queue, chunk] = key.slice(head.length).split(':');
      if (queue === undefined || chunk === undefined || !chunk.startsWith(`${id}.`)) continue;
      if (queue !== keys.queue && !queue.startsWith(keys.retryQueue(''))) continue;
      const chunks = byQueue.get(queue) ?? new Set<string>();
      chunks.add(chunk);
      byQueue.set(queue, chunks);
    }
  } while (cursor !== '0');
  for (const [name, chunks] of byQueue) {
    const queue = new bullmq.Queue(name, { connection: client, prefix: keys.prefix });
    queue.on('error', () => {}); // the calls below report
    try {
      for (const chunk of chunks) {
        if (below !== undefined && !(await finalOnly(client, `${head}${name}:${chunk}`, below))) continue;
        await queue.remove(chunk);
      }
      const worker = name.slice(keys.retryQueue('').length);
      if (name !== keys.queue && (await client.exists(`${keys.workers}${worker}`)) === 0) {
        const counts = await queue.getJobCounts();
        if (Object.values(counts).every((count) => count === 0)) await queue.obliterate({ force: true });
      }
    } finally {
      await queue.close();
    }
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
