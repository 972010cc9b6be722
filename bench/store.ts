/**
 * Durable bulk-job stores against the memory store: one offline job (no DNS, no SMTP) of `count` addresses,
 * uploaded in batches of 100,000, timed from `create()` to the `complete` event, on `memoryJobStore`,
 * `pgliteStore` (a fresh data directory; its initdb is not timed) and `postgresStore` (a fresh schema on the
 * server of MAILVET_TEST_POSTGRES_URL; skipped with a notice when unreachable). Each store and size runs in a
 * child process of its own, so that the peak RSS is that run's alone; with count > 100,000 the 100,000 run is
 * made too, for the RSS growth. Then, for each durable store, a `count`-address job is stopped by `close()` once
 * half of it is verified, and a new process times the restart: `new BulkJobManager` to `opened()` (recovery),
 * and to the job's completion. Rounds alternate the order of the stores; addr/s and resume times are medians.
 *
 *   npx tsx bench/store.ts [count, default 1000000] [rounds, default 1] [--stores=memory,pglite,postgres] [--no-resume]
 *     [--retained]
 *
 * `--retained` also prints what each run holds once 90% of its job is verified, after a full garbage collection
 * (`heapUsed + external`, children run with `--expose-gc`): the memory the job keeps, without the garbage that
 * peak RSS also counts. That one collection is inside the timed run.
 *
 * Goals: PostgreSQL >= 50,000 addr/s, PGlite >= 25,000 addr/s, peak RSS for `count` within 1.5x that for
 * 100,000 (durable stores), resume of 1M with 500k pending <= 5 s.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { BulkJobManager } from '../src/bulk/manager.js';
import { memoryJobStore } from '../src/bulk/memory-store.js';
import type { BulkVerifier, JobStore } from '../src/bulk/types.js';
import { pgliteStore, postgresStore } from '../src/postgres/index.js';
import { createVerifier } from '../src/verifier.js';
import { addressMix } from './mix.js';

type StoreName = 'memory' | 'pglite' | 'postgres';
const POSTGRES_URL = process.env.MAILVET_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const BATCH = 100_000;
const GOALS: Record<StoreName, number> = { memory: 0, pglite: 25_000, postgres: 50_000 };

/** The store `name` in `place` (a data directory for PGlite, a schema for PostgreSQL). */
function openStore(name: StoreName, place: string): Promise<JobStore> | JobStore {
  if (name === 'pglite') return pgliteStore({ dataDir: place });
  if (name === 'postgres') return postgresStore({ connectionString: POSTGRES_URL, schema: place });
  return memoryJobStore();
}

/** The job's addresses, batch by batch: the address mix with a per-batch prefix, so that batches differ. */
function* batches(count: number): Generator<string[]> {
  const base = addressMix(Math.min(BATCH, count));
  for (let from = 0; from < count; from += BATCH) {
    yield base.slice(0, Math.min(BATCH, count - from)).map((email) => `x${from / BATCH}.${email}`);
  }
}

/** Creates the job (not started), adds its `count` addresses in batches, and returns its id. */
async function upload(jobs: BulkJobManager, count: number): Promise<string> {
  const { id } = await jobs.create({ autoStart: false });
  for (const emails of batches(count)) await jobs.add(id, emails);
  return id;
}

/** Resolves when a job completes; rejects, naming the error, when one fails (a bench must not hang on that). */
const completion = (jobs: BulkJobManager) =>
  new Promise<void>((resolve, reject) => {
    jobs.on('complete', () => resolve());
    jobs.on('failed', (job) => reject(new Error(`the job failed: ${JSON.stringify(job.error)}`)));
  });

/** In a child process: one measurement, printed as a JSON line. */
async function child(mode: string, name: StoreName, count: number, place: string): Promise<object> {
  const offline = createVerifier({ dns: false, smtp: false });
  if (mode === 'resume') {
    const opening = performance.now();
    const store = await openStore(name, place);
    const start = performance.now();
    const jobs = new BulkJobManager({ store, verifier: offline });
    const done = completion(jobs);
    await jobs.opened();
    const resumeS = (performance.now() - start) / 1000;
    const [job] = (await jobs.list()).jobs;
    const pending = (job?.total ?? 0) - (job?.completed ?? 0);
    if (job?.status !== 'complete') await done;
    const completeS = (performance.now() - start) / 1000;
    await jobs.close();
    return { openS: (start - opening) / 1000, resumeS, completeS, pending };
  }
  // For `stop`: the manager is closed (in-flight verifications settle and are stored) once half of the distinct
  // addresses were handed to the verifier (progress events lag behind: results wait for their commit).
  let half = Number.POSITIVE_INFINITY;
  if (mode === 'stop') {
    half = 0;
    for (const emails of batches(count)) half += new Set(emails).size / 2;
  }
  let calls = 0;
  let stopped: Promise<void> | undefined;
  const stopping: BulkVerifier = {
    verify(email) {
      if (++calls >= half) stopped ??= jobs.close();
      return offline.verify(email);
    },
  };
  const store = await openStore(name, place); // PGlite's initdb happens here, outside the timing
  const jobs = new BulkJobManager({
    store,
    verifier: mode === 'stop' ? stopping : offline,
    maxAddressesPerJob: count,
  });
  await jobs.opened();
  const done = completion(jobs);
  // --retained: what the process holds once 90% of the job is verified (after a full collection), apart from
  // the garbage the collector has not taken yet, which peak RSS counts too.
  let retainedBytes: number | undefined;
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined && mode === 'run') {
    jobs.on('progress', (job) => {
      if (retainedBytes !== undefined || job.completed < count * 0.9) return;
      gc();
      const memory = process.memoryUsage();
      retainedBytes = memory.heapUsed + memory.external;
    });
  }
  const start = performance.now();
  const id = await upload(jobs, count);
  await jobs.start(id);
  if (mode === 'stop') {
    while (stopped === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    await stopped;
    return {};
  }
  await done;
  const rate = count / ((performance.now() - start) / 1000);
  await jobs.close();
  await offline.dispose();
  return {
    rate,
    rssKiB: process.resourceUsage().maxRSS,
    ...(retainedBytes === undefined ? {} : { retainedBytes }),
  };
}

const script = fileURLToPath(import.meta.url);

/** Runs one child measurement and returns its JSON line. */
function measure(mode: string, name: StoreName, count: number, place: string): Record<string, number> {
  const flags = process.argv.includes('--retained') ? ['--expose-gc'] : [];
  const run = spawnSync(
    process.execPath,
    [...flags, '--import', 'tsx', script, '--child', mode, name, String(count), place],
    { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (run.status !== 0) throw new Error(`child ${mode} ${name} ${count} exited with ${run.status}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, number>;
}

async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A fresh place for `name`'s data, handed to `work`, removed afterwards. */
async function inFreshPlace<T>(name: StoreName, work: (place: string) => T): Promise<T> {
  if (name === 'memory') return work('');
  if (name === 'pglite') {
    const dir = await mkdtemp(join(tmpdir(), 'mv-bench-'));
    try {
      return work(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const schema = `mv_bench_${randomBytes(6).toString('hex')}`;
  try {
    return work(schema);
  } finally {
    await withPostgres((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  }
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};
const int = (n: number) => Math.round(n).toLocaleString('en-US');
const verdict = (ok: boolean) => (ok ? 'pass' : 'FAIL');

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 1_000_000);
  const rounds = Math.max(1, Number(process.argv[3] ?? 1));
  const sizes = count > BATCH ? [BATCH, count] : [count];
  // --stores=memory,pglite,postgres runs some of them only; --no-resume skips the restart measurements.
  const wanted = process.argv.find((arg) => arg.startsWith('--stores='))?.slice('--stores='.length);
  const chosen = (name: StoreName) => wanted === undefined || wanted.split(',').includes(name);
  const resuming = !process.argv.includes('--no-resume');
  const stores = (['memory', 'pglite'] as StoreName[]).filter(chosen);
  if (chosen('postgres'))
    try {
      await withPostgres((client) => client.query('SELECT 1'));
      stores.push('postgres');
    } catch (error) {
      console.log(
        `PostgreSQL at ${POSTGRES_URL} is unreachable (${(error as Error).message}): its rows are skipped`,
      );
    }
  const runs = new Map<string, Record<string, number>[]>();
  const resumes = new Map<StoreName, Record<string, number>[]>();
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? stores : [...stores].reverse();
    for (const size of sizes) {
      for (const name of order) {
        const result = await inFreshPlace(name, (place) => measure('run', name, size, place));
        runs.set(`${name} ${size}`, [...(runs.get(`${name} ${size}`) ?? []), result]);
      }
    }
    for (const name of order.filter((store) => store !== 'memory' && resuming)) {
      const result = await inFreshPlace(name, (place) => {
        measure('stop', name, count, place);
        return measure('resume', name, count, place);
      });
      resumes.set(name, [...(resumes.get(name) ?? []), result]);
    }
  }

  console.log(
    `\noffline bulk job (no DNS, no SMTP), uploaded in batches of ${int(BATCH)}, one child process per run; ` +
      `${rounds} round(s), addr/s medians, peak RSS maxima (node ${process.version})`,
  );
  console.log(
    `${'store'.padEnd(9)} ${'addresses'.padStart(10)} ${'addr/s'.padStart(9)} ${'vs memory'.padStart(9)} ` +
      `${'peak RSS'.padStart(11)} ${'RSS growth'.padStart(10)}  goal`,
  );
  for (const size of sizes) {
    const memoryRate = median((runs.get(`memory ${size}`) ?? []).map((r) => r.rate ?? 0));
    for (const name of stores) {
      const results = runs.get(`${name} ${size}`) ?? [];
      const rate = median(results.map((r) => r.rate ?? 0));
      const rss = Math.max(...results.map((r) => r.rssKiB ?? 0)) / 1024;
      const small = Math.max(...(runs.get(`${name} ${BATCH}`) ?? []).map((r) => r.rssKiB ?? 0)) / 1024;
      const growth = size > BATCH ? rss / small : undefined;
      const goals: string[] = [];
      if (GOALS[name] > 0) goals.push(`>= ${int(GOALS[name])} addr/s ${verdict(rate >= GOALS[name])}`);
      if (growth !== undefined && name !== 'memory') goals.push(`RSS <= 1.5x ${verdict(growth <= 1.5)}`);
      const retained = Math.max(...results.map((r) => r.retainedBytes ?? 0)) / 2 ** 20;
      if (retained > 0) goals.push(`(retained at 90%: ${retained.toFixed(0)} MiB)`);
      console.log(
        `${name.padEnd(9)} ${int(size).padStart(10)} ${int(rate).padStart(9)} ` +
          `${`${(rate / memoryRate).toFixed(2)}x`.padStart(9)} ${`${rss.toFixed(0)} MiB`.padStart(11)} ` +
          `${growth === undefined ? ''.padStart(10) : `${growth.toFixed(2)}x`.padStart(10)}  ${goals.join(', ')}`,
      );
    }
  }
  console.log(`\nrestart with about half of ${int(count)} pending (close() at half, then a new process)`);
  for (const [name, results] of resumes) {
    const resume = median(results.map((r) => r.resumeS ?? 0));
    const complete = median(results.map((r) => r.completeS ?? 0));
    const pending = median(results.map((r) => r.pending ?? 0));
    const open = median(results.map((r) => r.openS ?? 0));
    console.log(
      `${name.padEnd(9)} ${int(pending).padStart(9)} pending: store open ${open.toFixed(2)} s, then ` +
        `new BulkJobManager to opened() ${resume.toFixed(2)} s, ` +
        `complete after ${complete.toFixed(2)} s  (goal: resume <= 5 s ${verdict(resume <= 5)})`,
    );
  }
  const flags = process.argv.slice(2).filter((arg) => arg.startsWith('--'));
  console.log(
    `reproduce: npx tsx bench/store.ts ${count} ${rounds}${flags.map((flag) => ` ${flag}`).join('')}`,
  );
}

if (process.argv[2] === '--child') {
  const [mode = '', name, count, place = ''] = process.argv.slice(3);
  const result = await child(mode, name as StoreName, Number(count), place);
  console.log(JSON.stringify(result));
  process.exit(0);
} else {
  await main();
}
