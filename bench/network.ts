/**
 * Network benchmark (issue 3): 10,000 addresses over 100 domains, verified against SMTP servers on
 * 127.0.0.x that answer every command after a fixed delay, with DNS from a dns2 server through
 * cachedResolver(nodeResolver()). Runs the same workload twice, side by side:
 *   pooled   - the defaults: per-MX session pool, envelope reuse, 20 RCPTs per session, 2 sessions per MX;
 *   baseline - one session per address (maxRcptPerSession: 1, idleSessionMs: 0), same politeness limits.
 *
 * Run: npx tsx bench/network.ts [--addresses 10000] [--domains 100] [--mx-hosts 5] [--delay-ms 10] [--in-flight 200]
 *                                [--server scripted|smtp-server]
 * The default `scripted` servers answer exactly `delay-ms` after each command (the model of the lower bound);
 * `smtp-server` is the real package, which also holds every greeting back 100 ms.
 * Targets: pooled within 1.5x of the lower bound, and >= 5x faster than the baseline.
 */
import { parseArgs } from 'node:util';
import { DEFAULTS } from '../src/options.js';
import { lowerBoundMs, runWorkload, startNetworkFixture, type WorkloadReport } from './network-fixture.js';

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

const bound = lowerBoundMs(pooled.rcptsPerHost, perMx, shape.delayMs);
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
  ['ratio to lower bound', (pooled.wallMs / bound).toFixed(2), (baseline.wallMs / bound).toFixed(2)],
  ['statuses', JSON.stringify(pooled.statuses), JSON.stringify(baseline.statuses)],
];
const widths = [0, 1, 2].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));

const ratio = pooled.wallMs / bound;
const speedUp = baseline.wallMs / pooled.wallMs;
console.log(
  `\nlower bound ${seconds(bound)}: each RCPT TO waits ${shape.delayMs} ms for its reply, a session has one ` +
    `command in flight, and a host serves at most ${perMx} sessions at once; the busiest host had ` +
    `${Math.max(...pooled.rcptsPerHost)} RCPTs (addresses plus one catch-all probe per domain), so ` +
    `ceil(${Math.max(...pooled.rcptsPerHost)} / ${perMx}) x ${shape.delayMs} ms. Greeting, EHLO, MAIL FROM ` +
    'and QUIT only add to it.',
);
console.log(
  'one session per address needs greeting + EHLO + MAIL FROM + RCPT TO + QUIT = 5 waits per address, so its ' +
    'best possible time is 5x the bound: a pooled run exactly at the bound would be only 5x faster than an ideal ' +
    'one-session-per-address run at the same politeness.',
);
console.log(
  `pooled: ${ratio.toFixed(2)}x the lower bound (target <= 1.5x: ${ratio <= 1.5 ? 'met' : 'NOT met'}); ` +
    `speed-up over one session per address: ${speedUp.toFixed(2)}x (target >= 5x: ${speedUp >= 5 ? 'met' : 'NOT met'})`,
);
console.log(
  `reproduce: npx tsx bench/network.ts --addresses ${shape.addresses} --domains ${shape.domains} ` +
    `--mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --in-flight ${inFlight} --server ${shape.server}`,
);
