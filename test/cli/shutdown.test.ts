/**
 * SIGTERM on a spawned `mailvet serve --data DIR` with a bulk job running against a slow loopback mail server and
 * a slow `GET /v1/verify` and an event stream in flight: the slow request completes with 200, the stream ends,
 * new connections are refused, the process exits 0 with its logs flushed, and the next start on the same data
 * directory resumes the job at once (its lease was released: it does not wait out the 30 s lease).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { start } from '../support/mailvet-bin.js';
import { PGLITE_TEMPLATE_MS, pgliteDataDir } from '../support/pglite-template.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { outputMatch, waitFor } from '../support/wait-for.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

const KEY = 'shutdown-key';
const HEADERS = { authorization: `Bearer ${KEY}` };
/** Far shorter than the store's 30 s lease: a job that waited out its lease would not resume within it. */
const RESUME_MS = 15_000;

let dns: DnsTestServer;
let bulkMx: SmtpServerHarness;
let soloMx: SmtpServerHarness;
let dataDir: string;

beforeAll(async () => {
  dns = await startDnsServer({
    'bulk.test': { mx: [{ priority: 10, exchange: 'mx.bulk.test' }] },
    'mx.bulk.test': { a: ['127.0.0.2'] },
    'solo.test': { mx: [{ priority: 10, exchange: 'mx.solo.test' }] },
    'mx.solo.test': { a: ['127.0.0.3'] },
  });
  // Every reply of the job's MX is 150 ms late: 300 addresses keep the job busy for a while.
  bulkMx = await startSmtpServer({ host: '127.0.0.2', delayMs: 150 });
  // The single verification's MX is slower still: its request is in flight for seconds.
  soloMx = await startSmtpServer({ host: '127.0.0.3', port: bulkMx.port, delayMs: 700 });
  dataDir = await mkdtemp(join(tmpdir(), 'mailvet-shutdown-'));
  await pgliteDataDir(dataDir); // initdb done: this test is about the stop and the next start
}, PGLITE_TEMPLATE_MS);

afterAll(async () => {
  await soloMx?.close();
  await bulkMx?.close();
  await dns?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

function serve() {
  return start(
    [
      'serve',
      '--port',
      '0',
      '--no-console',
      '--data',
      dataDir,
      '--dns',
      dns.address,
      '--smtp-port',
      String(bulkMx.port),
      '--allow-address',
      '127.0.0.0/8',
      '--allow-tld',
      'test',
      '--greylist-delays',
      'none',
      '--shutdown-timeout',
      '30',
    ],
    { env: { MAILVET_API_KEYS: KEY } },
  );
}

async function urlOf(server: ReturnType<typeof serve>): Promise<string> {
  const { match } = await outputMatch(server.child, /listening on (http:\/\/\S+?)[\s"]/, {
    what: 'serve',
    timeoutMs: 120_000,
  });
  return match[1]!;
}

interface WireJob {
  status: string;
  total: number;
  completed: number;
}

async function jobOf(url: string, id: string): Promise<WireJob> {
  return (await (await fetch(`${url}/v1/bulk/${id}`, { headers: HEADERS })).json()) as WireJob;
}

describe('mailvet serve on SIGTERM', () => {
  it('finishes the request in flight, refuses new connections, exits 0, and the job resumes at once', async () => {
    const first = serve();
    const url = await urlOf(first);
    const emails = Array.from({ length: 300 }, (_, i) => `user${i}@bulk.test`);
    const created = await fetch(`${url}/v1/bulk`, {
      method: 'POST',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body: JSON.stringify({ emails }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    await waitFor(async () => (await jobOf(url, id)).completed > 0, {
      what: 'the job to start',
      timeoutMs: 60_000,
    });

    const events = await fetch(`${url}/v1/bulk/${id}/events`, { headers: HEADERS });
    expect(events.status).toBe(200);
    const slow = fetch(`${url}/v1/verify?email=someone@solo.test`, { headers: HEADERS });
    await waitFor(() => soloMx.connections() > 0, { what: 'the slow verification to reach its MX' });
    first.child.kill('SIGTERM');
    await waitFor(() => first.stdout().includes('mailvet API stopping'), {
      what: 'the server to stop accepting',
    });
    // A new connection is refused (fetch could reuse a kept-alive one: a raw connect cannot).
    const { port } = new URL(url);
    await expect(
      new Promise((resolve, reject) =>
        connect(Number(port), '127.0.0.1', () => resolve(undefined)).once('error', reject),
      ),
    ).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    // The event stream ends cleanly at once (it would otherwise hold the close until the timeout cut it).
    const stopped = Date.now();
    expect(await events.text()).toContain('event: progress');
    expect(Date.now() - stopped).toBeLessThan(10_000);
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { email: string }).email).toBe('someone@solo.test');
    const exit = await first.exited;
    expect(exit.code).toBe(EXIT.ok);
    const lines = exit.stdout
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { msg: string; route?: string; status?: number });
    expect(lines.find((line) => line.route === '/v1/verify')).toMatchObject({ status: 200 });
    expect(lines.at(-1)?.msg).toBe('mailvet API stopped'); // flushed before the exit
    expect(exit.stderr).toBe('');

    const second = serve();
    try {
      const again = await urlOf(second);
      const resumed = await jobOf(again, id);
      expect(resumed.status).toBe('processing');
      const before = resumed.completed;
      expect(before).toBeLessThan(emails.length);
      await waitFor(async () => (await jobOf(again, id)).completed > before, {
        what: 'the job to resume',
        timeoutMs: RESUME_MS,
      });
    } finally {
      second.child.kill('SIGTERM');
      expect((await second.exited).code).toBe(EXIT.ok);
    }
  }, 240_000);
});
