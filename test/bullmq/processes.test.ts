/**
 * The fleet as users run it: `mailvet serve --redis --store` API nodes and `mailvet worker` processes (the built
 * bin) against loopback DNS and SMTP servers with several MX hosts. Every position ends with exactly one result,
 * equal to the in-process runner's, also when a worker is SIGKILLed, the API node is SIGKILLed and replaced, and
 * the fleet's Redis keys are deleted mid-job.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier } from '../../src/verifier.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { serverCaller } from '../support/http-call.js';
import { inProcessResults } from '../support/in-process-results.js';
import { type MailDomains, startMailDomains } from '../support/mail-domains.js';
import { BIN } from '../support/mailvet-bin.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { outputMatch, waitFor } from '../support/wait-for.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;
const KEY = 'fleet-test-key';
/**
 * Enough for the faults test's steps to fall mid-job (a sixth of the job or more between them, and no process
 * start among the steps), and for a job in many chunks across three workers; 30,000 took 100 s of the run.
 */
const COUNT = 9000;
/** Addresses per request that creates or fills a job: several requests per job (the HTTP API takes 10,000). */
const BATCH = 3000;
const DOMAINS = 8;

let mail: MailDomains;
let emails: string[] = [];
let expected: Brief[] = [];

type Brief = Pick<VerificationResult, 'email' | 'status' | 'sub_status'>;

function brief(results: readonly VerificationResult[]): Brief[] {
  return results.map(({ email, status, sub_status }) => ({ email, status, sub_status }));
}

interface Proc {
  readonly child: ChildProcess;
  output(): string;
}

/** Every process spawned, so that a test that timed out (its `finally` never ran) leaves none running. */
const spawned = new Set<ChildProcess>();

afterEach(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  spawned.clear();
});

/** Spawns the built bin; resolves once its output matches `ready`. */
async function spawnBin(args: string[], ready: RegExp): Promise<Proc & { match: RegExpExecArray }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', MAILVET_API_KEYS: KEY },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  try {
    const { match, output } = await outputMatch(child, ready, { what: `mailvet ${args[0]} to start` });
    return { child, output, match };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function network(): string[] {
  return [...mail.cliFlags(), '--helo', 'fleet.test'];
}

/** One fleet: its schema, prefix and processes. */
class Fleet {
  readonly schema = testSchema();
  readonly prefix = testPrefix();
  readonly procs = new Set<ChildProcess>();

  get store(): string {
    const url = new URL(POSTGRES_URL!);
    url.searchParams.set('schema', this.schema);
    return url.toString();
  }

  async api(...extra: string[]): Promise<Proc & { url: string }> {
    const proc = await spawnBin(
      [
        'serve',
        ...extra,
        '--port',
        '0',
        '--no-console',
        '--store',
        this.store,
        '--redis',
        REDIS_URL!,
        '--prefix',
        this.prefix,
        ...network(),
      ],
      /listening on (http:\/\/\S+)/,
    );
    this.procs.add(proc.child);
    return { ...proc, url: proc.match[1]! };
  }

  async worker(name: string): Promise<Proc> {
    const proc = await spawnBin(
      [
        'worker',
        '--store',
        this.store,
        '--redis',
        REDIS_URL!,
        '--prefix',
        this.prefix,
        '--id',
        name,
        '--lock-seconds',
        '2',
        ...network(),
      ],
      /taking chunks/,
    );
    this.procs.add(proc.child);
    return proc;
  }

  async kill(proc: Proc, signal: NodeJS.Signals): Promise<void> {
    const exited = new Promise((resolve) => proc.child.once('exit', resolve));
    proc.child.kill(signal);
    await exited;
    this.procs.delete(proc.child);
  }

  async close(): Promise<void> {
    for (const child of this.procs) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    await deletePrefix(this.prefix);
    await dropPostgresSchema(this.schema);
  }
}

const call = serverCaller(KEY);

interface WireJob {
  id: string;
  status: string;
  total: number;
  completed: number;
  counts: Record<string, number>;
}

/** Polls the job over HTTP until `done` holds for it. */
function jobWhen(url: string, id: string, done: (job: WireJob) => boolean): Promise<WireJob> {
  return waitFor(
    async () => {
      const job = (await call(url, `/v1/bulk/${id}`)) as WireJob;
      return done(job) && job;
    },
    { what: `job ${id}`, timeoutMs: 280_000, intervalMs: 100 }, // within the tests' 300 s
  );
}

/** Creates a job of every address, {@link BATCH} per request. */
async function submit(url: string, name: string): Promise<WireJob> {
  const created = (await call(url, '/v1/bulk', {
    method: 'POST',
    body: JSON.stringify({ name, emails: emails.slice(0, BATCH) }),
  })) as WireJob;
  for (let at = BATCH; at < COUNT; at += BATCH) {
    await call(url, `/v1/bulk/${created.id}/emails`, {
      method: 'POST',
      body: JSON.stringify({ emails: emails.slice(at, at + BATCH) }),
    });
  }
  return created;
}

/** The job is complete with each position once: its counts sum to the total, its results equal the expected. */
async function expectExactlyOnce(url: string, id: string): Promise<void> {
  const job = await jobWhen(url, id, (current) => current.status === 'complete');
  expect(job).toMatchObject({ total: COUNT, completed: COUNT });
  expect(Object.values(job.counts).reduce((a, b) => a + b, 0)).toBe(COUNT);
  const { results } = (await call(url, `/v1/bulk/${id}/results`)) as { results: VerificationResult[] };
  expect(results).toHaveLength(COUNT);
  expect(brief(results)).toEqual(expected);
}

beforeAll(async () => {
  if (!enabled) return;
  mail = await startMailDomains('fleet.test', DOMAINS);
  emails = mail.addresses(COUNT, 6000);
  const verifier = createVerifier({ ...mail.verifierOptions(), heloHost: 'fleet.test' });
  expected = brief(await inProcessResults(verifier, emails));
  await verifier.dispose();
}, 180_000);

afterAll(async () => {
  await mail?.close();
});

describe.skipIf(!enabled)('a fleet of processes: mailvet serve --redis and mailvet worker', () => {
  beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
  it('1 API node and 3 workers verify 9,000 addresses, each position exactly once', async () => {
    const fleet = new Fleet();
    try {
      const api = await fleet.api();
      for (let w = 0; w < 3; w++) await fleet.worker(`w${w}`);
      await expect
        .poll(async () => ((await call(api.url, '/healthz')) as { workers: number }).workers, {
          timeout: 10_000,
        })
        .toBe(3);
      const created = await submit(api.url, 'fleet');
      await expectExactlyOnce(api.url, created.id);
    } finally {
      await fleet.close();
    }
  }, 300_000);

  it('two API nodes, one of them also verifying (--work), share a job: created on one, filled and read on both', async () => {
    const fleet = new Fleet();
    const count = 2000;
    try {
      const working = await fleet.api('--work');
      const plain = await fleet.api();
      await expect
        .poll(async () => ((await call(plain.url, '/healthz')) as { workers: number }).workers, {
          timeout: 10_000,
        })
        .toBe(1); // the --work node is the fleet's only worker
      const created = (await call(plain.url, '/v1/bulk', {
        method: 'POST',
        body: JSON.stringify({ name: 'two nodes', emails: emails.slice(0, count / 2), auto_start: false }),
      })) as WireJob;
      await call(working.url, `/v1/bulk/${created.id}/emails`, {
        method: 'POST',
        body: JSON.stringify({ emails: emails.slice(count / 2, count) }),
      });
      await call(working.url, `/v1/bulk/${created.id}/start`, { method: 'POST' });
      for (const node of [plain, working]) {
        const job = await jobWhen(node.url, created.id, (current) => current.status === 'complete');
        expect(job).toMatchObject({ total: count, completed: count });
        const { results } = (await call(node.url, `/v1/bulk/${created.id}/results`)) as {
          results: VerificationResult[];
        };
        expect(brief(results)).toEqual(expected.slice(0, count));
      }
    } finally {
      await fleet.close();
    }
  }, 300_000);

  it('completes exactly once after a worker and the API node are SIGKILLed, Redis loses its keys and a worker is SIGTERMed', async () => {
    const fleet = new Fleet();
    try {
      // Every process starts before the job: a start takes seconds on a loaded machine while the others go on, so
      // none stands between two faults (each must fall mid-job). The spare API node takes over when the first dies.
      let api = await fleet.api();
      const spare = await fleet.api();
      const workers = [await fleet.worker('a'), await fleet.worker('b'), await fleet.worker('c')];
      const created = await submit(api.url, 'faults');
      await jobWhen(api.url, created.id, (job) => job.completed >= COUNT * 0.1);
      await fleet.kill(workers[0]!, 'SIGKILL'); // its chunks stall and are taken again
      await jobWhen(api.url, created.id, (job) => job.completed >= COUNT * 0.3);
      await fleet.kill(api, 'SIGKILL');
      api = spare; // another API node serves the same job
      await jobWhen(api.url, created.id, (job) => job.completed >= COUNT * 0.5);
      expect(await deletePrefix(fleet.prefix)).toBeGreaterThan(0); // Redis lost its data
      const before = await jobWhen(api.url, created.id, (job) => job.completed >= COUNT * 0.67);
      expect(before.completed).toBeLessThan(COUNT); // every fault fell mid-job
      // SIGTERM: the worker finishes its chunks and stops cleanly.
      const stopped = new Promise<number | null>((resolve) => workers[1]!.child.once('exit', resolve));
      await fleet.kill(workers[1]!, 'SIGTERM');
      expect(await stopped).toBe(0);
      expect(workers[1]!.output()).toMatch(/mailvet worker stopped/);
      await expectExactlyOnce(api.url, created.id);
    } finally {
      await fleet.close();
    }
  }, 300_000);
});
