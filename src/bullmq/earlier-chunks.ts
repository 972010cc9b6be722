/**
 * A one-off for fleets upgraded from a version of mailvet that kept no index of each job's chunks (chunk-index.ts):
 * indexing the chunks such a version left on the queues, so that the clean-up of their jobs finds them.
 *
 * Without it, chunks on the shared queue would still go (a worker takes each, finds its job deleted or its positions
 * done, and acknowledges it), but the greylisting retries on the queue of an earlier worker that stopped with
 * retries waiting would stay in Redis for good: nobody takes them (an API node hands their positions to any worker
 * under another id), and only the clean-up of their job removed them.
 *
 * It costs one SCAN of the Redis keyspace, once per fleet: the first API node that finds the marker key
 * (`FleetKeys.chunksIndexed`) missing does it, then sets it. Processes of the earlier version still running after that
 * (a rolling upgrade) queue chunks that are not indexed; delete the marker key once they are all gone and the next
 * API node to start indexes again. Remove this module once no fleet runs such a version.
 * @module
 */
import type { Redis } from 'ioredis';
import { indexEntry } from './chunk-index.js';
import type { FleetKeys } from './connection.js';

/** Adds to the index `KEYS[1]` each of `ARGV` whose chunk `KEYS[i + 1]` still exists. */
const INDEX_PRESENT = `
for i = 1, #ARGV do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then redis.call('SADD', KEYS[1], ARGV[i]) end
end
return 0`;

/** Chunk ids: the job's id, a dot, then the rest (see the runner's and the worker's ids). */
const CHUNK_ID = /^([A-Za-z0-9_-]{1,128})\./;

/**
 * Indexes the chunks on the fleet's queues unless the marker says that was done, then sets the marker. A chunk
 * removed while this runs is not indexed.
 */
export async function indexEarlierChunks(client: Redis, keys: FleetKeys): Promise<void> {
  if ((await client.exists(keys.chunksIndexed)) === 1) return;
  const head = `${keys.prefix}:`;
  const retry = keys.retryQueue('');
  let cursor = '0';
  do {
    const [next, names] = await client.scan(cursor, 'MATCH', `${head}${keys.queue}*`, 'COUNT', 1000);
    cursor = next;
    const byJob = new Map<string, string[]>();
    for (const name of names) {
      const [queue, id, rest] = name.slice(head.length).split(':');
      if (queue === undefined || id === undefined || rest !== undefined) continue;
      if (queue !== keys.queue && !queue.startsWith(retry)) continue;
      const job = CHUNK_ID.exec(id)?.[1];
      if (job === undefined) continue;
      const entries = byJob.get(job) ?? [];
      entries.push(indexEntry(queue, id));
      byJob.set(job, entries);
    }
    for (const [job, entries] of byJob) {
      const chunkKeys = entries.map((entry) => `${head}${entry}`);
      await client.eval(INDEX_PRESENT, 1 + entries.length, keys.jobChunks(job), ...chunkKeys, ...entries);
    }
  } while (cursor !== '0');
  await client.set(keys.chunksIndexed, new Date().toISOString());
}
