/**
 * The worker fleet (issue 12): one job verified by 1, 2 and 4 `createWorker` processes (BullMQ on Redis,
 * PostgreSQL as the record) against latency-injected loopback servers (every SMTP reply 10 ms late, many MX
 * hosts, per-MX concurrency 2 in each worker), and by the in-process runner in one process, as the baseline.
 * Each verifier runs in a child process of its own (bench/fleet-child.ts); the API node runs here.
 *
 * Run: npm run bench -- fleet
 *      npx tsx bench/fleet.ts [--addresses 8000] [--domains 64] [--mx-hosts 8] [--delay-ms 10] [--per-mx 2]
 *                             [--workers 1,2,4] [--offline] [--rounds 1] [--against=<git ref>]
 *                             [--chunk-size <runner chunkSize>] [--concurrency <worker concurrency>]
 * `--offline`: no DNS, no SMTP (the address mix of bench/mix.ts), and the in-process job on PostgreSQL (a schema
 * of its own), as the fleet's is: what a fleet costs per address around verification. `--against=<ref>` runs every
 * row with the code of this checkout and of `ref` (each compiled with tsc, bench/compile.ts), interleaved over
 * `--rounds` rounds; figures are medians. Fleet rows print their workers' split: the share of their chunks' time
 * spent verifying, in the store (reading the chunk's state, committing), and in Redis after the commit (events,
 * pace, retries), with the number of chunks and their mean size (BullMQ's own taking and acknowledging of a chunk
 * is in none of them), and under it each worker's share of the job over time (bench/fleet-shares.ts): its chunks,
 * addresses, when it first and last worked, and the part of the wall time every worker was at work.
 * Needs Redis and PostgreSQL: MAILVET_BENCH_REDIS_URL (else MAILVET_TEST_REDIS_URL, else redis://127.0.0.1:6379)
 * and MAILVET_BENCH_POSTGRES_URL (else MAILVET_TEST_POSTGRES_URL, else postgres://postgres@127.0.0.1:5432/test).
 * Goals (issue 30): 4 workers >= 3x the throughput of 1 worker while the MX limit binds (the 40 ms shape); 1 worker
 * within 1.1x of in-process at the 10 ms shape; offline, 1 worker within 1.5x of in-process on PostgreSQL.
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
import type { BulkJobManager as Manager } from '../src/bulk/manager.js';
import type { deleteFleetKeys as DeleteFleetKeys } from '../src/bullmq/connection.js';
import type { bullmqRunner as BullmqRunner } from '../src/bullmq/runner.js';
import { DEFAULTS } from '../src/options.js';
import type { postgresStore as PostgresStore } from '../src/postgres/pg.js';
import { DEFAULT_PIPELINE_DEPTH } from '../src/smtp/pool.js';
import { buildCheckout, buildRef, type Code, REPO } from './compile.js';
import { type Share, type Span, shareLines, shareOf } from './fleet-shares.js';
import { addressMix } from './mix.js';
import { type NetworkFixture, sessionBoundMs, startNetworkFixture } from './network-fixture.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '8000' },
    domains: { type: 'string', default: '64' },
    'mx-hosts': { type: 'string', default: '8' },
    'delay-ms': { type: 'string', default: '10' },
    'per-mx': { type: 'string', default: '2' },
    workers: { type: 'string', default: '1,2,4' },
    rounds: { type: 'string', default: '1' },
    offline: { type: 'boolean', default: false },
    against: { type: 'string' },
    'chunk-size': { type: 'string' },
    concurrency: { type: 'string' },
  },
});
const integer = (
  name:
    | 'addresses'
    | 'domains'
    | 'mx-hosts'
    | 'delay-ms'
    | 'per-mx'
    | 'rounds'
    | 'chunk-size'
    | 'concurrency',
) => {
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
const rounds = integer('rounds');
const offline = values.offline;
const against = values.against;
const fleets = values.workers.split(',').map(Number);
/** The runner's `chunkSize` and the workers' `concurrency` when given (else their defaults). */
const runnerTuning = values['chunk-size'] === undefined ? {} : { chunkSize: integer('chunk-size') };
const workerTuning = values.concurrency === undefined ? {} : { concurrency: integer('concurrency') };
const redisUrl =
  process.env.MAILVET_BENCH_REDIS_URL ?? process.env.MAILVET_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const postgresUrl =
  process.env.MAILVET_BENCH_POSTGRES_URL ??
  process.env.MAILVET_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const CHILD = new URL('./fleet-child.ts', import.meta.url).pathname;

/** A side: the mailvet code every process of its rows loads. */
interface Side {
  readonly name: string;
  readonly code: Code;
}

/** The modules of a side that the API node here uses. */
interface ApiModules {
  readonly BulkJobManager: typeof Manager;
  readonly bullmqRunner: typeof BullmqRunner;
  readonly postgresStore: typeof PostgresStore;
  readonly deleteFleetKeys: typeof DeleteFleetKeys;
}

async function apiModules(code: Code): Promise<ApiModules> {
  const load = (path: string) => import(`${code.dir}/${path}.${code.ext}`);
  return {
    ...(await load('bulk/manager')),
    ...(await load('bullmq/runner')),
    ...(await load('postgres/pg')),
    ...(await load('bullmq/connection')),
  } as ApiModules;
}

const made: string[] = [];
const sides: Side[] =
  against === undefined
    ? [{ name: 'this checkout', code: { dir: join(REPO, 'src'), ext: 'ts' } }]
    : [
        { name: against, code: buildRef(against, made) }, // first: a bad ref fails early
        { name: 'this checkout', code: buildCheckout(made) },
      ];

const fixture: NetworkFixture | undefined = offline
  ? undefined
  : await startNetworkFixture({ ...shape, server: 'scripted' });
const emails = fixture?.emails ?? addressMix(shape.addresses);
const base = fixture === undefined ? { offline } : { offline, ...fixture.endpoints(), perMx };
const emailsDir = await mkdtemp(join(tmpdir(), 'mailvet-fleet-bench-'));
const emailsFile = join(emailsDir, 'emails.json');
await writeFile(emailsFile, JSON.stringify(emails));

/** A child's process and its lines of output, in order. */
interface Child {
  readonly process: ChildProcess;
  /** The `n`-th line (0-based), when it arrives. */
  line(n: number): Promise<string>;
}

/** Starts a child. */
function child(settings: object): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: { ...process.env, MAILVET_BENCH_CHILD: JSON.stringify(settings) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const lines: string[] = [];
  const waiting = new Map<number, (line: string) => void>();
  let exited: Error | undefined;
  const failures = new Set<(error: Error) => void>();
  proc.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    for (let end = output.indexOf('\n'); end >= 0; end = output.indexOf('\n')) {
      lines.push(output.slice(0, end));
      output = output.slice(end + 1);
      waiting.get(lines.length - 1)?.(lines[lines.length - 1]!);
    }
  });
  proc.once('exit', (code) => {
    exited = new Error(`bench child exited with ${code}`);
    for (const fail of failures) fail(exited);
  });
  return {
    process: proc,
    line: (n) =>
      new Promise<string>((resolve, reject) => {
        if (lines[n] !== undefined) return resolve(lines[n]);
        if (exited !== undefined) return reject(exited);
        waiting.set(n, resolve);
        failures.add(reject);
      }),
  };
}

/** A fresh PostgreSQL schema and Redis prefix for one row. */
const place = () => ({
  schema: `mv_bench_${randomBytes(6).toString('hex')}`,
  prefix: `mvbench-${randomBytes(6).toString('hex')}`,
});

/** What a row measured. */
interface Measure {
  readonly wallMs: number;
  /** CPU time of the verifying processes (the in-process child, or the workers), in milliseconds. */
  readonly cpuMs: number;
  readonly split?: Split | undefined;
  /** Each worker's share of the job (fleet rows). */
  readonly shares?: readonly Share[] | undefined;
}

/** The summed split of a fleet's workers. */
interface Split {
  readonly chunks: number;
  readonly addresses: number;
  readonly verifyMs: number;
  readonly storeMs: number;
  readonly queueMs: number;
  readonly split: boolean;
}

async function inProcess(side: Side): Promise<Measure> {
  const { schema } = place();
  const store = offline ? { postgres: postgresUrl, schema } : {};
  try {
    const run = child({ ...base, code: side.code, mode: 'in-process', emailsFile, ...store });
    return JSON.parse(await run.line(0)) as { wallMs: number; cpuMs: number };
  } finally {
    if (offline) await dropSchema(schema);
  }
}

async function fleet(side: Side, workers: number): Promise<Measure> {
  const api = await apiModules(side.code);
  const { schema, prefix } = place();
  const store = await api.postgresStore({ connectionString: postgresUrl, schema });
  const jobs = new api.BulkJobManager({
    store,
    runner: api.bullmqRunner({ connection: redisUrl, prefix, ...runnerTuning }),
  });
  const children: Child[] = [];
  try {
    await jobs.opened();
    for (let i = 0; i < workers; i++) {
      const run = child({
        ...base,
        code: side.code,
        mode: 'worker',
        ...workerTuning,
        redis: redisUrl,
        prefix,
        postgres: postgresUrl,
        schema,
      });
      await run.line(0);
      children.push(run);
    }
    const completed = new Set<string>();
    let wake = (): void => {};
    jobs.on('complete', (done) => {
      completed.add(done.id);
      wake();
    });
    const started = performance.now();
    const startedAt = performance.timeOrigin + started;
    const job = await jobs.create({ autoStart: false });
    for (let at = 0; at < emails.length; at += 100_000)
      await jobs.add(job.id, emails.slice(at, at + 100_000));
    await jobs.start(job.id);
    while (!completed.has(job.id)) await new Promise<void>((resolve) => (wake = resolve));
    const wallMs = performance.now() - started;
    const done = await jobs.get(job.id);
    if (done?.completed !== emails.length) throw new Error('the fleet lost positions');
    const splits = await Promise.all(
      children.map(async (run) => {
        run.process.kill('SIGTERM');
        return JSON.parse(await run.line(1)) as Split & { spans?: Span[]; cpuMs: number };
      }),
    );
    const shares = splits.map((one) => shareOf(one.spans ?? [], startedAt));
    const split = splits.reduce<Split>(
      (sum, one) => ({
        chunks: sum.chunks + one.chunks,
        addresses: sum.addresses + one.addresses,
        verifyMs: sum.verifyMs + one.verifyMs,
        storeMs: sum.storeMs + one.storeMs,
        queueMs: sum.queueMs + one.queueMs,
        // A worker that took no chunk tells nothing either way.
        split: one.chunks === 0 ? sum.split : sum.split && one.split,
      }),
      { chunks: 0, addresses: 0, verifyMs: 0, storeMs: 0, queueMs: 0, split: true },
    );
    const cpuMs = splits.reduce((sum, one) => sum + one.cpuMs, 0);
    return { wallMs, cpuMs, split, shares };
  } finally {
    for (const run of children) {
      if (run.process.exitCode !== null) continue;
      const exited = new Promise((resolve) => run.process.once('exit', resolve));
      run.process.kill('SIGTERM');
      await exited;
    }
    await jobs.close().catch((error: unknown) => console.error(`closing the API node: ${String(error)}`));
    await cleanUp(api, prefix, schema);
  }
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Deletes the run's Redis keys and PostgreSQL schema, each whatever happened to the other. */
async function cleanUp(api: ApiModules, prefix: string, schema: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    await api.deleteFleetKeys(redis, prefix);
  } finally {
    redis.disconnect();
    await dropSchema(schema);
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

/** Runs `work` and returns what it measured with the share of the machine's cores busy meanwhile. */
async function measured(work: () => Promise<Measure>): Promise<Measure & { cpuBusy: number | undefined }> {
  const before = cpuTimes();
  const measure = await work();
  const after = cpuTimes();
  const cpuBusy =
    before === undefined || after === undefined || after.total === before.total
      ? undefined
      : (after.busy - before.busy) / (after.total - before.total);
  return { ...measure, cpuBusy };
}

const perHost = fixture?.perHost();
/** The session bound of `verifiers` verifiers, each with its own per-MX limit of `perMx`; none offline. */
const boundMs = (verifiers: number) =>
  perHost === undefined
    ? undefined
    : sessionBoundMs(perHost.addresses, perHost.probes, perHost.rejects, {
        perMxConcurrency: perMx * verifiers,
        rcptsPerRoundTrip: DEFAULT_PIPELINE_DEPTH,
        maxRcptPerSession: DEFAULTS.maxRcptPerSession,
        maxRejectsPerSession: DEFAULTS.maxRejectsPerSession,
        delayMs: shape.delayMs,
      });

/** A row of the table: a runner on a side, measured once per round. */
interface Row {
  readonly side: Side;
  readonly runner: string;
  readonly verifiers: number;
  readonly run: () => Promise<Measure>;
  readonly measures: (Measure & { cpuBusy: number | undefined })[];
}
const rows: Row[] = [];
for (const side of sides) {
  rows.push({ side, runner: 'in-process', verifiers: 1, run: () => inProcess(side), measures: [] });
  for (const workers of fleets) {
    rows.push({
      side,
      runner: `fleet, ${workers} worker${workers === 1 ? '' : 's'}`,
      verifiers: workers,
      run: () => fleet(side, workers),
      measures: [],
    });
  }
}
try {
  for (let round = 0; round < rounds; round++) {
    // Interleaved: each round runs every row once, the sides alternating first.
    const order =
      round % 2 === 0
        ? rows
        : [
            ...sides
              .slice()
              .reverse()
              .flatMap((side) => rows.filter((row) => row.side === side)),
          ];
    for (const row of order) row.measures.push(await measured(row.run));
  }
} finally {
  await fixture?.close();
  await rm(emailsDir, { recursive: true, force: true });
  for (const dir of made) await rm(dir, { recursive: true, force: true });
}

const median = (list: readonly number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const wallOf = (row: Row) => median(row.measures.map((measure) => measure.wallMs));
const rate = (wallMs: number) => emails.length / (wallMs / 1000);
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(0)}%`;

console.log(
  offline
    ? `fleet bench: ${shape.addresses} addresses, offline (no DNS, no SMTP; the address mix of bench/mix.ts); in-process on PostgreSQL`
    : `fleet bench: ${shape.addresses} addresses, ${shape.domains} domains on ${shape.mxHosts} MX hosts, ` +
        `${shape.delayMs} ms per SMTP reply, per-MX concurrency ${perMx} per verifier; in-process on the memory store`,
);
console.log(
  `command: npx tsx bench/fleet.ts --addresses ${shape.addresses}` +
    (offline
      ? ' --offline'
      : ` --domains ${shape.domains} --mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --per-mx ${perMx}`) +
    ` --workers ${values.workers} --rounds ${rounds}${against === undefined ? '' : ` --against=${against}`}`,
);
console.log(
  `${rounds} round${rounds === 1 ? '' : 's'}, medians; ${sides.map((side) => side.name).join(' and ')}` +
    (against === undefined ? ' (sources through tsx)' : ', each compiled with tsc'),
);
for (const side of sides) {
  const own = rows.filter((row) => row.side === side);
  const inproc = own[0]!;
  const one = own.find((row) => row.runner === 'fleet, 1 worker');
  console.log(`\n${side.name}`);
  console.log(
    'runner                 wall s   addr/s   vs 1 worker   vs in-process   MX bound s   wall / bound   CPU busy   ' +
      'verify / store / queue   chunks   mean size',
  );
  for (const row of own) {
    const wallMs = wallOf(row);
    const vsOne = one === undefined ? '' : `${(rate(wallMs) / rate(wallOf(one))).toFixed(2)}x`;
    const vsIn = `${(rate(wallMs) / rate(wallOf(inproc))).toFixed(2)}x`;
    const busy = row.measures.map((measure) => measure.cpuBusy);
    const cpu = busy.includes(undefined) ? 'n/a' : `${(median(busy as number[]) * 100).toFixed(0)}%`;
    const bound = boundMs(row.verifiers);
    const last = row.measures[row.measures.length - 1]?.split;
    const split =
      last === undefined
        ? ''
        : last.split
          ? `${percent(last.verifyMs, last.verifyMs + last.storeMs + last.queueMs)} / ${percent(last.storeMs, last.verifyMs + last.storeMs + last.queueMs)} / ${percent(last.queueMs, last.verifyMs + last.storeMs + last.queueMs)}`
          : 'n/a';
    const chunks = last === undefined ? '' : String(last.chunks);
    const size = last === undefined || last.chunks === 0 ? '' : (emails.length / last.chunks).toFixed(0);
    console.log(
      `${row.runner.padEnd(22)} ${(wallMs / 1000).toFixed(2).padStart(6)}  ${rate(wallMs).toFixed(0).padStart(7)}  ${vsOne.padStart(12)}  ${vsIn.padStart(14)}  ${(bound === undefined ? '-' : (bound / 1000).toFixed(2)).padStart(11)}  ${(bound === undefined ? '-' : `${(wallMs / bound).toFixed(2)}x`).padStart(13)}  ${cpu.padStart(9)}   ${split.padStart(22)}  ${chunks.padStart(7)}  ${size.padStart(10)}`,
    );
    const walls = row.measures.map((measure) => (measure.wallMs / 1000).toFixed(2)).join(', ');
    const cpuPerK = median(row.measures.map((measure) => measure.cpuMs)) / (emails.length / 1000);
    console.log(
      `    walls of the rounds ${walls} s; verifying processes' CPU ${cpuPerK.toFixed(0)} ms per 1,000 addresses`,
    );
    const lastMeasure = row.measures[row.measures.length - 1];
    if (lastMeasure?.shares !== undefined && lastMeasure.shares.length > 0) {
      console.log("    the last round's shares:");
      for (const line of shareLines(lastMeasure.shares, lastMeasure.wallMs)) console.log(line);
    }
  }
  const four = own.find((row) => row.runner === 'fleet, 4 workers');
  if (one !== undefined && four !== undefined) {
    console.log(`goal 4 workers >= 3x 1 worker: ${(rate(wallOf(four)) / rate(wallOf(one))).toFixed(2)}x`);
  }
  if (one !== undefined) {
    console.log(
      `goal 1 worker within ${offline ? '1.5x of in-process on PostgreSQL' : '1.1x of in-process'} (time ratio): ` +
        `${(wallOf(one) / wallOf(inproc)).toFixed(2)}x`,
    );
  }
}
if (sides.length === 2) {
  console.log(`\nthis checkout against ${against} (time ratio, lower is faster):`);
  for (const row of rows.filter((one) => one.side === sides[1])) {
    const old = rows.find((one) => one.side === sides[0] && one.runner === row.runner)!;
    console.log(`  ${row.runner.padEnd(22)} ${(wallOf(row) / wallOf(old)).toFixed(2)}x`);
  }
}
process.exit(0);
