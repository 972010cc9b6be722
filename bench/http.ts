/**
 * Requests/s and p99 latency of `GET /v1/verify` in offline mode (`dns: false`, `smtp: false`) through the
 * Node server (`createServer` from mailvet/http), side by side with a bare `node:http` server that answers
 * a constant JSON body (the ceiling of any handler on this machine): the very result the API returns for the
 * address, computed once at start, so both sides send a body of the same size.
 *
 * Each server runs in its own child process pinned to CPU 0 (`taskset -c 0`), so it has exactly one core;
 * this process (the autocannon load generator) pins itself to CPU 1. Without taskset (not Linux) the
 * servers are still one process each (one JS thread), but not pinned. Same connections, same duration per
 * round. After a warm-up of each side, the sides take turns over the rounds (the order rotates each round, so
 * no side always goes first), and every figure is the median over the rounds with its min-max spread; the
 * ratio is taken within each round (both sides measured moments apart) before its median is. Each server also
 * reports the CPU time it used, which gives its capacity per core-second (1 / CPU time per request): a ratio
 * that does not depend on how much of CPU 0 the server actually got, the robust figure when other processes
 * share the machine.
 *
 * Every mailvet side (and the ceiling's body) runs compiled JavaScript, the code users run from `dist/`, not the
 * TypeScript sources: tsx, which runs this script and its children, transforms `.ts` with esbuild's `keepNames`,
 * which wraps functions and classes in `__name(...)` calls, so the sources under tsx are not the code that ships
 * (tsx leaves the `.js` files of a `"type": "module"` package untouched). The JavaScript is compiled at start,
 * with this checkout's TypeScript (`tsc -p tsconfig.build.json`), from the very sources being measured into a
 * temporary directory that resolves packages from this checkout's node_modules, so a stale `dist/` is never
 * measured; it takes a few seconds per side compiled, and a compile that fails stops the run.
 *
 * `--sources` adds a side that serves this checkout's `src/*.ts` under tsx, as the benchmark once did, so that
 * tsx's cost stays visible beside the built code. `--hono` adds a side that serves the same compiled
 * `createHandler()` through `@hono/node-server`'s `getRequestListener` instead of mailvet's own listener
 * (`toNodeListener`), to compare the two adapters. `--against=<git ref>` adds a side: the mailvet server of that
 * commit (its `src/` and tsconfig files extracted to a temporary directory and compiled the same way), so that a
 * change is measured before and after, both as built code, in one interleaved run. `--floor` adds a bare
 * `node:http` server that does only what `GET /v1/verify` cannot skip: it takes the address from the query
 * (a `decodeURIComponent` of what follows `email=`, no validation), verifies it with the compiled `verify()`,
 * writes the result with `wireResultJson` and answers with the API's five headers (a random `X-Request-Id`,
 * `Cache-Control`, `X-Content-Type-Options`, `Content-Type`, `Content-Length`); no routing, authentication,
 * parameter checks or request and response objects. It is the floor of any server that does the job, so its
 * ratio to the ceiling says how much of the gap is the job and how much mailvet's HTTP layer.
 *
 * `--logs` adds a side that serves the same compiled `createServer` with request logs on, as `mailvet serve` runs
 * it: the pino logger of `src/cli/logger.ts` in JSON at `info`, on an asynchronous file descriptor (`/dev/null`, as
 * standard output redirected to a file), one line per request (`requestLog`) and the error log (`httpErrorLog`),
 * without metrics; its cost is printed as its ratio to the plain mailvet side, round by round (target: within 5%).
 * `--observed` adds a side with all that issue 29 added on at once (bench/http-observed.ts): prom-client metrics
 * fed by the verifier and every request, the request and error logs as `--logs` has them, and a key of the key
 * store (looked up, its digest checked, its record cached) in place of a `MAILVET_API_KEYS` key; its cost is
 * printed the same way. With `--against`, each of those sides also runs on the older build, its cost printed against
 * that build's plain side: the cost before and after a change, in one run. The CPU time per request is the figure
 * to read on a shared machine.
 *
 * `--rate=<requests/s>` offers every side the same fixed load (autocannon's `overallRate`) instead of as much as
 * one load-generating core can send. Flat out, the sides run at different rates: the ceiling, faster, finds its
 * client busy more often and pays fewer wake-ups per request (the kernel's share of a response on loopback is
 * then cheaper), so its CPU time per request is measured at another operating point than mailvet's. At one
 * rate below every side's maximum, the CPU time per request differs only by what the servers do. A side that
 * cannot keep up with the rate is reported.
 *
 *   npx tsx bench/http.ts [seconds per side, default 18] [rounds, default 6] [--sources] [--hono] [--floor]
 *                         [--logs] [--observed] [--against=<git ref>] [--rate=<requests/s>]
 */
import { execFileSync, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer as createBareServer } from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type BuildOptions, buildCheckout, buildRef, type Code, REPO } from './compile.js';
import { observedServerOptions, requestLogOptions, STORED_KEY } from './http-observed.js';

/** The request logger is imported as a module of dist/cli, so the CLI is left as tsc wrote it (not bundled). */
const MODULES: BuildOptions = { bundleCli: false };

interface CannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<CannonResult>;

const KEY = 'bench-key';
const ADDRESS = 'john.smith@gmail.com';
const CONNECTIONS = 50;
const LOGGED = 'mailvet createServer + request logs (pino JSON)';
const OBSERVED = 'mailvet createServer + metrics, request logs, stored key';
/** A side that adds to a plain mailvet side of the same build: what it adds, and that plain side's index. */
interface Added {
  readonly what: string;
  readonly plain: number;
}

/** The child: serves `mode` (`bare`, `hono` or `mailvet`) with the mailvet `code` given and prints its URL. */
async function serve(mode: string, code: Code): Promise<void> {
  process.on('message', () => process.send?.(process.cpuUsage()));
  const module = (path: string) => import(pathToFileURL(join(code.dir, `${path}.${code.ext}`)).href);
  if (mode === 'bare') {
    // The same bytes the API answers with: the address's result, computed once, then served as a constant.
    const { createVerifier } = await module('verifier');
    const verifier = createVerifier({ dns: false, smtp: false });
    const body = JSON.stringify(await verifier.verify(ADDRESS));
    await verifier.dispose();
    const server = createBareServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      console.log(`http://127.0.0.1:${address.port}`);
    });
    return;
  }
  if (mode === 'floor') {
    const { createVerifier } = await module('verifier');
    const { wireResultJson } = await module('http/wire');
    const verifier = createVerifier({ dns: false, smtp: false });
    const server = createBareServer((req, res) => {
      const target = req.url ?? '';
      const email = decodeURIComponent(target.slice(target.indexOf('email=') + 'email='.length));
      verifier.verify(email).then((result: unknown) => {
        const body: string = wireResultJson(result);
        res.writeHead(200, {
          'x-request-id': globalThis.crypto.randomUUID(),
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
        });
        res.end(body);
      });
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      console.log(`http://127.0.0.1:${address.port}`);
    });
    return;
  }
  if (mode === 'hono') {
    const { getRequestListener } = await import('@hono/node-server');
    const { createHandler } = await module('http/handler');
    const handler = createHandler({
      apiKeys: [KEY],
      verifierOptions: { dns: false, smtp: false },
      limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
    });
    const server = createBareServer(getRequestListener(handler));
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      console.log(`http://127.0.0.1:${address.port}`);
    });
    return;
  }
  const { createServer } = await module('http/node');
  const verifierOptions = { dns: false, smtp: false };
  const added =
    mode === 'logged'
      ? await requestLogOptions(module)
      : mode === 'observed'
        ? await observedServerOptions(module, verifierOptions)
        : {};
  const { url } = await createServer({
    port: 0,
    apiKeys: [KEY],
    verifierOptions,
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
    ...added,
  });
  console.log(url);
}

function pin(cpu: number, pid: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Side {
  readonly name: string;
  /** The URL autocannon loads. */
  readonly url: string;
  readonly pinned: boolean;
  /** The API key its requests send. */
  readonly key: string;
  /** CPU time (user + system) the server process has used, in microseconds. */
  cpu(): Promise<number>;
  stop(): void;
}

async function startSide(name: string, mode: string, code: Code, path: string): Promise<Side> {
  const self = fileURLToPath(import.meta.url);
  const args = ['--import', 'tsx', self, `--serve=${mode}`, `--src=${code.dir}`, `--ext=${code.ext}`];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const pinned = child.pid !== undefined && pin(0, child.pid);
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line !== undefined) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`${name} server exited with ${code}`)));
  });
  const cpu = () =>
    new Promise<number>((resolve) => {
      child.once('message', (usage: { user: number; system: number }) => resolve(usage.user + usage.system));
      child.send('cpu');
    });
  // SIGKILL: a server may handle SIGTERM (@hono/node-server's does) and outlive the run, holding it open.
  const key = mode === 'observed' ? STORED_KEY : KEY;
  return { name, url: base + path, pinned, key, cpu, stop: () => child.kill('SIGKILL') };
}

interface Measure {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU time per request, in microseconds. */
  readonly cpuPerRequest: number;
  readonly failures: number;
}

async function measure(
  side: Side,
  seconds: number,
  autocannon: Autocannon,
  rate: number | undefined,
): Promise<Measure> {
  const before = await side.cpu();
  const result = await autocannon({
    url: side.url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${side.key}` },
    ...(rate === undefined ? {} : { overallRate: rate }),
  });
  const used = (await side.cpu()) - before;
  const total = result.requests.average * seconds;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: used / total,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** `median [min - max]` of `values`, each formatted by `format`. */
function spread(values: readonly number[], format: (value: number) => string): string {
  return `${format(median(values))} [${format(Math.min(...values))} - ${format(Math.max(...values))}]`;
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

function report(name: string, runs: readonly Measure[]): void {
  const failures = runs.reduce((sum, m) => sum + m.failures, 0);
  console.log(
    `${name.padEnd(40)} ${spread(
      runs.map((m) => m.rps),
      count,
    ).padEnd(26)} req/s   p99 ${median(runs.map((m) => m.p99))} ms   ${spread(
      runs.map((m) => m.cpuPerRequest),
      (v) => v.toFixed(1),
    )} µs CPU/req${failures > 0 ? `   FAILURES ${failures}` : ''}`,
  );
}

async function main(): Promise<void> {
  const serveArg = process.argv.find((arg) => arg.startsWith('--serve='));
  const srcArg = process.argv.find((arg) => arg.startsWith('--src='));
  const extArg = process.argv.find((arg) => arg.startsWith('--ext='));
  if (serveArg !== undefined && srcArg !== undefined && extArg !== undefined)
    return serve(serveArg.slice('--serve='.length), {
      dir: srcArg.slice('--src='.length),
      ext: extArg.slice('--ext='.length) === 'ts' ? 'ts' : 'js',
    });

  const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const seconds = Number(positional[0] ?? 18);
  const rounds = Math.max(5, Math.round(Number(positional[1] ?? 6)));
  const against = process.argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
  const rateArg = process.argv.find((arg) => arg.startsWith('--rate='))?.slice('--rate='.length);
  const rate = rateArg === undefined ? undefined : Number(rateArg);
  if (rate !== undefined && !(Number.isInteger(rate) && rate > 0))
    throw new Error('--rate must be a positive integer (requests per second)');
  const slice = Math.max(1, Math.round(seconds / rounds));
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const selfPinned = pin(1, process.pid);
  const sources = process.argv.includes('--sources');
  const hono = process.argv.includes('--hono');
  const floor = process.argv.includes('--floor');
  const logs = process.argv.includes('--logs');
  const observed = process.argv.includes('--observed');
  const verifyPath = `/v1/verify?email=${encodeURIComponent(ADDRESS)}`;
  const made: string[] = [];
  const sides: Side[] = [];
  /** The sides that add to a plain side, by their index. */
  const added = new Map<number, Added>();
  const addSide = async (name: string, mode: string, code: Code, plain: number, what: string) => {
    added.set(sides.length, { what, plain });
    sides.push(await startSide(name, mode, code, verifyPath));
  };
  try {
    const old = against === undefined ? undefined : buildRef(against, made, MODULES); // first: a bad ref fails early
    const built = buildCheckout(made, MODULES);
    sides.push(await startSide('bare node:http, constant JSON (ceiling)', 'bare', built, '/'));
    const plainNew = sides.length;
    sides.push(await startSide('mailvet createServer, GET /v1/verify', 'mailvet', built, verifyPath));
    if (logs) await addSide(LOGGED, 'logged', built, plainNew, 'request logs');
    if (observed) await addSide(OBSERVED, 'observed', built, plainNew, 'metrics + logs + stored key');
    if (sources) {
      const src: Code = { dir: join(REPO, 'src'), ext: 'ts' };
      sides.push(await startSide('mailvet createServer, sources under tsx', 'mailvet', src, verifyPath));
    }
    if (floor)
      sides.push(
        await startSide('bare node:http + verify() + wireResultJson (floor)', 'floor', built, verifyPath),
      );
    if (hono)
      sides.push(await startSide('hono getRequestListener(createHandler())', 'hono', built, verifyPath));
    if (old !== undefined) {
      const plainOld = sides.length;
      sides.push(await startSide(`mailvet at ${against}`, 'mailvet', old, verifyPath));
      // With --logs / --observed, the same sides of the older build: its cost before and after, in one run.
      if (logs)
        await addSide(`${LOGGED} at ${against}`, 'logged', old, plainOld, `request logs at ${against}`);
      if (observed)
        await addSide(`${OBSERVED} at ${against}`, 'observed', old, plainOld, `all at ${against}`);
    }
    console.log(
      `GET /v1/verify offline, ${CONNECTIONS} connections, ${rounds} interleaved rounds of ${slice} s per side ` +
        `(order rotating), ${rate === undefined ? 'as fast as they answer' : `a fixed load of ${rate} requests/s per side`}, node ${process.version}; ` +
        (sides.every((side) => side.pinned) && selfPinned
          ? 'servers pinned to CPU 0, autocannon to CPU 1'
          : 'taskset unavailable: servers are single processes, not pinned') +
        `; mailvet sides: built with tsc from this checkout${against === undefined ? '' : ` and from ${against}`} ` +
        `into temporary directories${sources ? ', except the one that runs the sources under tsx' : ''}`,
    );
    for (const side of sides) await measure(side, 2, autocannon, rate); // warm-up: JIT, pools
    const runs = sides.map((): Measure[] => []);
    for (let round = 0; round < rounds; round++) {
      for (let turn = 0; turn < sides.length; turn++) {
        const index = (round + turn) % sides.length;
        runs[index]?.push(await measure(sides[index] as Side, slice, autocannon, rate));
      }
    }
    console.log('medians [min - max] over the rounds:');
    for (const [index, side] of sides.entries()) report(side.name, runs[index] ?? []);
    if (rate !== undefined) {
      for (const [index, side] of sides.entries()) {
        const slowest = Math.min(...(runs[index] ?? []).map((m) => m.rps));
        if (slowest < rate * 0.97)
          console.log(
            `${side.name}: did not keep up with ${rate} requests/s in every round (${count(slowest)})`,
          );
      }
    }
    const [ceiling = [], ...servers] = runs;
    servers.forEach((mine, index) => {
      const rps = mine.map((m, round) => m.rps / (ceiling[round] as Measure).rps);
      const capacity = mine.map((m, round) => (ceiling[round] as Measure).cpuPerRequest / m.cpuPerRequest);
      console.log(
        `${(sides[index + 1] as Side).name} / ceiling: ${spread(rps, percent)} of requests/s, ` +
          `${spread(capacity, percent)} of capacity per core-second (CPU time per request; the robust figure ` +
          `on a shared machine${rate === undefined ? ', flat out' : `, at ${rate} requests/s each`})   (target: >= 70%)`,
      );
    });
    // Each side that adds to a plain mailvet server against it, round by round (target: within 5%).
    for (const [index, { what, plain: plainIndex }] of added) {
      const plain = runs[plainIndex] ?? [];
      const mine = runs[index] ?? [];
      const rps = mine.map((m, round) => m.rps / (plain[round] as Measure).rps);
      const capacity = mine.map((m, round) => (plain[round] as Measure).cpuPerRequest / m.cpuPerRequest);
      const extra = mine.map((m, round) => m.cpuPerRequest - (plain[round] as Measure).cpuPerRequest);
      console.log(
        `${what} on / off (same build, one run): ${spread(rps, percent)} of requests/s, ` +
          `${spread(capacity, percent)} of capacity per core-second, ` +
          `${spread(extra, (v) => v.toFixed(1))} µs CPU more per request   (target: >= 95%, within 5%)`,
      );
    }
  } finally {
    for (const side of sides) side.stop();
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  }
  const flags =
    (sources ? ' --sources' : '') +
    (hono ? ' --hono' : '') +
    (floor ? ' --floor' : '') +
    (logs ? ' --logs' : '') +
    (observed ? ' --observed' : '') +
    (against === undefined ? '' : ` --against=${against}`) +
    (rate === undefined ? '' : ` --rate=${rate}`);
  console.log(`reproduce: npx tsx bench/http.ts ${seconds} ${rounds}${flags}`);
}

await main();
