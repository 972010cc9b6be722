/**
 * Bulk job benchmark: one 1,000,000-address job through `BulkJobManager` in offline mode (`dns: false`),
 * side by side with the same verifier called directly (no manager), measuring retained heap per address
 * after garbage collection and throughput.
 *
 * Run: node --expose-gc --import tsx bench/bulk.ts [addresses]
 * Targets (issue 4): retained heap < 250 bytes/address, >= 100,000 addresses/s.
 */
import { BulkJobManager } from '../src/bulk/manager.js';
import { BULK_DEFAULTS } from '../src/bulk/options.js';
import { JobWork } from '../src/bulk/work.js';
import { createVerifier } from '../src/verifier.js';

const COUNT = Number(process.argv[2] ?? 1_000_000);
const CHUNK = 100_000;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) {
  console.error('run with: node --expose-gc --import tsx bench/bulk.ts');
  process.exit(1);
}

function collect(): number {
  for (let i = 0; i < 4; i++) gc!();
  return process.memoryUsage().heapUsed;
}

/** Deterministic pseudo-random numbers, so that every run verifies the same list. */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const PROVIDERS = ['gmail.com', 'yahoo.com', 'outlook.com', 'hotmail.com', 'aol.com', 'icloud.com', 'gmx.de'];

/**
 * Addresses `from` to `from + count - 1` of a realistic list: 60% at big providers, the rest over 20,000
 * company domains, 2% role addresses, 0.5% malformed, about 1% repeats of earlier addresses.
 */
function makeChunk(from: number, count: number): string[] {
  const random = lcg(from + 1);
  const chunk: string[] = [];
  for (let i = from; i < from + count; i++) {
    const r = random();
    const n = r < 0.01 && i > 0 ? Math.floor(random() * i) : i;
    const local = `${n % 50 === 0 ? 'info' : 'user'}.${n.toString(36)}`;
    if (n % 200 === 7) chunk.push(`not an address ${n}`);
    else if (n % 5 < 3) chunk.push(`${local}@${PROVIDERS[n % PROVIDERS.length]}`);
    else chunk.push(`${local}@company${n % 20_000}.com`);
  }
  return chunk;
}

/** The same list through the verifier alone, 64 at a time, chunk by chunk (no manager): the ceiling. */
async function direct(count: number): Promise<number> {
  const verifier = createVerifier({ dns: false });
  let busy = 0;
  for (let from = 0; from < count; from += CHUNK) {
    const list = makeChunk(from, Math.min(CHUNK, count - from));
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < list.length) await verifier.verify(list[next++]!);
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    busy += performance.now() - started;
  }
  await verifier.dispose();
  return count / (busy / 1000);
}

async function throughManager(count: number) {
  const verifier = createVerifier({ dns: false });
  const jobs = new BulkJobManager({ verifier });
  const before = collect();
  const started = performance.now();
  const job = await jobs.create({ name: 'bench' });
  const completed = new Promise<void>((resolve) => {
    const off = jobs.on('complete', (done) => {
      if (done.id === job.id) {
        off();
        resolve();
      }
    });
  });
  // Chunks are made here and dropped after `add`, so the strings the job keeps count in its heap; the time
  // spent making them is not the manager's and is taken out.
  let making = 0;
  for (let from = 0; from < count; from += CHUNK) {
    const made = performance.now();
    const chunk = makeChunk(from, Math.min(CHUNK, count - from));
    making += performance.now() - made;
    await jobs.add(job.id, chunk);
  }
  await completed;
  const seconds = (performance.now() - started - making) / 1000;
  const final = await jobs.get(job.id);
  const retained = collect() - before;
  const sample = await jobs.results(job.id, { offset: count - 3 });
  if (final?.status !== 'complete' || final.completed !== count || sample.length !== 3) {
    throw new Error(`job did not complete: ${JSON.stringify(final)}`);
  }
  const reading = performance.now();
  let read = 0;
  for await (const _ of jobs.stream(job.id)) read++;
  const readSeconds = (performance.now() - reading) / 1000;
  if (read !== count) throw new Error(`streamed ${read} of ${count} results`);
  await jobs.close();
  await verifier.dispose();
  return {
    rate: count / seconds,
    bytes: retained / count,
    seconds,
    readSeconds,
    counts: final.counts,
  };
}

/** The queueing step alone (repeats index and grouping by domain), without verifying anything. */
function queueing(count: number): number {
  const work = new JobWork(BULK_DEFAULTS.perDomainConcurrency);
  let busy = 0;
  for (let from = 0; from < count; from += CHUNK) {
    const chunk = makeChunk(from, Math.min(CHUNK, count - from));
    const started = performance.now();
    work.add(chunk, from);
    busy += performance.now() - started;
  }
  return busy / 1000;
}

const queueSeconds = queueing(COUNT);
collect();
const directRate = await direct(COUNT);
const managed = await throughManager(COUNT);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`bulk bench: ${fmt(COUNT)} addresses, offline (dns: false), node ${process.version}`);
console.log(`  verifier alone (64 at a time):  ${fmt(directRate)} addresses/s`);
console.log(
  `  through BulkJobManager:         ${fmt(managed.rate)} addresses/s (${managed.seconds.toFixed(2)} s)`,
);
console.log(`    queueing alone (repeats index, grouping by domain): ${queueSeconds.toFixed(2)} s`);
console.log(`  manager / verifier alone:       ${(managed.rate / directRate).toFixed(2)}`);
console.log(`  retained heap after GC:         ${managed.bytes.toFixed(1)} bytes/address (target < 250)`);
console.log(`  reading all results (stream):   ${fmt(COUNT / managed.readSeconds)} results/s`);
console.log(`  counts: ${JSON.stringify(managed.counts)}`);
console.log(
  `  targets: memory ${managed.bytes < 250 ? 'met' : 'NOT met'}, speed (>= 100,000/s) ${managed.rate >= 100_000 ? 'met' : 'NOT met'}`,
);
console.log(`reproduce: node --expose-gc --import tsx bench/bulk.ts ${COUNT}`);
