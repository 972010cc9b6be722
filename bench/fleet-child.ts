/**
 * A verifying process of bench/fleet.ts: a fleet worker (`worker`) or a whole in-process job (`in-process`), with
 * verifier options that reach the bench's loopback servers. Settings arrive as JSON in MAILVET_BENCH_CHILD.
 */
import { readFile } from 'node:fs/promises';
import { BulkJobManager } from '../src/bulk/manager.js';
import { createWorker } from '../src/bullmq/worker.js';
import { cachedResolver } from '../src/dns/cached.js';
import { nodeResolver } from '../src/dns/node.js';
import type { VerifyOptions } from '../src/options.js';
import { postgresStore } from '../src/postgres/pg.js';
import { loopbackTransport } from '../test/support/loopback-transport.js';

interface ChildSettings {
  readonly mode: 'worker' | 'in-process';
  readonly dns: string;
  readonly ports: Record<string, number>;
  readonly perMx: number;
  /** worker: the fleet. */
  readonly redis?: string;
  readonly prefix?: string;
  readonly postgres?: string;
  readonly schema?: string;
  /** in-process: a JSON file of the addresses. */
  readonly emailsFile?: string;
}

const settings = JSON.parse(process.env.MAILVET_BENCH_CHILD ?? '{}') as ChildSettings;
const verifierOptions: VerifyOptions = {
  resolver: cachedResolver(nodeResolver({ servers: [settings.dns] })),
  transport: loopbackTransport(settings.ports),
  allowAddresses: ['127.0.0.0/8'],
  allowTlds: ['test'],
  heloHost: 'bench.local',
  timeoutMs: 60_000,
  perMxConcurrency: settings.perMx,
};

if (settings.mode === 'worker') {
  const store = await postgresStore({ connectionString: settings.postgres!, schema: settings.schema! });
  const worker = await createWorker({
    connection: settings.redis!,
    prefix: settings.prefix!,
    store,
    verifierOptions,
  });
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => {
    void worker
      .close()
      .then(() => store.close?.())
      .then(() => process.exit(0));
  });
} else {
  const emails = JSON.parse(await readFile(settings.emailsFile!, 'utf8')) as string[];
  const jobs = new BulkJobManager({ verifierOptions });
  const completed = new Set<string>();
  let wake = (): void => {};
  jobs.on('complete', (done) => {
    completed.add(done.id);
    wake();
  });
  const started = performance.now();
  const job = await jobs.create({ emails });
  while (!completed.has(job.id)) await new Promise<void>((resolve) => (wake = resolve));
  const wallMs = performance.now() - started;
  await jobs.close();
  process.stdout.write(`${JSON.stringify({ wallMs })}\n`);
}
