/**
 * A verifying process of bench/fleet.ts: a fleet worker (`worker`) or a whole in-process job (`in-process`), with
 * verifier options that reach the bench's loopback servers, or offline ones (no DNS, no SMTP). The mailvet code is
 * loaded from `code` (this checkout's sources, or a build of them or of another commit). Settings arrive as JSON in
 * MAILVET_BENCH_CHILD. A worker prints `ready`, then, when it ends (SIGTERM), its split: the time its chunks spent
 * verifying, in the store and in Redis, summed, and each chunk's span (when it started and ended, in milliseconds
 * since the epoch, and its addresses), so that the bench can tell how the job was shared out over time, and the CPU
 * time it used since it was ready (code it loads after that, as the verifier's SMTP code, included). The in-process
 * job prints its wall and CPU time.
 */
import { readFile } from 'node:fs/promises';
import type { BulkJobManager as Manager } from '../src/bulk/manager.js';
import type { createWorker as CreateWorker, WorkerJobEvent } from '../src/bullmq/worker.js';
import type { cachedResolver as CachedResolver } from '../src/dns/cached.js';
import type { nodeResolver as NodeResolver } from '../src/dns/node.js';
import type { VerifyOptions } from '../src/options.js';
import type { postgresStore as PostgresStore } from '../src/postgres/pg.js';
import { loopbackTransport } from '../test/support/loopback-transport.js';
import type { Code } from './compile.js';

interface ChildSettings {
  readonly mode: 'worker' | 'in-process';
  readonly code: Code;
  /** No DNS, no SMTP: `dns`, `ports` and `perMx` are not used. */
  readonly offline: boolean;
  readonly dns?: string;
  readonly ports?: Record<string, number>;
  readonly perMx?: number;
  /** worker: its `concurrency` (else the default). */
  readonly concurrency?: number;
  /** worker: the fleet. in-process: `postgres` and `schema` make the job's store (else the memory store). */
  readonly redis?: string;
  readonly prefix?: string;
  readonly postgres?: string;
  readonly schema?: string;
  /** in-process: a JSON file of the addresses. */
  readonly emailsFile?: string;
}

/** Addresses an in-process job takes per `add()` (as bench/store.ts uploads). */
const BATCH = 100_000;

/** This process's CPU time (user and system) since `before`, in milliseconds. */
function cpuMsSince(before: NodeJS.CpuUsage): number {
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}

const settings = JSON.parse(process.env.MAILVET_BENCH_CHILD ?? '{}') as ChildSettings;
const load = async <T>(path: string): Promise<T> =>
  (await import(`${settings.code.dir}/${path}.${settings.code.ext}`)) as T;
const { postgresStore } = await load<{ postgresStore: typeof PostgresStore }>('postgres/pg');

async function verifierOptions(): Promise<VerifyOptions> {
  if (settings.offline) return { dns: false, smtp: false };
  const { cachedResolver } = await load<{ cachedResolver: typeof CachedResolver }>('dns/cached');
  const { nodeResolver } = await load<{ nodeResolver: typeof NodeResolver }>('dns/node');
  return {
    resolver: cachedResolver(nodeResolver({ servers: [settings.dns!] })),
    transport: loopbackTransport(settings.ports!),
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    heloHost: 'bench.local',
    timeoutMs: 60_000,
    perMxConcurrency: settings.perMx!,
  };
}

if (settings.mode === 'worker') {
  const { createWorker } = await load<{ createWorker: typeof CreateWorker }>('bullmq/worker');
  const store = await postgresStore({ connectionString: settings.postgres!, schema: settings.schema! });
  const split = { chunks: 0, addresses: 0, verifyMs: 0, storeMs: 0, queueMs: 0, split: false };
  /** Each chunk's [start, end, addresses]: its start is its end less its verify, store and queue times. */
  const spans: [number, number, number][] = [];
  const worker = await createWorker({
    connection: settings.redis!,
    prefix: settings.prefix!,
    store,
    verifierOptions: await verifierOptions(),
    // Like the in-process side (no known results): each round asks every mail server.
    knownResults: false,
    ...(settings.concurrency === undefined ? {} : { concurrency: settings.concurrency }),
    onJob(event: WorkerJobEvent) {
      if (event.event !== 'chunk') return;
      split.chunks++;
      // Workers of a commit before the split (--against) report none of it.
      if (event.verifyMs === undefined) return;
      split.split = true;
      split.addresses += event.addresses ?? 0;
      split.verifyMs += event.verifyMs;
      split.storeMs += event.storeMs ?? 0;
      split.queueMs += event.queueMs ?? 0;
      const end = performance.timeOrigin + performance.now();
      const spent = event.verifyMs + (event.storeMs ?? 0) + (event.queueMs ?? 0);
      spans.push([end - spent, end, event.addresses ?? 0]);
    },
  });
  process.stdout.write('ready\n');
  const cpu = process.cpuUsage();
  process.once('SIGTERM', () => {
    void worker
      .close()
      .then(() => store.close?.())
      .then(() => {
        process.stdout.write(`${JSON.stringify({ ...split, spans, cpuMs: cpuMsSince(cpu) })}\n`);
        process.exit(0);
      });
  });
} else {
  const { BulkJobManager } = await load<{ BulkJobManager: typeof Manager }>('bulk/manager');
  const emails = JSON.parse(await readFile(settings.emailsFile!, 'utf8')) as string[];
  const store =
    settings.postgres === undefined
      ? undefined
      : await postgresStore({ connectionString: settings.postgres, schema: settings.schema! });
  const jobs = new BulkJobManager({
    verifierOptions: await verifierOptions(),
    ...(store === undefined ? {} : { store }),
  });
  await jobs.opened();
  const completed = new Set<string>();
  let wake = (): void => {};
  jobs.on('complete', (done) => {
    completed.add(done.id);
    wake();
  });
  const started = performance.now();
  const cpu = process.cpuUsage();
  const job = await jobs.create({ autoStart: false });
  for (let at = 0; at < emails.length; at += BATCH) await jobs.add(job.id, emails.slice(at, at + BATCH));
  await jobs.start(job.id);
  while (!completed.has(job.id)) await new Promise<void>((resolve) => (wake = resolve));
  const wallMs = performance.now() - started;
  const cpuMs = cpuMsSince(cpu);
  const done = await jobs.get(job.id);
  if (done?.completed !== emails.length) throw new Error('the in-process job lost positions');
  await jobs.close();
  process.stdout.write(`${JSON.stringify({ wallMs, cpuMs })}\n`);
}
