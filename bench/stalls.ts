/**
 * Event-loop stalls (issue 30, "Nothing stalls the server"): the event-loop delay (`perf_hooks`
 * `monitorEventLoopDelay`, 1 ms resolution: max and p99) while the server or the manager takes in a large list,
 * for this checkout and for the code of another commit (`--against=<ref>`, compiled as bench/compile.ts does),
 * each scenario in a child process of its own, sides interleaved:
 *
 * - `upload text` / `upload csv`: `POST /v1/bulk?auto_start=false` of a `count`-address list as text/plain and as
 *   text/csv (two columns) to `createServer` (src/http/node.ts) on loopback, timed to the 201;
 * - `add()`: one `jobs.add()` of 100,000 addresses (memory store);
 * - `job memory` / `job pglite`: a `count`-address offline job (no DNS, no SMTP), its addresses added 100,000 at a
 *   time, then started, timed from `create()` to the `complete` event (PGlite: a fresh data directory whose initdb
 *   is not timed).
 *
 *   npx tsx bench/stalls.ts [count, default 1000000] [--against=<ref>, default 95310b2] [--only=<scenario>,...] [--fifo]
 *
 * `--fifo` runs each child under `chrt -f 10` (Linux, root or CAP_SYS_NICE): on a machine shared with other work,
 * a process that waits for a core sees that wait as loop delay, and this keeps it out.
 *
 * The children run this script as plain JavaScript (bundled by esbuild at start), not under tsx: tsx's module hooks
 * run on a thread of their own, which under SCHED_FIFO (no time slices between threads of one priority) held a core
 * for up to 700 ms while the PGlite thread held the other, and the main thread's delay was then tsx's, not mailvet's.
 * `--against=none` measures this checkout only. 95310b2 is main before this work. Goal: max <= 50 ms and
 * p99 <= 20 ms in every scenario, and no scenario more than a few % slower.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildSync } from 'esbuild';
import { buildCheckout, buildRef, type Code, REPO } from './compile.js';
import { addressMix } from './mix.js';

const SCENARIOS = ['upload text', 'upload csv', 'add()', 'job memory', 'job pglite'] as const;
type Scenario = (typeof SCENARIOS)[number];
const ADD_COUNT = 100_000;
const BATCH = 100_000;

/** What a child measured. */
interface Measured {
  readonly maxMs: number;
  readonly p99Ms: number;
  readonly seconds: number;
}

/** The addresses of a `count`-address list, distinct per batch of 100,000. */
function addresses(count: number): string[] {
  const base = addressMix(Math.min(BATCH, count));
  const all: string[] = [];
  for (let from = 0; from < count; from += BATCH) {
    const n = Math.min(BATCH, count - from);
    for (let i = 0; i < n; i++) all.push(`x${from / BATCH}.${base[i]!}`);
  }
  return all;
}

/** In a child: runs one scenario on `code` and measures the event-loop delay while it runs. */
async function child(scenario: Scenario, code: Code, count: number): Promise<Measured> {
  const load = (path: string) => import(pathToFileURL(join(code.dir, `${path}.${code.ext}`)).href);
  const { BulkJobManager } = await load('bulk/manager');
  const { createVerifier } = await load('verifier');
  const verifier = createVerifier({ dns: false, smtp: false });
  const monitor = monitorEventLoopDelay({ resolution: 1 });
  let work: () => Promise<unknown>;
  let after: () => Promise<unknown> = async () => undefined;
  if (scenario === 'upload text' || scenario === 'upload csv') {
    const { createServer } = await load('http/node');
    const jobs = new BulkJobManager({ verifier, maxAddressesPerJob: count });
    const server = await createServer({
      port: 0,
      apiKeys: ['bench'],
      jobs,
      limits: {
        requestsPerSecond: Number.POSITIVE_INFINITY,
        maxListBytes: 1 << 30,
        maxListEmails: count,
        maxAddressesPerKey: count * 2,
        maxBytesPerKey: 1 << 30,
        maxBytesHeld: 1 << 30,
      },
    });
    const emails = addresses(count);
    const csv = scenario === 'upload csv';
    const text = csv
      ? `email,name\n${emails.map((email, i) => `${email},person ${i}`).join('\n')}\n`
      : `${emails.join('\n')}\n`;
    const body = Buffer.from(text);
    const url = `${server.url}/v1/bulk?auto_start=false`;
    const type = csv ? 'text/csv' : 'text/plain';
    const upload = (body: Buffer) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          url,
          {
            method: 'POST',
            headers: { 'content-type': type, 'content-length': body.length, authorization: 'Bearer bench' },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // A small list first: the server loads its routes on the first request (a cold start is not a stall).
    const warm = text.slice(0, text.indexOf('\n', 20_000) + 1);
    if ((await upload(Buffer.from(warm))) !== 201) throw new Error('the warm-up upload failed');
    work = async () => {
      const status = await upload(body);
      if (status !== 201) throw new Error(`the upload answered ${status}`);
    };
    after = async () => {
      await server.close();
      await jobs.close();
    };
  } else if (scenario === 'add()') {
    const jobs = new BulkJobManager({ verifier });
    const emails = addresses(ADD_COUNT);
    const { id } = await jobs.create({ autoStart: false });
    await jobs.add((await jobs.create({ autoStart: false })).id, addresses(2000)); // warm-up
    work = () => jobs.add(id, emails);
    after = () => jobs.close();
  } else {
    let store: unknown;
    let dir: string | undefined;
    if (scenario === 'job pglite') {
      const { pgliteStore } = await load('postgres/index');
      dir = mkdtempSync(join(tmpdir(), 'mv-stalls-'));
      store = await pgliteStore({ dataDir: dir });
    }
    const jobs = new BulkJobManager({
      verifier,
      maxAddressesPerJob: count,
      ...(store === undefined ? {} : { store }),
    });
    await jobs.opened();
    const emails = addresses(count);
    work = async () => {
      const done = new Promise<void>((resolve, reject) => {
        jobs.on('complete', () => resolve());
        jobs.on('failed', (job: { error: unknown }) => reject(new Error(JSON.stringify(job.error))));
      });
      const { id } = await jobs.create({ autoStart: false });
      for (let from = 0; from < count; from += BATCH) await jobs.add(id, emails.slice(from, from + BATCH));
      await jobs.start(id);
      await done;
    };
    after = async () => {
      await jobs.close();
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    };
  }
  await new Promise((resolve) => setTimeout(resolve, 50)); // what the setup left settles first
  monitor.enable();
  // The monitor records from its second tick on: a stall before its first one would go unseen.
  await new Promise((resolve) => setTimeout(resolve, 20));
  const start = performance.now();
  await work();
  const seconds = (performance.now() - start) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 5)); // the tick that waited through the end is counted
  monitor.disable();
  await after();
  await verifier.dispose();
  return { maxMs: monitor.max / 1e6, p99Ms: monitor.percentile(99) / 1e6, seconds };
}

const script = fileURLToPath(import.meta.url);

/** This script bundled into one plain JavaScript file in a temporary directory (added to `made`), for the children. */
function bundledScript(made: string[]): string {
  // Under the checkout's node_modules, so that the packages left as imports (esbuild) resolve from the bundle.
  const cache = join(REPO, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(join(cache, 'mv-stalls-child-'));
  made.push(dir);
  const outfile = join(dir, 'stalls.mjs');
  buildSync({
    packages: 'external',
    entryPoints: [script],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
  });
  return outfile;
}

/**
 * Runs one scenario of one side in a child process (`childScript`, from {@link bundledScript}); with `fifo`, under `chrt -f 10` (Linux SCHED_FIFO: the child
 * and its threads take a core whenever they can run), so that other processes on a shared machine do not show
 * up as loop delay: what is left is the child's own work.
 */
function measure(
  scenario: Scenario,
  code: Code,
  count: number,
  fifo: boolean,
  childScript: string,
): Measured {
  const node = [process.execPath, childScript, '--child', scenario, code.dir, code.ext, String(count)];
  const [command, ...args] = fifo ? ['chrt', '-f', '10', ...node] : node;
  const run = spawnSync(command!, args, {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (run.status !== 0) throw new Error(`child ${scenario} (${code.dir}) exited with ${run.status}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}') as Measured;
}

async function main(): Promise<void> {
  const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const count = Number(positional[0] ?? 1_000_000);
  const against = process.argv.find((arg) => arg.startsWith('--against='))?.slice(10) ?? '95310b2';
  const only = process.argv
    .find((arg) => arg.startsWith('--only='))
    ?.slice(7)
    .split(',');
  const scenarios = SCENARIOS.filter((name) => only === undefined || only.includes(name));
  const fifo = process.argv.includes('--fifo');
  const made: string[] = [];
  try {
    const sides: { name: string; code: Code }[] = [];
    if (against !== 'none') sides.push({ name: `before (${against})`, code: buildRef(against, made) });
    sides.push({ name: 'after (this checkout)', code: buildCheckout(made) });
    const childScript = bundledScript(made);
    console.log(
      `event-loop delay (monitorEventLoopDelay, 1 ms resolution) while a list is taken in; ${count.toLocaleString('en-US')} ` +
        `addresses (add(): ${ADD_COUNT.toLocaleString('en-US')}), one child process per run (node ${process.version})`,
    );
    console.log(
      `${'scenario'.padEnd(12)} ${'side'.padEnd(24)} ${'max'.padStart(9)} ${'p99'.padStart(9)} ${'time'.padStart(9)}  goal`,
    );
    for (const scenario of scenarios) {
      const results = new Map<string, Measured>();
      // Interleaved: the order of the sides alternates from one scenario to the next.
      const order = SCENARIOS.indexOf(scenario) % 2 === 0 ? sides : [...sides].reverse();
      for (const side of order)
        results.set(side.name, measure(scenario, side.code, count, fifo, childScript));
      for (const side of sides) {
        const r = results.get(side.name)!;
        const ok = r.maxMs <= 50 && r.p99Ms <= 20;
        console.log(
          `${scenario.padEnd(12)} ${side.name.padEnd(24)} ${`${r.maxMs.toFixed(1)} ms`.padStart(9)} ` +
            `${`${r.p99Ms.toFixed(1)} ms`.padStart(9)} ${`${r.seconds.toFixed(2)} s`.padStart(9)}  ` +
            `max <= 50 ms, p99 <= 20 ms: ${ok ? 'pass' : 'FAIL'}`,
        );
      }
    }
    console.log(
      `reproduce: npx tsx bench/stalls.ts ${count} --against=${against}${only === undefined ? '' : ` --only='${only.join(',')}'`}${fifo ? ' --fifo' : ''}`,
    );
  } finally {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  const [scenario, dir = '', ext, count] = process.argv.slice(3);
  const result = await child(scenario as Scenario, { dir, ext: ext as Code['ext'] }, Number(count));
  console.log(JSON.stringify(result));
  process.exit(0);
} else {
  await main();
}
