/**
 * The CPU time per request of each part of the observability that `mailvet serve` adds to `GET /v1/verify`,
 * measured in process (no sockets, so a shared machine moves it less than bench/http.ts): the request log line
 * (`requestLog` on the pino logger of `src/cli/logger.ts`, JSON to `/dev/null` through its batched writer), the
 * metrics (`createMetrics`' `onRequest` and the verifier observer's `verified`), and a stored key's
 * authentication beyond a `MAILVET_API_KEYS` key's (`storeKeys` against `bearerKeys`). Each part runs in rounds of
 * many calls, this checkout and (with `--against=<git ref>`) that commit taking turns, both compiled by
 * bench/compile.ts; the figures are medians over the rounds, after the loop's own cost (making the record) is
 * taken off.
 *
 *   npx tsx bench/observe-cost.ts [calls per round, default 100000] [rounds, default 7] [--against=<git ref>]
 */
import { createWriteStream, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BuildOptions, buildCheckout, buildRef, type Code } from './compile.js';

/** The request logger is imported as a module of dist/cli, so the CLI is left as tsc wrote it (not bundled). */
const MODULES: BuildOptions = { bundleCli: false };

const STORED_KEY = `mv_benchkey_${'k'.repeat(43)}`;
const ENV_KEY = 'bench-key';
const RESULT = { status: 'valid', sub_status: null, smtp_provider: 'google' };

type Part = (index: number) => void;

/** The parts of one build, each a function of the call's index. */
async function partsOf(code: Code): Promise<Record<string, Part>> {
  const module = (path: string) => import(pathToFileURL(join(code.dir, `${path}.${code.ext}`)).href);
  const { createLogger } = await module('cli/logger');
  const { requestLog } = await module('http/request-log');
  const { createMetrics } = await module('metrics/registry');
  const { storeKeys } = await module('http/store-keys');
  const { bearerKeys } = await module('http/auth');
  const { apiKeyHash } = await module('io/api-key');
  const sink = createWriteStream('/dev/null', { fd: openSync('/dev/null', 'w') });
  const log = requestLog(
    createLogger({ level: 'info', format: 'json', addresses: false }, { stream: sink }).log,
  );
  const metrics = createMetrics();
  const record = {
    id: 'benchkey',
    name: 'bench',
    hash: await apiKeyHash(STORED_KEY),
    scopes: ['verify'],
    requestsPerSecond: null,
    addressesPerDay: null,
    createdAt: 0,
    lastUsedAt: null,
    revokedAt: null,
    previousHash: null,
    previousUntil: null,
  };
  // A cache as long as the run: a re-read (every 5 s by default) would make a call wait for the store.
  const stored = storeKeys({
    store: { get: async () => record, touch: async () => {} },
    envKeys: [ENV_KEY],
    cacheMs: 600_000,
  });
  const env = bearerKeys([ENV_KEY]);
  const requestWith = (key: string) =>
    new Request('http://localhost/', { headers: { authorization: `Bearer ${key}` } });
  const storedRequest = requestWith(STORED_KEY);
  const envRequest = requestWith(ENV_KEY);
  await stored(storedRequest); // the record read and the key's digest made once, as a node that served it before
  await env(envRequest);
  const recordOf = (index: number) => ({
    requestId: `0b7c6a0e-3f1d-4c2a-9e8b-${String(100_000_000_000 + index)}`,
    method: 'GET',
    route: '/v1/verify',
    status: 200,
    durationMs: 0.1 + (index % 1000) / 1700,
    bytes: 612,
    tenant: 'key:benchkey',
    keyId: 'benchkey',
  });
  const request = new Request('http://localhost/v1/verify');
  return {
    'the loop (made record)': (index) => void recordOf(index),
    'request log line': (index) => log(recordOf(index), request),
    'metrics (request, verification)': (index) => {
      const made = recordOf(index);
      metrics.onRequest(made);
      metrics.observer.verified(RESULT, made.durationMs);
    },
    'key check, MAILVET_API_KEYS key': () => void env(envRequest),
    'key check, stored key': () => void stored(storedRequest),
  };
}

/** Calls between two turns of the event loop: about what one turn of a busy server answers. */
const CALLS_PER_TURN = 100;

/**
 * CPU microseconds per call of `part` over `calls` calls, yielding to the event loop every {@link CALLS_PER_TURN}
 * calls as a server does between requests (so the log writer writes as it would in a server, and its memory is
 * reused as it would be).
 */
async function measure(part: Part, calls: number): Promise<number> {
  const before = process.cpuUsage();
  for (let index = 0; index < calls; index++) {
    part(index);
    if (index % CALLS_PER_TURN === CALLS_PER_TURN - 1) await new Promise((resolve) => setImmediate(resolve));
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

async function main(): Promise<void> {
  const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const calls = Number(positional[0] ?? 100_000);
  const rounds = Number(positional[1] ?? 7);
  const against = process.argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length);
  const made: string[] = [];
  try {
    const builds: { name: string; parts: Record<string, Part> }[] = [];
    const old = against === undefined ? undefined : buildRef(against, made, MODULES);
    builds.push({ name: 'this checkout', parts: await partsOf(buildCheckout(made, MODULES)) });
    if (old !== undefined) builds.push({ name: against as string, parts: await partsOf(old) });
    const names = Object.keys(builds[0]?.parts ?? {});
    const runs = builds.map(() => new Map<string, number[]>(names.map((name) => [name, []])));
    for (const build of builds) for (const name of names) await measure(build.parts[name] as Part, calls); // warm-up
    for (let round = 0; round < rounds; round++) {
      for (const name of names) {
        for (let turn = 0; turn < builds.length; turn++) {
          const index = (round + turn) % builds.length;
          const part = builds[index]?.parts[name] as Part;
          runs[index]?.get(name)?.push(await measure(part, calls));
        }
      }
    }
    console.log(
      `CPU µs per call, median of ${rounds} rounds of ${calls.toLocaleString('en-US')} calls, node ${process.version}` +
        " (the loop's own cost taken off the other rows):",
    );
    console.log(`${''.padEnd(34)}${builds.map((build) => build.name.padStart(16)).join('')}`);
    for (const name of names) {
      const cells = runs.map((byName) => {
        const value = median(byName.get(name) ?? []);
        const loop = name === names[0] ? 0 : median(byName.get(names[0] as string) ?? []);
        return (value - loop).toFixed(3).padStart(16);
      });
      console.log(`${name.padEnd(34)}${cells.join('')}`);
    }
  } finally {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `reproduce: npx tsx bench/observe-cost.ts ${calls} ${rounds}${against === undefined ? '' : ` --against=${against}`}`,
  );
  process.exit(0); // the logger's writer keeps an interval
}

await main();
