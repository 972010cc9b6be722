/**
 * Crash recovery with real processes: `mailvet serve --data DIR` (and `--store postgres://...`) killed with
 * SIGKILL in the middle of a 4,000-address job verified against loopback DNS and SMTP servers, then started
 * again on the same store: the job completes, every position has one result, the results equal a run without
 * the crash. (The job only has to outlast the kill: a tenth of it is done then, and verifying the rest takes
 * seconds, hundreds of polls of the job; more addresses made the file the longest of the run.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier } from '../../src/verifier.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { serverCaller } from '../support/http-call.js';
import { inProcessResults } from '../support/in-process-results.js';
import { type MailDomains, startMailDomains } from '../support/mail-domains.js';
import { BIN } from '../support/mailvet-bin.js';
import { pgliteDataDir } from '../support/pglite-template.js';
import { outputMatch, waitFor } from '../support/wait-for.js';

const KEY = 'crash-test-key';
const COUNT = 4000;
/** Positions done when the first server is killed: the job is well under way, and far from its end. */
const MIDWAY = COUNT / 10;
const DOMAINS = 16;

let mail: MailDomains;
let emails: string[] = [];
let expected: Pick<VerificationResult, 'email' | 'status' | 'sub_status'>[] = [];

/** Starts `mailvet serve` and resolves with the process and its URL once it listens. */
async function serve(store: string[]): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--port', '0', '--no-console', ...store, ...mail.cliFlags()],
    {
      env: { PATH: process.env.PATH ?? '', MAILVET_API_KEYS: KEY },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  try {
    const { match, output } = await outputMatch(child, /listening on (http:\/\/\S+)/, {
      what: 'mailvet serve',
    });
    return { child, url: match[1]!, output };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

const api = serverCaller(KEY);

interface WireJob {
  id: string;
  status: string;
  total: number;
  completed: number;
}

/** Polls the job over HTTP until `done` holds for it. */
function jobWhen(url: string, id: string, done: (job: WireJob) => boolean): Promise<WireJob> {
  return waitFor(
    async () => {
      const job = (await api(url, `/v1/bulk/${id}`)) as WireJob;
      return done(job) && job;
    },
    { what: `job ${id}`, timeoutMs: 200_000, intervalMs: 50 }, // within the test's 240 s,
  );
}

async function crashAndResume(store: string[]): Promise<void> {
  const first = await serve(store);
  const created = (await api(first.url, '/v1/bulk', {
    method: 'POST',
    body: JSON.stringify({ name: 'crash', emails: emails.slice(0, COUNT / 2) }),
  })) as WireJob;
  await api(first.url, `/v1/bulk/${created.id}/emails`, {
    method: 'POST',
    body: JSON.stringify({ emails: emails.slice(COUNT / 2) }),
  });
  const midway = await jobWhen(first.url, created.id, (job) => job.completed >= MIDWAY);
  expect(midway.status).toBe('processing');
  first.child.kill('SIGKILL');
  await new Promise((resolve) => first.child.once('exit', resolve));

  const second = await serve(store);
  try {
    const resumed = (await api(second.url, `/v1/bulk/${created.id}`)) as WireJob;
    expect(resumed.total).toBe(COUNT);
    expect(resumed.completed).toBeGreaterThanOrEqual(MIDWAY);
    expect(resumed.completed).toBeLessThan(COUNT); // killed mid-way: the second server has work left
    await jobWhen(second.url, created.id, (job) => job.status === 'complete');
    const results = (await api(second.url, `/v1/bulk/${created.id}/results`)) as {
      results: VerificationResult[];
    };
    expect(results.results).toHaveLength(COUNT);
    expect(results.results.map(({ email, status, sub_status }) => ({ email, status, sub_status }))).toEqual(
      expected,
    );
    const health = (await api(second.url, '/healthz')) as { store: string };
    expect(health.store).toBe('up');
  } finally {
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
  }
}

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
beforeAll(async () => {
  // Each domain has its own MX host on its own loopback address (the verifier is polite per MX).
  mail = await startMailDomains('crash.test', DOMAINS);
  emails = mail.addresses(COUNT, 3000);
  // The same verification in process, without a crash: what the resumed job must equal.
  const verifier = createVerifier(mail.verifierOptions());
  const results = await inProcessResults(verifier, emails);
  expected = results.map(({ email, status, sub_status }) => ({ email, status, sub_status }));
  await verifier.dispose();
}, 120_000);

afterAll(async () => {
  await mail?.close();
});

describe('a killed mailvet serve resumes its jobs', () => {
  it('with --data DIR (PGlite)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mailvet-crash-'));
    try {
      await pgliteDataDir(dir); // initdb done: this test is about the restart, not a first start
      await crashAndResume(['--data', dir]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);

  it.skipIf(POSTGRES_URL === undefined)(
    'with --store postgres://... (PostgreSQL)',
    async () => {
      const schema = testSchema();
      try {
        const url = new URL(POSTGRES_URL!);
        url.searchParams.set('schema', schema);
        await crashAndResume(['--store', url.toString(), '--lease-seconds', '2']);
      } finally {
        await dropPostgresSchema(schema);
      }
    },
    240_000,
  );
});
