/**
 * A job's webhook outlives a restart of `mailvet serve` on a durable store: a job created with a webhook, its mail
 * server slow, is interrupted (SIGKILL with `--data DIR`, SIGTERM with `--store postgres://...`); the next server
 * on the same store resumes the job and delivers its `bulk.progress` and `bulk.completed` events, signed with the
 * key's secret.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { start } from '../support/mailvet-bin.js';
import { pgliteDataDir } from '../support/pglite-template.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { outputMatch, waitFor } from '../support/wait-for.js';
import { receiver } from '../webhooks/support.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

const KEY = 'restart-key';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const HEADERS = { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' };
const EMAILS = Array.from({ length: 120 }, (_, i) => `user${i}@slow.test`);

let dns: DnsTestServer;
let mx: SmtpServerHarness;
let dir: string;
let hook: Awaited<ReturnType<typeof receiver>>;

beforeAll(async () => {
  dns = await startDnsServer({
    'slow.test': { mx: [{ priority: 10, exchange: 'mx.slow.test' }] },
    'mx.slow.test': { a: ['127.0.0.2'] },
  });
  // Every reply is 100 ms late: the job is still running when the server stops.
  mx = await startSmtpServer({ host: '127.0.0.2', delayMs: 100 });
  dir = await mkdtemp(join(tmpdir(), 'mailvet-webhook-restart-'));
  await writeFile(join(dir, 'secrets'), `${KEY} ${SECRET}\n`);
  await chmod(join(dir, 'secrets'), 0o600);
  hook = await receiver(SECRET, (_req, res) => res.writeHead(204).end());
}, 60_000);

afterAll(async () => {
  await hook?.close();
  await mx?.close();
  await dns?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Starts `mailvet serve` on `store`; resolves with the process and its URL once it listens. */
async function serve(store: string[]) {
  const server = start(
    [
      'serve',
      '--port',
      '0',
      '--no-console',
      ...store,
      '--dns',
      dns.address,
      '--smtp-port',
      String(mx.port),
      '--allow-address',
      '127.0.0.0/8',
      '--allow-tld',
      'test',
      '--greylist-delays',
      'none',
      '--webhook-secrets-file',
      join(dir, 'secrets'),
      '--webhook-allow-address',
      '127.0.0.1/32',
      '--allow-http-webhooks',
    ],
    { env: { MAILVET_API_KEYS: KEY } },
  );
  try {
    const { match } = await outputMatch(server.child, /listening on (http:\/\/\S+?)[\s"]/, {
      what: 'mailvet serve',
      timeoutMs: 120_000,
    });
    return { ...server, url: match[1]! };
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
}

interface Event {
  type: string;
  data: { id: string; status: string; completed: number; total: number };
}

/** The events the receiver got for job `id` from the `from`-th request on, each checked against the secret. */
function eventsOf(id: string, from: number): Event[] {
  return hook.received.slice(from).flatMap((request) => {
    const event = new Webhook(SECRET).verify(request.body, request.headers) as Event;
    return event.data.id === id ? [event] : [];
  });
}

async function restartWith(store: string[], signal: 'SIGKILL' | 'SIGTERM'): Promise<void> {
  const first = await serve(store);
  const created = await fetch(`${first.url}/v1/bulk`, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      emails: EMAILS,
      webhook: {
        url: `http://127.0.0.1:${hook.port}/hook`,
        events: ['bulk.progress', 'bulk.completed'],
      },
    }),
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  await waitFor(
    async () => {
      const job = (await (
        await fetch(`${first.url}/v1/bulk/${id}`, { headers: HEADERS })
      ).json()) as Event['data'];
      return job.completed > 0;
    },
    { what: 'the job to start', timeoutMs: 60_000 },
  );
  first.child.kill(signal);
  await first.exited;
  // Nothing after the stop came from the first server: whatever the receiver gets next, the second one sent.
  const before = hook.received.length;
  expect(eventsOf(id, 0).map((event) => event.type)).not.toContain('bulk.completed');

  const second = await serve(store);
  try {
    const resumed = (await (
      await fetch(`${second.url}/v1/bulk/${id}`, { headers: HEADERS })
    ).json()) as Event['data'];
    expect(resumed.completed).toBeLessThan(EMAILS.length);
    const completed = await waitFor(
      () => eventsOf(id, before).find((event) => event.type === 'bulk.completed'),
      { what: 'bulk.completed after the restart', timeoutMs: 120_000, intervalMs: 50 },
    );
    expect(completed.data).toMatchObject({ id, status: 'complete', completed: EMAILS.length });
    const after = eventsOf(id, before);
    // The final progress comes before the completion (forced at the end, as without a restart).
    expect(after.map((event) => event.type)).toContain('bulk.progress');
    expect(hook.received.slice(before).every((request) => request.verified)).toBe(true);
    expect(after.filter((event) => event.type === 'bulk.completed')).toHaveLength(1);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
}

describe("a job's webhook outlives a restart of mailvet serve", () => {
  it('with --data DIR (PGlite), killed with SIGKILL', async () => {
    const data = await mkdtemp(join(tmpdir(), 'mailvet-webhook-restart-data-'));
    try {
      await pgliteDataDir(data); // initdb done: this test is about the restart, not a first start
      await restartWith(['--data', data], 'SIGKILL');
    } finally {
      await rm(data, { recursive: true, force: true });
    }
  }, 300_000);

  it.skipIf(POSTGRES_URL === undefined)(
    'with --store postgres://... (PostgreSQL), stopped with SIGTERM',
    async () => {
      const schema = testSchema();
      try {
        const url = new URL(POSTGRES_URL!);
        url.searchParams.set('schema', schema);
        await restartWith(['--store', url.toString()], 'SIGTERM');
      } finally {
        await dropPostgresSchema(schema);
      }
    },
    300_000,
  );
});
