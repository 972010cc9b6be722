/**
 * A fleet worker alone in a process, for tests that kill it (a crash: it never calls `close()`). Run with
 * `node --import tsx test/bullmq/worker-process.ts <redis url> <prefix> <worker id> <heartbeatMs> <postgres url>
 * <schema>`; it prints `beating` once its first heartbeat is written, and runs until it is killed.
 */
import { createWorker } from '../../src/bullmq/worker.js';
import { postgresStore } from '../../src/postgres/pg.js';

const [connection, prefix, id, heartbeatMs, connectionString, schema] = process.argv.slice(2);
const store = await postgresStore({ connectionString: connectionString!, schema: schema! });
await createWorker({
  connection: connection!,
  prefix: prefix!,
  id: id!,
  heartbeatMs: Number(heartbeatMs),
  store,
});
process.stdout.write('beating\n');
