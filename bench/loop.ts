/**
 * Event-loop delay while a bulk job of offline verifications (no DNS, no SMTP: every verification settles in
 * microtasks) runs in the process, with the manager's default time slice (`yieldAfterMs: 5`) and with slicing
 * effectively off (`yieldAfterMs: 1000`), in interleaved rounds: the delay of a 1 ms timer that runs beside the
 * job (what an HTTP request arriving then would wait; p99 and max, the last tick after the job included), and
 * the throughput of each side.
 *
 *   npx tsx bench/loop.ts [addresses, default 200000] [rounds, default 5]
 */
import { BulkJobManager } from '../src/bulk/manager.js';
import { createVerifier } from '../src/verifier.js';
import { addressMix } from './mix.js';

const count = Number(process.argv[2] ?? 200_000);
const rounds = Math.max(5, Number(process.argv[3] ?? 5));
const emails = addressMix(count);
const verifier = createVerifier({ dns: false, smtp: false });

interface Run {
  readonly rate: number;
  readonly p99: number;
  readonly max: number;
}

async function run(yieldAfterMs: number): Promise<Run> {
  const jobs = new BulkJobManager({ verifier, yieldAfterMs, concurrency: 64 });
  const done = new Promise<void>((resolve) => jobs.on('complete', () => resolve()));
  const delays: number[] = [];
  let running = false;
  let last = performance.now();
  const tick = () => {
    const now = performance.now();
    delays.push(Math.max(0, now - last - 1));
    last = now;
    if (running) setTimeout(tick, 1);
  };
  // Uploaded in batches of 10,000, as the HTTP API hands them over, then started: the whole job is ready at once.
  let job = await jobs.create({ emails: emails.slice(0, 10_000), autoStart: false });
  for (let from = 10_000; from < emails.length; from += 10_000) {
    await new Promise((resolve) => setImmediate(resolve)); // each add is its own request: a turn between them
    job = await jobs.add(job.id, emails.slice(from, from + 10_000));
  }
  running = true;
  last = performance.now();
  setTimeout(tick, 1);
  const verifying = performance.now();
  await jobs.start(job.id);
  await done;
  const verifySeconds = (performance.now() - verifying) / 1000;
  running = false;
  await new Promise((resolve) => setTimeout(resolve, 5)); // the tick that waited through the end
  await jobs.close();
  const sorted = delays.sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;
  return { rate: count / verifySeconds, p99, max: sorted.at(-1) ?? 0 };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

await run(5); // warm-up
const sliced: Run[] = [];
const unsliced: Run[] = [];
for (let round = 0; round < rounds; round++) {
  if (round % 2 === 0) {
    sliced.push(await run(5));
    unsliced.push(await run(1000));
  } else {
    unsliced.push(await run(1000));
    sliced.push(await run(5));
  }
}
const line = (name: string, runs: Run[]) =>
  console.log(
    `${name.padEnd(28)} ${Math.round(median(runs.map((r) => r.rate)))
      .toLocaleString('en-US')
      .padStart(9)} addr/s   ` +
      `loop delay p99 ${median(runs.map((r) => r.p99))
        .toFixed(1)
        .padStart(7)} ms  max ${median(runs.map((r) => r.max))
        .toFixed(1)
        .padStart(7)} ms` +
      `   [max over rounds ${Math.max(...runs.map((r) => r.max)).toFixed(1)} ms]`,
  );
console.log(
  `bulk job of ${count.toLocaleString('en-US')} offline verifications, medians of ${rounds} interleaved rounds (node ${process.version})`,
);
line('yieldAfterMs: 5 (default)', sliced);
line('yieldAfterMs: 1000 (no slice)', unsliced);
const ratios = sliced.map((run, i) => run.rate / (unsliced[i]?.rate ?? run.rate));
console.log(
  `throughput sliced / unsliced: median ${median(ratios).toFixed(2)} [${Math.min(...ratios).toFixed(2)} - ${Math.max(...ratios).toFixed(2)}] (goal: p99 <= 20 ms, max <= 50 ms, >= 0.90)`,
);
console.log(`reproduce: npx tsx bench/loop.ts ${count} ${rounds}`);
await verifier.dispose();
