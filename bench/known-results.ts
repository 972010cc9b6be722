/**
 * Known-results benchmark (issue 30, "do not ask a mail server twice"): the 10,000 addresses of bench/network.ts
 * (100 domains, 5 loopback mail hosts answering every command after `--delay-ms`), verified three ways in each round,
 * interleaved over `--rounds` rounds (the order rotates):
 *   before - no known results: every address asks its mail server (today's re-verification);
 *   empty  - known results on, nothing kept yet: the cost of looking up and keeping (must not be slower);
 *   after  - known results on, half of the list (every other address) verified just before, untimed: a list
 *            re-verified within the cache time, half of it seen.
 * Known results are kept in memory (`memoryKnownResults`) or, with `--store pglite`, in a PGlite job store's table,
 * the store opened as `mailvet serve --data DIR` opens it: `pgliteStore({ dataDir })` without `db`, so PGlite runs on
 * a worker thread of its own, not on the verifier's thread, and writes its files (a new directory per run, copied
 * from an initdb template). Each side run has a fresh, empty store and a fresh verifier; the store is opened before
 * and closed after the timed part, which is the verifications alone (`runWorkload`); the after side's first half is
 * verified, untimed, into the same store just before. Targets: `after` opens at most 55% of the SMTP sessions of
 * `before` and takes at most 0.6x its time (medians over rounds); every side ends with the same statuses.
 * Run: npm run bench -- known-results   or   npx tsx bench/known-results.ts [--rounds 5] [--store memory|pglite]
 *      [--addresses 10000] [--domains 100] [--mx-hosts 5] [--delay-ms 10] [--in-flight 200] [--warm-up 2]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { memoryKnownResults } from '../src/known/memory.js';
import type { KnownResults } from '../src/known/types.js';
import type { VerifyOptions } from '../src/options.js';
import { pgliteDataDir } from '../test/support/pglite-template.js';
import { runWorkload, startNetworkFixture, type WorkloadReport } from './network-fixture.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '10000' },
    domains: { type: 'string', default: '100' },
    'mx-hosts': { type: 'string', default: '5' },
    'delay-ms': { type: 'string', default: '10' },
    'in-flight': { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    'warm-up': { type: 'string', default: '2' },
    store: { type: 'string', default: 'memory' },
  },
});
const integer = (name: keyof typeof values, min = 1) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be an integer >= ${min}`);
  return value;
};
const storeKind = values.store;
if (storeKind !== 'memory' && storeKind !== 'pglite') throw new Error('--store must be memory or pglite');

const fixture = await startNetworkFixture({
  addresses: integer('addresses'),
  domains: integer('domains'),
  mxHosts: integer('mx-hosts'),
  delayMs: integer('delay-ms'),
});
const inFlight = integer('in-flight');
const rounds = integer('rounds');
const warmUp = integer('warm-up', 0);
const half = fixture.emails.filter((_, index) => index % 2 === 0);

/**
 * A fresh, empty known-results store per side run, opened before and closed after the timed part (`runWorkload`
 * times only the verifications): memory, or with `--store pglite` a PGlite job store opened as `mailvet serve --data
 * DIR` opens it (`pgliteStore({ dataDir })`, no `db`: PGlite on a worker thread of its own, its files in a new
 * directory copied from an initdb template, removed after the run).
 */
const pglite = storeKind === 'pglite' ? await import('../src/postgres/index.js') : undefined;
async function emptyKnownResults(): Promise<{ known: KnownResults; close(): Promise<void> }> {
  if (pglite === undefined) return { known: memoryKnownResults(), close: async () => {} };
  const dataDir = await pgliteDataDir(await mkdtemp(join(tmpdir(), 'mailvet-known-bench-')));
  const store = await pglite.pgliteStore({ dataDir });
  const known = store.knownResults({ sweepIntervalMs: 0 });
  return {
    known,
    async close() {
      try {
        await known.close();
        await store.close?.();
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  };
}

console.log(
  `known-results: ${fixture.shape.addresses} addresses, ${fixture.shape.domains} domains, ${fixture.shape.mxHosts} ` +
    `scripted mail hosts on 127.0.0.x, ${fixture.shape.delayMs} ms before every reply, ${inFlight} in flight, ` +
    `known results in ${storeKind === 'pglite' ? 'a PGlite job store (on its own thread, in a data directory)' : 'memory'}; "after" has ${half.length} ` +
    `of the addresses (every other one) verified just before; ${rounds} rounds, sides interleaved`,
);

type Side = 'before' | 'empty' | 'after';
const SIDES: readonly Side[] = ['before', 'empty', 'after'];

async function runSide(side: Side): Promise<WorkloadReport> {
  const options: VerifyOptions = fixture.verifierOptions();
  if (side === 'before') return runWorkload(fixture, options, inFlight);
  const { known, close } = await emptyKnownResults();
  try {
    if (side === 'after')
      await runWorkload(fixture, { ...fixture.verifierOptions(), knownResults: known }, inFlight, half);
    return await runWorkload(fixture, { ...options, knownResults: known }, inFlight);
  } finally {
    await close();
  }
}

function check(side: Side, report: WorkloadReport): void {
  const expected = fixture.expectedStatuses();
  for (const [status, count] of Object.entries(expected)) {
    if (report.statuses[status as keyof typeof expected] !== count) {
      console.error(`${side}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(report.statuses)}`);
      process.exitCode = 1;
    }
  }
}

for (let run = 0; run < warmUp; run++) for (const side of SIDES) check(side, await runSide(side));
console.log(`warm-up: ${warmUp} untimed run(s) of each side`);
const reports: Record<Side, WorkloadReport[]> = { before: [], empty: [], after: [] };
for (let round = 0; round < rounds; round++) {
  const order = SIDES.map((_, index) => SIDES[(index + round) % SIDES.length]!);
  for (const side of order) {
    const report = await runSide(side);
    check(side, report);
    reports[side].push(report);
  }
  const line = SIDES.map((side) => {
    const report = reports[side][round]!;
    return `${side} ${(report.wallMs / 1000).toFixed(2)} s / ${report.connections} sessions`;
  });
  console.log(`round ${round + 1}: ${line.join(', ')} (${order[0]} first)`);
}
await fixture.close();

function median(list: readonly number[]): number {
  const sorted = list.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
function spread(list: readonly number[], show: (value: number) => string): string {
  return `${show(median(list))} (${show(Math.min(...list))}-${show(Math.max(...list))})`;
}
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const fixed = (digits: number) => (value: number) => value.toFixed(digits);
const perRound = (side: Side, of: (report: WorkloadReport) => number) => reports[side].map(of);
const rcpts = (report: WorkloadReport) => report.rcptsPerHost.reduce((sum, count) => sum + count, 0);

const rows = [
  [
    'median (min-max) of rounds',
    'before (no known results)',
    'empty (on, nothing kept)',
    'after (half kept)',
  ],
  [
    'wall time',
    ...SIDES.map((side) =>
      spread(
        perRound(side, (r) => r.wallMs),
        seconds,
      ),
    ),
  ],
  [
    'SMTP sessions opened',
    ...SIDES.map((side) =>
      spread(
        perRound(side, (r) => r.connections),
        fixed(0),
      ),
    ),
  ],
  ['RCPT TO sent', ...SIDES.map((side) => spread(perRound(side, rcpts), fixed(0)))],
  [
    'client CPU per address (us)',
    ...SIDES.map((side) =>
      spread(
        perRound(side, (r) => (r.cpuMs * 1000) / fixture.shape.addresses),
        fixed(0),
      ),
    ),
  ],
  ['statuses (round 1)', ...SIDES.map((side) => JSON.stringify(reports[side][0]!.statuses))],
];
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));

const ratio = (side: Side, of: (report: WorkloadReport) => number) =>
  reports[side].map((report, round) => of(report) / of(reports.before[round]!));
const sessions = ratio('after', (r) => r.connections);
const time = ratio('after', (r) => r.wallMs);
const overhead = ratio('empty', (r) => r.wallMs);
console.log(
  `\nafter / before, per round: sessions ${spread(sessions, fixed(2))} (target <= 0.55 in the median: ` +
    `${median(sessions) <= 0.55 ? 'met' : 'NOT met'}), time ${spread(time, fixed(2))} (target <= 0.6: ` +
    `${median(time) <= 0.6 ? 'met' : 'NOT met'}).`,
);
console.log(
  `empty / before (the cost of looking up and keeping, nothing known): time ${spread(overhead, fixed(2))}. ` +
    'Each side opens its own verifier, so every run probes each domain for catch-all once (100 sessions of the ' +
    'after side are such probes). The machine is shared: read the ratios, not the absolute times.',
);
console.log(
  `reproduce: npx tsx bench/known-results.ts --store ${storeKind} --addresses ${fixture.shape.addresses} ` +
    `--domains ${fixture.shape.domains} --mx-hosts ${fixture.shape.mxHosts} --delay-ms ${fixture.shape.delayMs} ` +
    `--in-flight ${inFlight} --rounds ${rounds} --warm-up ${warmUp}`,
);
