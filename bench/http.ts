/**
 * Requests/s and p99 latency of `GET /v1/verify` in offline mode (`dns: false`, `smtp: false`) through the
 * Node server (`createServer` from mailvet/http), side by side with a bare `node:http` server that answers
 * a constant JSON body (the ceiling of any handler on this machine): the very result the API returns for the
 * address, computed once at start, so both sides send a body of the same size.
 *
 * Each server runs in its own child process pinned to CPU 0 (`taskset -c 0`), so it has exactly one core;
 * this process (the autocannon load generator) pins itself to CPU 1. Without taskset (not Linux) the
 * servers are still one process each (one JS thread), but not pinned. Same connections, same duration; the
 * two sides alternate over three rounds and the best round of each is reported, so that a burst of load from
 * elsewhere on the machine does not decide the ratio. Each server also reports the CPU time it used, which
 * gives its capacity per core-second (1 / CPU time per request): a second ratio that does not depend on how
 * much of CPU 0 the server actually got.
 *
 *   npx tsx bench/http.ts [seconds per side, default 10]
 */
import { execFileSync, spawn } from 'node:child_process';
import { createServer as createBareServer } from 'node:http';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

interface CannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<CannonResult>;

const KEY = 'bench-key';
const ADDRESS = 'john.smith@gmail.com';
const CONNECTIONS = 50;

async function serve(mode: string): Promise<void> {
  process.on('message', () => process.send?.(process.cpuUsage()));
  if (mode === 'bare') {
    // The same bytes the API answers with: the address's result, computed once, then served as a constant.
    const { createVerifier } = await import('../src/verifier.js');
    const verifier = createVerifier({ dns: false, smtp: false });
    const body = JSON.stringify(await verifier.verify(ADDRESS));
    await verifier.dispose();
    const server = createBareServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    server.listen(0, '127.0.0.1', () => {
      const address = server.address() as { port: number };
      console.log(`http://127.0.0.1:${address.port}`);
    });
    return;
  }
  const { createServer } = await import('../src/http/node.js');
  const { url } = await createServer({
    port: 0,
    apiKeys: [KEY],
    verifierOptions: { dns: false, smtp: false },
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
  });
  console.log(url);
}

function pin(cpu: number, pid: number): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

interface Child {
  readonly url: string;
  readonly pinned: boolean;
  /** CPU time (user + system) the server process has used, in microseconds. */
  cpu(): Promise<number>;
  stop(): void;
}

async function startChild(mode: string): Promise<Child> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--import', 'tsx', self, `--serve=${mode}`], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  const pinned = child.pid !== undefined && pin(0, child.pid);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('http://'));
      if (line !== undefined) resolve(line.trim());
    });
    child.once('exit', (code) => reject(new Error(`${mode} server exited with ${code}`)));
  });
  const cpu = () =>
    new Promise<number>((resolve) => {
      child.once('message', (usage: { user: number; system: number }) => resolve(usage.user + usage.system));
      child.send('cpu');
    });
  return { url, pinned, cpu, stop: () => child.kill() };
}

interface Measure {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  /** Server CPU time per request, in microseconds. */
  readonly cpuPerRequest: number;
  readonly failures: number;
}

async function measure(child: Child, url: string, seconds: number, autocannon: Autocannon): Promise<Measure> {
  const before = await child.cpu();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    headers: { authorization: `Bearer ${KEY}` },
  });
  const used = (await child.cpu()) - before;
  const total = result.requests.average * seconds;
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuPerRequest: used / total,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

function report(name: string, m: Measure): void {
  console.log(
    `${name.padEnd(42)} ${Math.round(m.rps).toLocaleString('en-US').padStart(7)} req/s` +
      `   p50 ${String(m.p50).padStart(3)} ms   p99 ${String(m.p99).padStart(3)} ms` +
      `   ${m.cpuPerRequest.toFixed(1).padStart(6)} µs CPU/req` +
      `  (${Math.round(1e6 / m.cpuPerRequest).toLocaleString('en-US')} req per core-second)` +
      (m.failures > 0 ? `   FAILURES ${m.failures}` : ''),
  );
}

async function main(): Promise<void> {
  const serveArg = process.argv.find((arg) => arg.startsWith('--serve='));
  if (serveArg !== undefined) return serve(serveArg.slice('--serve='.length));

  const seconds = Number(process.argv[2] ?? 10);
  const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
  const selfPinned = pin(1, process.pid);
  const bare = await startChild('bare');
  const mailvet = await startChild('mailvet');
  console.log(
    `GET /v1/verify offline, ${CONNECTIONS} connections, ${seconds} s per side, node ${process.version}; ` +
      (bare.pinned && mailvet.pinned && selfPinned
        ? 'servers pinned to CPU 0, autocannon to CPU 1'
        : 'taskset unavailable: servers are single processes, not pinned'),
  );
  const rounds = 3;
  const slice = Math.max(1, Math.round(seconds / rounds));
  const bareUrl = `${bare.url}/`;
  const verifyUrl = `${mailvet.url}/v1/verify?email=${encodeURIComponent(ADDRESS)}`;
  try {
    await measure(bare, bareUrl, 2, autocannon); // warm-up: JIT, pools
    await measure(mailvet, verifyUrl, 2, autocannon);
    const bares: Measure[] = [];
    const ours: Measure[] = [];
    for (let round = 0; round < rounds; round++) {
      bares.push(await measure(bare, bareUrl, slice, autocannon));
      ours.push(await measure(mailvet, verifyUrl, slice, autocannon));
    }
    const best = (list: Measure[]) => list.reduce((a, b) => (b.rps > a.rps ? b : a));
    const cheapest = (list: Measure[]) => Math.min(...list.map((m) => m.cpuPerRequest));
    const ceiling = best(bares);
    const mine = best(ours);
    report('bare node:http, constant JSON (ceiling)', ceiling);
    report('mailvet createServer, GET /v1/verify', mine);
    console.log(
      `ratio mailvet / ceiling: ${((mine.rps / ceiling.rps) * 100).toFixed(1)}% of requests/s (best of ${rounds} ` +
        `rounds of ${slice} s each), ${((cheapest(bares) / cheapest(ours)) * 100).toFixed(1)}% of capacity per ` +
        'core-second   (target: >= 50%)',
    );
  } finally {
    bare.stop();
    mailvet.stop();
  }
  console.log(`reproduce: npx tsx bench/http.ts ${seconds}`);
}

await main();
