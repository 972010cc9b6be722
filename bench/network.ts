/**
 * Network benchmark (issue 3): 10,000 addresses over 100 domains, verified against SMTP servers on
 * 127.0.0.x that answer every command after a fixed delay, with DNS from a dns2 server through
 * cachedResolver(nodeResolver()). Runs the same workload twice, side by side:
 *   pooled   - the defaults: per-MX session pool, envelope reuse, 20 RCPTs per session, 2 sessions per MX,
 *              RFC 2920 pipelining (up to 10 RCPT TO per round trip; the scripted hosts advertise PIPELINING);
 *   baseline - one session per address (maxRcptPerSession: 1, idleSessionMs: 0), same politeness limits: one
 *              RCPT per session, so nothing to pipeline but MAIL FROM with its RCPT TO.
 *
 * Run: npx tsx bench/network.ts [--addresses 10000] [--domains 100] [--mx-hosts 5] [--delay-ms 10] [--in-flight 200]
 *                                [--server scripted|smtp-server]
 * The default `scripted` servers answer `delay-ms` after each round of commands (one command, or a pipelined
 * group that arrived together, answered in one send), the model of the lower bounds; `smtp-server` is the real
 * package, which also holds every greeting back 100 ms.
 * Targets: pooled within 1.5x of the session bound (see the printed model), and >= 5x faster than the baseline.
 */
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../src/options.js';
import { DEFAULT_PIPELINE_DEPTH } from '../src/smtp/pool.js';
import {
  type BoundModel,
  lowerBoundMs,
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
  },
});
const integer = (name: keyof typeof values) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};

const fixture = await startNetworkFixture({
  addresses: integer('addresses'),
  domains: integer('domains'),
  mxHosts: integer('mx-hosts'),
  delayMs: integer('delay-ms'),
  server: values.server === 'smtp-server' ? 'smtp-server' : 'scripted',
});
const inFlight = integer('in-flight');
const { shape } = fixture;
const perMx = DEFAULTS.perMxConcurrency;

console.log(
  `network: ${shape.addresses} addresses, ${shape.domains} domains, ${shape.mxHosts} ${shape.server} mail hosts ` +
    `on 127.0.0.x, ${shape.delayMs} ms before every reply, perMxConcurrency ${perMx}, ` +
    `${inFlight} verifications in flight`,
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

const pooled = await runWorkload(fixture, fixture.verifierOptions(), inFlight);
check('pooled', pooled);
const baseline = await runWorkload(
  fixture,
  { ...fixture.verifierOptions(), maxRcptPerSession: 1, idleSessionMs: 0 },
  inFlight,
);
check('baseline', baseline);
await fixture.close();

const model: BoundModel = {
  perMxConcurrency: perMx,
  rcptsPerRoundTrip: DEFAULT_PIPELINE_DEPTH,
  maxRcptPerSession: DEFAULTS.maxRcptPerSession,
  delayMs: shape.delayMs,
};
const bound = lowerBoundMs(pooled.rcptsPerHost, model);
const perHost = fixture.perHost();
const sessionBound = sessionBoundMs(perHost.addresses, perHost.probes, model);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const rows = [
  ['', 'pooled (defaults)', 'one session per address'],
  ['wall time', seconds(pooled.wallMs), seconds(baseline.wallMs)],
  [
    'addresses/s',
    (shape.addresses / (pooled.wallMs / 1000)).toFixed(0),
    (shape.addresses / (baseline.wallMs / 1000)).toFixed(0),
  ],
  ['SMTP connections opened', String(pooled.connections), String(baseline.connections)],
  [
    'RCPT TO sent',
    String(pooled.rcptsPerHost.reduce((a, b) => a + b, 0)),
    String(baseline.rcptsPerHost.reduce((a, b) => a + b, 0)),
  ],
  ['DNS queries', String(pooled.dnsQueries), String(baseline.dnsQueries)],
  [
    'ratio to session bound',
    (pooled.wallMs / sessionBound).toFixed(2),
    (baseline.wallMs / sessionBound).toFixed(2),
  ],
  [
    'ratio to RCPT round-trip bound',
    (pooled.wallMs / bound).toFixed(2),
    (baseline.wallMs / bound).toFixed(2),
  ],
  ['statuses', JSON.stringify(pooled.statuses), JSON.stringify(baseline.statuses)],
];
const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));

const ratio = pooled.wallMs / sessionBound;
const speedUp = baseline.wallMs / pooled.wallMs;
const busiest = Math.max(...pooled.rcptsPerHost);
console.log(
  `\nmodel: a host serves at most ${perMx} sessions at once, every round trip waits ${shape.delayMs} ms, and a ` +
    `pooled round trip carries up to ${model.rcptsPerRoundTrip} RCPT TO (RFC 2920 pipelining; the scripted hosts ` +
    'answer a group that arrived together with one delay, as a real server processes a pipelined group in one ' +
    'read; the one-session-per-address baseline has one RCPT per session, so nothing to pipeline but MAIL FROM).',
);
console.log(
  `RCPT round-trip bound ${seconds(bound)}: busiest host ${busiest} RCPTs (addresses plus one catch-all probe ` +
    `per domain), ceil(${busiest} / (${perMx} x ${model.rcptsPerRoundTrip})) x ${shape.delayMs} ms; it ignores ` +
    'session setup, which pipelining does not shorten.',
);
console.log(
  `session bound ${seconds(sessionBound)}: adds what the RCPT cap (${model.maxRcptPerSession} per session) forces ` +
    'on the busiest host: greeting + EHLO for each pooled session, greeting + EHLO + one round trip for each ' +
    `catch-all probe (a session of its own), ${perMx} sessions waiting at once; QUIT not counted. The targets ` +
    'are measured against this one.',
);
console.log(
  `pooled: ${ratio.toFixed(2)}x the session bound (target <= 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'}), ` +
    `${(pooled.wallMs / bound).toFixed(2)}x the RCPT round-trip bound; speed-up over one session per address: ` +
    `${speedUp.toFixed(2)}x (target >= 5x: ${speedUp >= 5 ? 'met' : 'NOT met'})`,
);
console.log(
  `reproduce: npx tsx bench/network.ts --addresses ${shape.addresses} --domains ${shape.domains} ` +
    `--mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --in-flight ${inFlight} --server ${shape.server}`,
);
