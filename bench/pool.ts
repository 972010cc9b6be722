/**
 * Client CPU per address when many verifications wait for one MX host: an in-memory scripted mail server
 * (no sockets, no timers: every reply is at once), one session at a time to it (`perMxConcurrency: 1`), and
 * `n` verifications started together. The pool's work per waiting request should not grow with the queue.
 * Sizes run interleaved over rounds; medians and spread of CPU µs per address.
 *
 *   npx tsx bench/pool.ts [sizes, default 10000,100000] [rounds, default 5]
 */
import { scriptedTransport } from '../src/testing/scripted-channel.js';
import { staticResolver } from '../src/testing/static-resolver.js';
import { createVerifier } from '../src/verifier.js';

const sizes = (process.argv[2] ?? '10000,100000').split(',').map(Number);
const rounds = Math.max(5, Number(process.argv[3] ?? 5));

async function cpuPerAddress(count: number): Promise<number> {
  const verifier = createVerifier({
    resolver: staticResolver({ 'one.test': { a: ['192.0.2.10'] } }),
    transport: scriptedTransport(() => ({})),
    allowAddresses: ['192.0.2.0/24'],
    allowTlds: ['test'],
    heloHost: 'bench.mailvet-test.net',
    catchAll: false,
    perMxConcurrency: 1,
    concurrency: Math.min(count, 10_000), // the verifier's most; beyond it requests queue before the pool
    timeoutMs: 600_000,
  });
  const start = process.cpuUsage();
  const results = await Promise.all(
    Array.from({ length: count }, (_, i) => verifier.verify(`user${i}@one.test`)),
  );
  const used = process.cpuUsage(start);
  await verifier.dispose();
  if (results.some((result) => result.status !== 'valid'))
    throw new Error('a verification did not end valid');
  return (used.user + used.system) / count;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
await cpuPerAddress(2000); // warm-up
const bySize = new Map<number, number[]>(sizes.map((size) => [size, []]));
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? sizes : [...sizes].reverse();
  for (const size of order) bySize.get(size)?.push(await cpuPerAddress(size));
}
console.log(
  `one MX, perMxConcurrency 1, all verifications started together; medians of ${rounds} interleaved rounds`,
);
for (const [size, values] of bySize) {
  console.log(
    `${size.toLocaleString('en-US').padStart(8)} waiting: ${median(values).toFixed(1).padStart(7)} µs CPU per address  [${Math.min(...values).toFixed(1)} - ${Math.max(...values).toFixed(1)}]`,
  );
}
const [small, large] = [sizes[0], sizes.at(-1)];
if (small !== undefined && large !== undefined && small !== large) {
  const ratio = median(bySize.get(large) ?? []) / median(bySize.get(small) ?? []);
  console.log(
    `ratio ${large.toLocaleString('en-US')} / ${small.toLocaleString('en-US')}: ${ratio.toFixed(2)}x (goal <= 1.2x)`,
  );
}
console.log(`reproduce: npx tsx bench/pool.ts ${sizes.join(',')} ${rounds}`);
