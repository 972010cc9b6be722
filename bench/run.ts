/**
 * Runs every benchmark in turn, each in its own process so that one's heap and JIT state do not skew the next.
 *
 *   npm run bench            (all but the opt-in ones)
 *   npm run bench -- offline (one or more by name)
 * `postfix` is opt-in: it needs a Postfix that `scripts/postfix-loopback.sh start` set up, which this machine
 * does not run by itself, so it runs only when named.
 */
import { spawnSync } from 'node:child_process';

const BENCHES: Record<string, string[]> = {
  offline: ['--import', 'tsx', 'bench/offline.ts'],
  network: ['--import', 'tsx', 'bench/network.ts'],
  bulk: ['--expose-gc', '--import', 'tsx', 'bench/bulk.ts'],
  'bulk-network': ['--import', 'tsx', 'bench/bulk-network.ts'],
  http: ['--import', 'tsx', 'bench/http.ts'],
  typo: ['--import', 'tsx', 'bench/typo.ts'],
  loop: ['--import', 'tsx', 'bench/loop.ts'],
  pool: ['--import', 'tsx', 'bench/pool.ts'],
  store: ['--import', 'tsx', 'bench/store.ts'],
  fleet: ['--import', 'tsx', 'bench/fleet.ts'],
  postfix: ['--import', 'tsx', 'bench/postfix.ts'],
  'cold-start': ['--import', 'tsx', 'bench/cold-start.ts'],
  stalls: ['--import', 'tsx', 'bench/stalls.ts'],
  'trace-cost': ['--import', 'tsx', 'bench/trace-cost.ts'],
  'observe-cost': ['--import', 'tsx', 'bench/observe-cost.ts'],
  'known-results': ['--import', 'tsx', 'bench/known-results.ts'],
};

/** Benchmarks that run only when named (they need a server set up by hand). */
const OPT_IN = new Set(['postfix']);

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!(name in BENCHES)) {
    console.error(`unknown benchmark "${name}"; known: ${Object.keys(BENCHES).join(', ')}`);
    process.exit(2);
  }
}
let failed = false;
for (const [name, args] of Object.entries(BENCHES)) {
  if (wanted.length > 0 ? !wanted.includes(name) : OPT_IN.has(name)) {
    if (wanted.length === 0) console.log(`\n=== ${name}: skipped (opt-in: npm run bench -- ${name})`);
    continue;
  }
  console.log(`\n=== ${name}: node ${args.join(' ')}`);
  const run = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (run.status !== 0) failed = true;
}
process.exit(failed ? 1 : 0);
