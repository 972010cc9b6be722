/**
 * Network benchmark (issue 3): 10,000 addresses over 100 domains, verified against SMTP servers on
 * 127.0.0.x that answer every command after a fixed delay, with DNS from a dns2 server through
 * cachedResolver(nodeResolver()). Runs the same workload on two sides, interleaved over `--rounds` rounds (the
 * side that goes first alternates), and reports each side's median and spread (min-max):
 *   pooled   - the defaults: per-MX session pool, envelope reuse, 20 RCPTs per session, 2 sessions per MX,
 *              RFC 2920 pipelining (up to 10 RCPT TO per round trip; the scripted hosts advertise PIPELINING);
 *   baseline - one session per address (maxRcptPerSession: 1, idleSessionMs: 0), same politeness limits: one
 *              RCPT per session, so nothing to pipeline but MAIL FROM with its RCPT TO.
 *
 * Untimed runs come first (`--warm-up` of the pooled side, default 3, and one of the other; JIT compilation, heap
 * growth), then the measured rounds.
 * Run: npx tsx bench/network.ts [--addresses 10000] [--domains 100] [--mx-hosts 5] [--delay-ms 10] [--in-flight 200]
 *                                [--server scripted|smtp-server] [--order interleaved|shuffled] [--rounds 5]
 *                                [--warm-up 3]
 * The default `scripted` servers answer `delay-ms` after each round of commands (one command, or a pipelined
 * group that arrived together, answered in one send), the model of the lower bounds; `smtp-server` is the real
 * package, which also holds every greeting back 100 ms.
 * `--order interleaved` (default) lists user 0 of every domain, then user 1 of every domain, and so on: each host's
 * refused addresses (users 7, 8 and 9 of every ten) come in runs of 60, so the reject cap ends sessions early and
 * the in-order estimate is above the session bound; `shuffled` is the same list in a fixed pseudo-random order.
 * Targets (issue 10): pooled within 1.3x of the session bound (see the printed model) and >= 10x faster than the
 * baseline in every round; client CPU (this process: the verifier and the dns2 server; the SMTP hosts run in a
 * child process) <= 100 us per pooled address. The machine is shared: compare ratios, not absolute times.
 */
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../src/options.js';
import { DEFAULT_PIPELINE_DEPTH } from '../src/smtp/pool.js';
import {
  type BoundModel,
  groupSize,
  inOrderEstimateMs,
  lowerBoundMs,
  pooledSessions,
  runWorkload,
  sessionBoundMs,
  startNetworkFixture,
  type WorkloadReport,
} from './network-fixture.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '10000' },
    domains: { type: 'string', default: '100' },
    'mx-hosts': { type: 'string', default: '5' },
    'delay-ms': { type: 'string', default: '10' },
    'in-flight': { type: 'string', default: '200' },
    server: { type: 'string', default: 'scripted' },
    order: { type: 'string', default: 'interleaved' },
    rounds: { type: 'string', default: '5' },
    'warm-up': { type: 'string', default: '3' },
  },
});
const integer = (name: keyof typeof values) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};

/** The value of `--name`, which must be one of `allowed`. */
function oneOf<const T extends string>(name: keyof typeof values, allowed: readonly T[]): T {
  const value = values[name];
  if (!allowed.includes(value as T)) throw new Error(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

const fixture = await startNetworkFixture({
  addresses: integer('addresses'),
  domains: integer('domains'),
  mxHosts: integer('mx-hosts'),
  delayMs: integer('delay-ms'),
  server: oneOf('server', ['scripted', 'smtp-server']),
  order: oneOf('order', ['interleaved', 'shuffled']),
});
const inFlight = integer('in-flight');
const rounds = integer('rounds');
const warmUp = Number(values['warm-up']);
if (!Number.isInteger(warmUp) || warmUp < 0) throw new Error('--warm-up must be an integer >= 0');
const { shape } = fixture;
const perMx = DEFAULTS.perMxConcurrency;

console.log(
  `network: ${shape.addresses} addresses, ${shape.domains} domains, ${shape.mxHosts} ${shape.server} mail hosts ` +
    `on 127.0.0.x, ${shape.order} list, ${shape.delayMs} ms before every reply, perMxConcurrency ${perMx}, ` +
    `${inFlight} verifications in flight, ${rounds} rounds, sides interleaved`,
);

function check(name: string, report: WorkloadReport): void {
  const expected = fixture.expectedStatuses();
  for (const [status, count] of Object.entries(expected)) {
    if (report.statuses[status as keyof typeof expected] !== count) {
      console.error(`${name}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(report.statuses)}`);
      process.exitCode = 1;
    }
  }
}

const sides = {
  pooled: fixture.verifierOptions,
  baseline: () => ({ ...fixture.verifierOptions(), maxRcptPerSession: 1, idleSessionMs: 0 }),
};
const reports: Record<keyof typeof sides, WorkloadReport[]> = { pooled: [], baseline: [] };
// Untimed runs first, so that the measured rounds compare the sides as a long-running verifier runs them, not V8
// compiling the engine and growing its heap: the pooled side's CPU per address kept falling over its first three
// runs of 10,000 addresses (about 2.2x, 1.4x, then 1.1x its steady level), so it gets `--warm-up` runs; the
// one-session-per-address side, whose 10,100 sessions per run take its own paths ten thousand times, gets one.
for (let run = 0; run < warmUp; run++) {
  check('pooled (warm-up)', await runWorkload(fixture, sides.pooled(), inFlight));
}
if (warmUp > 0) check('baseline (warm-up)', await runWorkload(fixture, sides.baseline(), inFlight));
console.log(`warm-up: ${warmUp} untimed run(s) of the pooled side, ${warmUp > 0 ? 1 : 0} of the other`);
for (let round = 0; round < rounds; round++) {
  const order: (keyof typeof sides)[] = round % 2 === 0 ? ['pooled', 'baseline'] : ['baseline', 'pooled'];
  for (const side of order) {
    const report = await runWorkload(fixture, sides[side](), inFlight);
    check(side, report);
    reports[side].push(report);
  }
  const [pooledRound, baselineRound] = [reports.pooled[round]!, reports.baseline[round]!];
  console.log(
    `round ${round + 1}: pooled ${(pooledRound.wallMs / 1000).toFixed(2)} s, one session per address ` +
      `${(baselineRound.wallMs / 1000).toFixed(2)} s (${order[0]} first)`,
  );
}
await fixture.close();

function median(values: readonly number[]): number {
  const sorted = values.toSorted((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
/** `median (min-max)` of `values`, each shown by `show`. */
function spread(values: readonly number[], show: (value: number) => string): string {
  return `${show(median(values))} (${show(Math.min(...values))}-${show(Math.max(...values))})`;
}

const model: BoundModel = {
  perMxConcurrency: perMx,
  rcptsPerRoundTrip: DEFAULT_PIPELINE_DEPTH,
  maxRcptPerSession: DEFAULTS.maxRcptPerSession,
  maxRejectsPerSession: DEFAULTS.maxRejectsPerSession,
  delayMs: shape.delayMs,
};
const pooled = reports.pooled;
const baseline = reports.baseline;
const bound = lowerBoundMs(pooled[0]!.rcptsPerHost, model);
const perHost = fixture.perHost();
const sessionBound = sessionBoundMs(perHost.addresses, perHost.probes, perHost.rejects, model);
const inOrder = inOrderEstimateMs(perHost.refusedInOrder, perHost.probes, model);
/** One session per address or probe: greeting, EHLO, MAIL FROM with its RCPT TO; 2 sessions per host at once. */
const baselineEstimate = Math.max(
  ...perHost.addresses.map(
    (addresses, host) => Math.ceil((3 * (addresses + perHost.probes[host]!)) / perMx) * shape.delayMs,
  ),
);
function longestRun(refused: readonly boolean[]): number {
  let longest = 0;
  let run = 0;
  for (const value of refused) {
    run = value ? run + 1 : 0;
    longest = Math.max(longest, run);
  }
  return longest;
}
const fewestSessions = perHost.addresses.reduce(
  (sum, addresses, host) =>
    sum + pooledSessions(addresses, perHost.rejects[host]!, model) + perHost.probes[host]!,
  0,
);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const fixed = (digits: number) => (value: number) => value.toFixed(digits);
const wall = (side: readonly WorkloadReport[]) => side.map((report) => report.wallMs);
const cpuPerAddress = (side: readonly WorkloadReport[]) =>
  side.map((report) => (report.cpuMs * 1000) / shape.addresses);
const rows = [
  ['median (min-max) of rounds', 'pooled (defaults)', 'one session per address'],
  ['wall time', spread(wall(pooled), seconds), spread(wall(baseline), seconds)],
  [
    'addresses/s',
    spread(
      wall(pooled).map((ms) => shape.addresses / (ms / 1000)),
      fixed(0),
    ),
    spread(
      wall(baseline).map((ms) => shape.addresses / (ms / 1000)),
      fixed(0),
    ),
  ],
  [
    'client CPU per address (us)',
    spread(cpuPerAddress(pooled), fixed(0)),
    spread(cpuPerAddress(baseline), fixed(0)),
  ],
  [
    '  of which in the kernel (system)',
    spread(
      pooled.map((report) => (report.systemMs * 1000) / shape.addresses),
      fixed(0),
    ),
    spread(
      baseline.map((report) => (report.systemMs * 1000) / shape.addresses),
      fixed(0),
    ),
  ],
  [
    'SMTP connections opened',
    spread(
      pooled.map((report) => report.connections),
      fixed(0),
    ),
    spread(
      baseline.map((report) => report.connections),
      fixed(0),
    ),
  ],
  [
    'RCPT TO sent',
    String(pooled[0]!.rcptsPerHost.reduce((a, b) => a + b, 0)),
    String(baseline[0]!.rcptsPerHost.reduce((a, b) => a + b, 0)),
  ],
  ['DNS queries', String(pooled[0]!.dnsQueries), String(baseline[0]!.dnsQueries)],
  [
    'ratio to session bound',
    spread(
      wall(pooled).map((ms) => ms / sessionBound),
      fixed(2),
    ),
    spread(
      wall(baseline).map((ms) => ms / sessionBound),
      fixed(2),
    ),
  ],
  [
    'ratio to the in-order estimate',
    spread(
      wall(pooled).map((ms) => ms / inOrder),
      fixed(2),
    ),
    spread(
      wall(baseline).map((ms) => ms / inOrder),
      fixed(2),
    ),
  ],
  [
    'ratio to RCPT round-trip bound',
    spread(
      wall(pooled).map((ms) => ms / bound),
      fixed(2),
    ),
    spread(
      wall(baseline).map((ms) => ms / bound),
      fixed(2),
    ),
  ],
  ['statuses (round 1)', JSON.stringify(pooled[0]!.statuses), JSON.stringify(baseline[0]!.statuses)],
];
const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));

const ratios = wall(pooled).map((ms) => ms / sessionBound);
const speedUps = pooled.map((report, round) => baseline[round]!.wallMs / report.wallMs);
const cpu = median(cpuPerAddress(pooled));
const busiest = Math.max(...pooled[0]!.rcptsPerHost);
console.log(
  `\nmodel: a host serves at most ${perMx} sessions at once, every round trip waits ${shape.delayMs} ms, and a ` +
    `pooled round trip carries up to ${groupSize(model)} RCPT TO (RFC 2920 pipelining, ${model.rcptsPerRoundTrip} deep, ` +
    `but a group never holds more recipients than the session's reject cap of ${model.maxRejectsPerSession} has ` +
    'left, so that a group refused whole cannot take the session past it; the scripted hosts ' +
    'answer a group that arrived together with one delay, as a real server processes a pipelined group in one ' +
    'read; the one-session-per-address baseline has one RCPT per session, so nothing to pipeline but MAIL FROM).',
);
console.log(
  `RCPT round-trip bound ${seconds(bound)}: busiest host ${busiest} RCPTs (addresses plus one catch-all probe ` +
    `per domain), ceil(${busiest} / (${perMx} x ${groupSize(model)})) x ${shape.delayMs} ms; it ignores ` +
    'session setup, which pipelining does not shorten.',
);
console.log(
  `session bound ${seconds(sessionBound)}: adds what the caps (${model.maxRcptPerSession} RCPTs, ` +
    `${model.maxRejectsPerSession} refused ones per session) force on the busiest host: greeting + EHLO for each ` +
    `pooled session, its RCPTs in groups of at most ${groupSize(model)} (so a session of ` +
    `${model.maxRcptPerSession} waits ${2 + Math.ceil(model.maxRcptPerSession / groupSize(model))} times), ` +
    'greeting + EHLO + one round trip for each catch-all probe (a session of its own), ' +
    `${perMx} sessions waiting at once; at least ${fewestSessions} sessions in all (the pooled side opened ` +
    `${median(pooled.map((report) => report.connections))}: the order of the list puts refused addresses ` +
    `together, so the reject cap ends some sessions early). QUIT's round trip is NOT in it: ` +
    "the pool frees a session's slot as QUIT is sent and awaits the 221 in the background. The targets are " +
    'measured against this bound.',
);
console.log(
  `in-order estimate ${seconds(inOrder)}: the session bound's model for a client that takes each host's addresses ` +
    'in list order (it cannot know which ones will be refused): on this list the longest run of refused addresses ' +
    `on one host is ${Math.max(...perHost.refusedInOrder.map(longestRun))}, and the reject cap ends a session after ` +
    `${model.maxRejectsPerSession} refused ones. Zero latency on both sides would give a speed-up of ` +
    `${(baselineEstimate / inOrder).toFixed(1)}x (one session per address: ${seconds(baselineEstimate)}). ` +
    'A measured speed-up above that comes only from the baseline losing more time per round trip than the pooled side.',
);
const capCosts = [8, 9, 10, 20].map((cap) => {
  const estimate = inOrderEstimateMs(perHost.refusedInOrder, perHost.probes, {
    ...model,
    maxRejectsPerSession: cap,
  });
  return `${cap}${cap === model.maxRejectsPerSession ? ' (this run)' : ''}: ${(baselineEstimate / estimate).toFixed(1)}x`;
});
console.log(
  `what the reject cap costs on this list: the in-order estimate's zero-latency speed-up with maxRejectsPerSession ${capCosts.join(', ')}.`,
);
console.log(
  `pooled: ${spread(ratios, fixed(2))}x the session bound (target <= 1.3x in the median: ` +
    `${median(ratios) <= 1.3 ? 'met' : 'NOT met'}); speed-up over one session per address, per round: ` +
    `${spread(speedUps, fixed(1))}x (target >= 10x in every round: ${Math.min(...speedUps) >= 10 ? 'met' : 'NOT met'}); ` +
    `client CPU ${cpu.toFixed(0)} us per pooled address (target <= 100: ${cpu <= 100 ? 'met' : 'NOT met'}). ` +
    'The machine is shared with other work: read the ratios, not the absolute times.',
);
console.log(
  `reproduce: npx tsx bench/network.ts --addresses ${shape.addresses} --domains ${shape.domains} ` +
    `--mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --in-flight ${inFlight} --server ${shape.server} --order ${shape.order} ` +
    `--rounds ${rounds} --warm-up ${warmUp}`,
);
