/**
 * The worker fleet (issue 12): one job verified by 1, 2 and 4 `createWorker` processes (BullMQ on Redis,
 * PostgreSQL as the record) against latency-injected loopback servers (every SMTP reply 10 ms late, many MX
 * hosts, per-MX concurrency 2 in each worker), and by the in-process runner in one process, as the baseline.
 * Each verifier runs in a child process of its own (bench/fleet-child.ts); the API node runs here.
 *
 * Run: npm run bench -- fleet
 *      npx tsx bench/fleet.ts [--addresses 8000] [--domains 64] [--mx-hosts 8] [--delay-ms 10] [--per-mx 2]
 *                             [--workers 1,2,4]
 * Needs Redis and PostgreSQL: MAILVET_BENCH_REDIS_URL (else MAILVET_TEST_REDIS_URL, else redis://127.0.0.1:6379)
 * and MAILVET_BENCH_POSTGRES_URL (else MAILVET_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/test).
 * Goals: 4 workers >= 3x the throughput of 1 worker while the MX limit binds; 1 worker within 1.2x of in-process.
 * Two columns tell which limit binds each row: `MX bound`, the session bound of bench/network-fixture.ts with
 * per-MX concurrency `--per-mx` times the number of verifiers (each worker keeps its own per-MX limit, as each
 * would on its own egress address) and one catch-all probe per domain, and `wall / bound`; and `CPU busy`, the
 * share of the machine's cores busy during the row (from /proc/stat, where there is one). A row near 100% CPU
 * busy and far above its bound is bound by CPU, not by the mail servers: add cores, or lengthen `--delay-ms`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import pg from 'pg';
import { BulkJobManager } from '../src/bulk/manager.js';
import { deleteFleetKeys } from '../src/bullmq/connection.js';
import { bullmqRunner } from '../src/bullmq/runner.js';
import { DEFAULTS } from '../src/options.js';
import { postgresStore } from '../src/postgres/pg.js';
import { DEFAULT_PIPELINE_DEPTH } from '../src/smtp/pool.js';
import { sessionBoundMs, startNetworkFixture } from './network-fixture.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '8000' },
    domains: { type: 'string', default: '64' },
    'mx-hosts': { type: 'string', default: '8' },
    'delay-ms': { type: 'string', default: '10' },
    'per-mx': { type: 'string', default: '2' },
    workers: { type: 'string', default: '1,2,4' },
  },
});
const integer = (name: Exclude<keyof typeof values, 'workers'>) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};
const shape = {
  addresses: integer('addresses'),
  domains: integer('domains'),
  mxHosts: integer('mx-hosts'),
  delayMs: integer('delay-ms'),
};
const perMx = integer('per-mx');
const fleets = values.workers.split(',').map(Number);
const redisUrl =
  process.env.MAILVET_BENCH_REDIS_URL ?? process.env.MAILVET_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const postgresUrl =
  process.env.MAILVET_BENCH_POSTGRES_URL ??
  process.env.MAILVET_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const CHILD = new URL('./fleet-child.ts', import.meta.url).pathname;

const fixture = await startNetworkFixture({ ...shape, server: 'scripted' });
const { dns, ports } = fixture.endpoints();
const base = { dns, ports, perMx };

/** Starts a child; resolves with it and its first line of output. */
async function child(settings: object): Promise<{ process: ChildProcess; line: Promise<string> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, MAILVET_BENCH_CHILD: JSON.stringify(settings) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = new Promise<string>((resolve, reject) => {
    let output = '';
    proc.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const end = output.indexOf('\n');
      if (end >= 0) resolve(output.slice(0, end));
    });
    proc.once('exit', (code) => reject(new Error(`bench child exited with ${code}`)));
  });
  return { process: proc, line };
}

async function inProcess(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'mailvet-fleet-bench-'));
  try {
    const file = join(dir, 'emails.json');
    await writeFile(file, JSON.stringify(fixture.emails));
    const run = await child({ ...base, mode: 'in-process', emailsFile: file });
    return (JSON.parse(await run.line) as { wallMs: number }).wallMs;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function fleet(workers: number): Promise<number> {
  const schema = `mv_bench_${randomBytes(6).toString('hex')}`;
  const prefix = `mvbench-${randomBytes(6).toString('hex')}`;
  const store = await postgresStore({ connectionString: postgresUrl, schema });
  const jobs = new BulkJobManager({ store, runner: bullmqRunner({ connection: redisUrl, prefix }) });
  const children: ChildProcess[] = [];
  try {
    await jobs.opened();
    for (let i = 0; i < workers; i++) {
      const run = await child({
        ...base,
        mode: 'worker',
        redis: redisUrl,
        prefix,
        postgres: postgresUrl,
        schema,
      });
      await run.line;
      children.push(run.process);
    }
    const completed = new Set<string>();
    let wake = (): void => {};
    jobs.on('complete', (done) => {
      completed.add(done.id);
      wake();
    });
    const started = performance.now();
    const job = await jobs.create({ emails: fixture.emails });
    while (!completed.has(job.id)) await new Promise<void>((resolve) => (wake = resolve));
    const wallMs = performance.now() - started;
    const done = await jobs.get(job.id);
    if (done?.completed !== fixture.emails.length) throw new Error('the fleet lost positions');
    return wallMs;
  } finally {
    for (const proc of children) {
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    }
    await jobs.close().catch((error: unknown) => console.error(`closing the API node: ${String(error)}`));
    await cleanUp(prefix, schema);
  }
}

/** Deletes the run's Redis keys and PostgreSQL schema, each whatever happened to the other. */
async function cleanUp(prefix: string, schema: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    await deleteFleetKeys(redis, prefix);
  } finally {
    redis.disconnect();
    const client = new pg.Client({ connectionString: postgresUrl });
    await client.connect();
    try {
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    } finally {
      await client.end();
    }
  }
}

/** Busy and total jiffies of all cores so far, from /proc/stat; `undefined` where there is none. */
function cpuTimes(): { busy: number; total: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    const total = fields.reduce((sum, value) => sum + value, 0);
    return { busy: total - fields[3]! - (fields[4] ?? 0), total };
  } catch {
    return undefined;
  }
}

/** Runs `work` and returns its wall time with the share of the machine's cores busy meanwhile. */
async function measured(
  work: () => Promise<number>,
): Promise<{ wallMs: number; cpuBusy: number | undefined }> {
  const before = cpuTimes();
  const wallMs = await work();
  const after = cpuTimes();
  const cpuBusy =
    before === undefined || after === undefined || after.total === before.total
      ? undefined
      : (after.busy - before.busy) / (after.total - before.total);
  return { wallMs, cpuBusy };
}

const perHost = fixture.perHost();
/** The session bound of `verifiers` verifiers, each with its own per-MX limit of `perMx`. */
const boundMs = (verifiers: number) =>
  sessionBoundMs(perHost.addresses, perHost.probes, perHost.rejects, {
    perMxConcurrency: perMx * verifiers,
    rcptsPerRoundTrip: DEFAULT_PIPELINE_DEPTH,
    maxRcptPerSession: DEFAULTS.maxRcptPerSession,
    maxRejectsPerSession: DEFAULTS.maxRejectsPerSession,
    delayMs: shape.delayMs,
  });

const rows: { runner: string; wallMs: number; cpuBusy: number | undefined; boundMs: number }[] = [];
try {
  rows.push({ runner: 'in-process', ...(await measured(inProcess)), boundMs: boundMs(1) });
  for (const workers of fleets) {
    rows.push({
      runner: `fleet, ${workers} worker${workers === 1 ? '' : 's'}`,
      ...(await measured(() => fleet(workers))),
      boundMs: boundMs(workers),
    });
  }
} finally {
  await fixture.close();
}

const rate = (wallMs: number) => fixture.emails.length / (wallMs / 1000);
const one = rows.find((row) => row.runner === 'fleet, 1 worker');
const inproc = rows[0]!;
console.log(
  `fleet bench: ${shape.addresses} addresses, ${shape.domains} domains on ${shape.mxHosts} MX hosts, ` +
    `${shape.delayMs} ms per SMTP reply, per-MX concurrency ${perMx} per verifier`,
);
console.log(
  `command: npx tsx bench/fleet.ts --addresses ${shape.addresses} --domains ${shape.domains} --mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --per-mx ${perMx} --workers ${values.workers}`,
);
console.log(
  'runner                 wall s   addr/s   vs 1 worker   vs in-process   MX bound s   wall / bound   CPU busy',
);
for (const row of rows) {
  const vsOne = one === undefined ? '' : `${(rate(row.wallMs) / rate(one.wallMs)).toFixed(2)}x`;
  const vsIn = `${(rate(row.wallMs) / rate(inproc.wallMs)).toFixed(2)}x`;
  const busy = row.cpuBusy === undefined ? 'n/a' : `${(row.cpuBusy * 100).toFixed(0)}%`;
  console.log(
    `${row.runner.padEnd(22)} ${(row.wallMs / 1000).toFixed(2).padStart(6)}  ${rate(row.wallMs).toFixed(0).padStart(7)}  ${vsOne.padStart(12)}  ${vsIn.padStart(14)}  ${(row.boundMs / 1000).toFixed(2).padStart(11)}  ${`${(row.wallMs / row.boundMs).toFixed(2)}x`.padStart(13)}  ${busy.padStart(9)}`,
  );
}
const four = rows.find((row) => row.runner === 'fleet, 4 workers');
if (one !== undefined && four !== undefined) {
  console.log(`goal 4 workers >= 3x 1 worker: ${(rate(four.wallMs) / rate(one.wallMs)).toFixed(2)}x`);
}
if (one !== undefined) {
  console.log(
    `goal 1 worker within 1.2x of in-process (time ratio): ${(one.wallMs / inproc.wallMs).toFixed(2)}x`,
  );
}
process.exit(0);
