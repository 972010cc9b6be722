/**
 * Bulk over the network (issue 4): the workload of bench/network.ts (addresses over domains, SMTP servers on
 * 127.0.0.x that answer every command after a fixed delay, DNS from a dns2 server), verified twice side by
 * side with the same verifier options and the same number of verifications in flight:
 *   direct  - calling the verifier directly (bench/network-fixture.ts `runWorkload`);
 *   manager - one BulkJobManager job holding every address, read back in input order at the end.
 * Rounds alternate the order (direct first, then manager first) so neither always runs on a warmer process.
 *
 * Run: npx tsx bench/bulk-network.ts [--addresses 10000] [--domains 100] [--mx-hosts 5] [--delay-ms 10]
 *                                    [--in-flight 200] [--rounds 2]
 * Target: the manager within 10% of calling the verifier directly (wall time ratio <= 1.10).
 */
import { parseArgs } from 'node:util';
import { BulkJobManager } from '../src/bulk/manager.js';
import type { Status } from '../src/result.js';
import { createVerifier } from '../src/verifier.js';
import { type NetworkFixture, runWorkload, startNetworkFixture } from './network-fixture.js';

const { values } = parseArgs({
  options: {
    addresses: { type: 'string', default: '10000' },
    domains: { type: 'string', default: '100' },
    'mx-hosts': { type: 'string', default: '5' },
    'delay-ms': { type: 'string', default: '10' },
    'in-flight': { type: 'string', default: '200' },
    rounds: { type: 'string', default: '2' },
  },
});
const integer = (name: keyof typeof values) => {
  const value = Number(values[name]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
  return value;
};

interface Run {
  readonly wallMs: number;
  readonly statuses: Partial<Record<Status, number>>;
}

async function direct(fixture: NetworkFixture, inFlight: number): Promise<Run> {
  const report = await runWorkload(fixture, fixture.verifierOptions(), inFlight);
  return { wallMs: report.wallMs, statuses: report.statuses };
}

async function throughManager(fixture: NetworkFixture, inFlight: number): Promise<Run> {
  const verifier = createVerifier(fixture.verifierOptions());
  const jobs = new BulkJobManager({ verifier, concurrency: inFlight });
  const started = performance.now();
  const job = await jobs.create({ name: 'bulk-network', emails: [...fixture.emails] });
  const statuses: Partial<Record<Status, number>> = {};
  let read = 0;
  for await (const result of jobs.stream(job.id)) {
    if (result.email !== fixture.emails[read]!) throw new Error(`result ${read} is out of order`);
    read++;
    statuses[result.status] = (statuses[result.status] ?? 0) + 1;
  }
  const wallMs = performance.now() - started;
  if (read !== fixture.emails.length) throw new Error(`read ${read} of ${fixture.emails.length} results`);
  await jobs.close();
  await verifier.dispose();
  return { wallMs, statuses };
}

const fixture = await startNetworkFixture({
  addresses: integer('addresses'),
  domains: integer('domains'),
  mxHosts: integer('mx-hosts'),
  delayMs: integer('delay-ms'),
});
const inFlight = integer('in-flight');
const rounds = integer('rounds');
const { shape } = fixture;
console.log(
  `bulk-network: ${shape.addresses} addresses, ${shape.domains} domains, ${shape.mxHosts} mail hosts on 127.0.0.x, ` +
    `${shape.delayMs} ms before every reply, ${inFlight} verifications in flight, ${rounds} round(s)`,
);

const expected = JSON.stringify(fixture.expectedStatuses());
const ordered = (statuses: Partial<Record<Status, number>>) =>
  JSON.stringify(
    Object.fromEntries(Object.keys(fixture.expectedStatuses()).map((key) => [key, statuses[key as Status]])),
  );
const directMs: number[] = [];
const managerMs: number[] = [];
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? (['direct', 'manager'] as const) : (['manager', 'direct'] as const);
  for (const way of order) {
    const run = way === 'direct' ? await direct(fixture, inFlight) : await throughManager(fixture, inFlight);
    if (ordered(run.statuses) !== expected) {
      console.error(`${way}: expected ${expected}, got ${JSON.stringify(run.statuses)}`);
      process.exitCode = 1;
    }
    (way === 'direct' ? directMs : managerMs).push(run.wallMs);
    console.log(`  round ${round + 1} ${way.padEnd(7)} ${(run.wallMs / 1000).toFixed(2)} s`);
  }
}
await fixture.close();

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const d = median(directMs);
const m = median(managerMs);
const ratio = m / d;
console.log(
  `direct:  ${(d / 1000).toFixed(2)} s (${Math.round(shape.addresses / (d / 1000))} addresses/s), median`,
);
console.log(
  `manager: ${(m / 1000).toFixed(2)} s (${Math.round(shape.addresses / (m / 1000))} addresses/s), median`,
);
console.log(`manager / direct: ${ratio.toFixed(3)} (target <= 1.10: ${ratio <= 1.1 ? 'met' : 'NOT met'})`);
console.log(
  `reproduce: npx tsx bench/bulk-network.ts --addresses ${shape.addresses} --domains ${shape.domains} ` +
    `--mx-hosts ${shape.mxHosts} --delay-ms ${shape.delayMs} --in-flight ${inFlight} --rounds ${rounds}`,
);
