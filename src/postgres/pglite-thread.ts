/**
 * A PGlite database run on a worker thread of its own, behind the {@link SqlDriver} interface. PGlite executes
 * every statement, and its file writes, synchronously on the thread that calls it: on the main thread, a commit
 * of a few thousand results or a checkpoint held the event loop for 100-300 ms (an HTTP server in the same
 * process answered nothing meanwhile). On its own thread, the main thread only posts the SQL and receives rows.
 * @module
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Row, SqlClient, SqlDriver } from './driver.js';

/**
 * The worker's code (CommonJS, run with `eval`, so that it needs no file of its own next to the compiled or the
 * TypeScript sources). It opens `PGlite.create(workerData.dataDir)` from `workerData.module` (the package's CommonJS
 * entry), answers `open` once it is open, and then each request by its `id`: `query` (in transaction `tx` if
 * given), `begin` (a transaction that stays open until `commit` or `rollback`), `close`. Requests run as they
 * arrive; PGlite orders them (a statement outside a transaction waits for the open one to end).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const transactions = new Map();
let db;
const opening = (async () => {
  const { PGlite } = require(workerData.module);
  db = await PGlite.create(workerData.dataDir);
})();
function failure(error) {
  const out = { message: error instanceof Error ? error.message : String(error), name: 'Error' };
  if (error !== null && typeof error === 'object') {
    for (const [key, value] of Object.entries(error)) {
      if (key === 'query' || key === 'params' || key === 'queryOptions' || key === 'message') continue;
      if (value === null || ['string', 'number', 'boolean'].includes(typeof value)) out[key] = value;
    }
  }
  return out;
}
async function handle(request) {
  await opening;
  switch (request.op) {
    case 'open':
      return [];
    case 'query': {
      const on = request.tx === undefined ? db : transactions.get(request.tx)?.tx;
      if (on === undefined) throw new Error('no such transaction');
      return (await on.query(request.text, request.params)).rows;
    }
    case 'begin':
      return new Promise((started, failed) => {
        const entry = {};
        entry.done = db.transaction((tx) => {
          entry.tx = tx;
          return new Promise((commit, rollback) => {
            entry.commit = commit;
            entry.rollback = rollback;
            transactions.set(request.tx, entry);
            started([]);
          });
        });
        entry.done.catch(failed);
      });
    case 'commit':
    case 'rollback': {
      const entry = transactions.get(request.tx);
      if (entry === undefined) throw new Error('no such transaction');
      transactions.delete(request.tx);
      if (request.op === 'commit') {
        entry.commit();
        await entry.done;
      } else {
        entry.rollback(new Error('rolled back'));
        await entry.done.catch(() => {});
      }
      return [];
    }
    case 'close':
      await db.close();
      return [];
    default:
      throw new Error('unknown request ' + request.op);
  }
}
parentPort.on('message', (request) => {
  handle(request).then(
    (rows) => parentPort.postMessage({ id: request.id, rows }),
    (error) => parentPort.postMessage({ id: request.id, error: failure(error) }),
  );
});
`;

/** A request to the worker (see {@link WORKER_SOURCE}). */
type Request =
  | { readonly op: 'open' | 'close' }
  | {
      readonly op: 'query';
      readonly text: string;
      readonly params?: readonly unknown[];
      readonly tx?: number;
    }
  | { readonly op: 'begin' | 'commit' | 'rollback'; readonly tx: number };

/** An answer of the worker: rows, or an error's message and fields (PostgreSQL's `code`, `detail`, ...). */
interface Answer {
  readonly id: number;
  readonly rows?: Row[];
  readonly error?: { readonly message: string } & Record<string, unknown>;
}

/** Where the package's CommonJS entry is, for the worker; throws when `@electric-sql/pglite` is not installed. */
export function pgliteModulePath(): string {
  return createRequire(import.meta.url).resolve('@electric-sql/pglite');
}

/**
 * Opens PGlite on a worker thread (`dataDir`: its files; `undefined`: a database in memory) and returns a driver
 * that owns it: `close()` closes the database and ends the thread. The thread keeps the process alive only
 * while a request is waiting for its answer. Rejects with PGlite's error when the database cannot be opened.
 * @example
 * const driver = await pgliteThreadDriver('./mailvet-data', pgliteModulePath());
 * await driver.query('SELECT 1');
 */
export async function pgliteThreadDriver(dataDir: string | undefined, module: string): Promise<SqlDriver> {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { dataDir, module } });
  worker.unref();
  const pending = new Map<number, { resolve: (rows: Row[]) => void; reject: (error: Error) => void }>();
  let next = 1;
  let ended: Error | undefined;
  const endAll = (error: Error) => {
    ended ??= error;
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    worker.unref();
  };
  worker.on('message', (answer: Answer) => {
    const waiting = pending.get(answer.id);
    if (waiting === undefined) return;
    pending.delete(answer.id);
    if (pending.size === 0) worker.unref();
    if (answer.error === undefined) waiting.resolve(answer.rows ?? []);
    else waiting.reject(Object.assign(new Error(answer.error.message), answer.error));
  });
  worker.on('error', endAll);
  worker.on('exit', (code) => endAll(new Error(`the PGlite thread ended (exit code ${code})`)));

  const call = (request: Request): Promise<Row[]> =>
    new Promise((resolve, reject) => {
      if (ended !== undefined) {
        reject(ended);
        return;
      }
      const id = next++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });

  try {
    await call({ op: 'open' });
  } catch (error) {
    await worker.terminate();
    throw error;
  }
  return {
    query: (text, params) => call({ op: 'query', text, ...(params === undefined ? {} : { params }) }),
    async transaction<T>(work: (client: SqlClient) => Promise<T>): Promise<T> {
      const tx = next++;
      await call({ op: 'begin', tx });
      let result: T;
      try {
        result = await work({
          query: (text, params) =>
            call({ op: 'query', text, tx, ...(params === undefined ? {} : { params }) }),
        });
      } catch (error) {
        await call({ op: 'rollback', tx }).catch(() => {});
        throw error;
      }
      await call({ op: 'commit', tx });
      return result;
    },
    async close() {
      if (ended !== undefined) return;
      try {
        await call({ op: 'close' });
      } finally {
        await worker.terminate();
      }
    },
  };
}
