/**
 * The logs of a spawned `mailvet serve`: every line of standard output is JSON; a request line carries the
 * request id the client got, the route template, the status and the bytes written; job transitions are lines;
 * and the whole output of a run holds no API key (of MAILVET_API_KEYS or stored), no webhook secret (of the
 * environment or of a stored key), no store password and no address unless --log-addresses is given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { run as runBin, start } from '../support/mailvet-bin.js';
import { outputMatch, waitFor } from '../support/wait-for.js';
import { tempDir } from './support.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

const KEYS = ['logkey-AAAA1111secret', 'logkey-BBBB2222secret'];
const WRONG_KEY = 'wrong-key-ZZZZ9999';
const SECRET = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
const PASSWORD = 'pw-SEKRET-4711';
const ADDRESS = 'someone.logged@example.com';
const BULK = ['bulk-one.logged@example.org', 'bulk-two.logged@example.org'];

const schema = testSchema();
let dir: Awaited<ReturnType<typeof tempDir>> | undefined;
afterAll(async () => {
  if (POSTGRES_URL !== undefined) await dropPostgresSchema(schema);
  await dir?.remove();
});

/**
 * The store flags: PostgreSQL with a password in its URL when a server is there (trust auth ignores it), else
 * PGlite in a directory of its own.
 */
async function storeFlags(): Promise<string[]> {
  if (POSTGRES_URL === undefined) {
    console.log(
      'MAILVET_TEST_POSTGRES_URL is not set: the run keeps its jobs in PGlite (no store URL to hide)',
    );
    dir = await tempDir('mailvet-serve-logs-');
    return ['--data', dir.file('data')];
  }
  const url = new URL(POSTGRES_URL);
  url.password = PASSWORD;
  if (url.username === '') url.username = 'postgres';
  url.searchParams.set('schema', schema);
  return ['--store', url.toString()];
}

/** A stored key with a webhook secret (`mailvet keys create --webhook-secret`): the key and the secret. */
async function storedKey(store: string[]): Promise<{ key: string; secret: string }> {
  const args = [
    'keys',
    'create',
    ...store,
    '--name',
    'logged-app',
    '--scopes',
    'verify,bulk:read,bulk:write',
  ];
  const exit = await runBin([...args, '--webhook-secret']);
  expect(exit.code, exit.stderr).toBe(EXIT.ok);
  const [key = '', secret = ''] = exit.stdout.trim().split('\n');
  expect(secret).toMatch(/^whsec_/);
  return { key, secret };
}

type Line = Record<string, unknown> & { level: string; msg: string };

/** Runs a server through `session(url)`, stops it with SIGTERM, and answers its whole output. */
async function served(flags: string[], session: (url: string, output: () => string) => Promise<void>) {
  const server = start(
    [
      'serve',
      '--port',
      '0',
      '--no-dns',
      '--no-console',
      '--webhook-allow-address',
      '127.0.0.1/32',
      '--allow-http-webhooks',
      ...flags,
    ],
    { env: { MAILVET_API_KEYS: KEYS.join(','), MAILVET_WEBHOOK_SECRETS: SECRET } },
  );
  try {
    const { match } = await outputMatch(server.child, /listening on (http:\/\/\S+?)[\s"]/, { what: 'serve' });
    await session(match[1]!, server.stdout);
  } finally {
    server.child.kill('SIGTERM');
  }
  const exit = await server.exited;
  const lines = exit.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line); // throws on a line that is not JSON
  return { exit, lines, all: exit.stdout + exit.stderr };
}

function verify(url: string, key: string, requestId?: string) {
  return fetch(`${url}/v1/verify?email=${encodeURIComponent(ADDRESS)}`, {
    headers: {
      authorization: `Bearer ${key}`,
      ...(requestId === undefined ? {} : { 'x-request-id': requestId }),
    },
  });
}

describe('mailvet serve logs (spawned)', () => {
  it('logs JSON lines for requests and job transitions, and nothing secret in the whole run', async () => {
    const answered: { id: string | null; bytes: number }[] = [];
    let jobId = '';
    let storedJobId = '';
    const store = await storeFlags();
    const stored = await storedKey(store);
    const run = await served(['--log-level', 'debug', ...store], async (url, output) => {
      const ok = await verify(url, KEYS[1]!, 'client-chosen-id-1');
      answered.push({ id: ok.headers.get('x-request-id'), bytes: (await ok.arrayBuffer()).byteLength });
      const generated = await verify(url, KEYS[0]!);
      answered.push({
        id: generated.headers.get('x-request-id'),
        bytes: (await generated.arrayBuffer()).byteLength,
      });
      expect((await verify(url, WRONG_KEY)).status).toBe(401);
      const closed = await freePort();
      const created = await fetch(`${url}/v1/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS[0]}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: 'logged-job',
          emails: BULK,
          webhook: { url: `http://127.0.0.1:${closed}/hook` },
        }),
      });
      expect(created.status).toBe(201);
      jobId = ((await created.json()) as { id: string }).id;
      await waitFor(
        async () => {
          const job = await fetch(`${url}/v1/bulk/${jobId}`, {
            headers: { authorization: `Bearer ${KEYS[0]}` },
          });
          return ((await job.json()) as { status: string }).status === 'complete';
        },
        { what: 'the job to complete' },
      );
      await waitFor(() => output().includes(`"msg":"webhook (job ${jobId})`), { what: 'the webhook line' });
      // A stored key signs its job's webhook with its own secret, read from the store.
      const storedJob = await fetch(`${url}/v1/bulk`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stored.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ emails: [BULK[0]], webhook: { url: `http://127.0.0.1:${closed}/hook` } }),
      });
      expect(storedJob.status).toBe(201);
      storedJobId = ((await storedJob.json()) as { id: string }).id;
      await waitFor(() => output().includes(`"msg":"webhook (job ${storedJobId})`), {
        what: "the stored key's webhook line",
      });
    });
    expect(run.exit.code).toBe(EXIT.ok);
    const requests = run.lines.filter((line) => line.msg === 'request');
    expect(answered[0]!.id).toBe('client-chosen-id-1');
    for (const { id, bytes } of answered) {
      const line = requests.find((each) => each.request_id === id);
      expect(line).toMatchObject({
        level: 'info',
        method: 'GET',
        route: '/v1/verify',
        status: 200,
        bytes,
        key_id: null,
      });
      expect(line!.duration_ms).toBeTypeOf('number');
      expect(Date.parse(line!.time as string)).not.toBeNaN();
    }
    expect(requests.find((line) => line.status === 401)).toMatchObject({
      route: '/v1/verify',
      bytes: expect.any(Number),
    });
    expect(requests.find((line) => line.method === 'POST')).toMatchObject({ route: '/v1/bulk', status: 201 });
    expect(requests.find((line) => line.route === '/v1/bulk/{id}')).toBeDefined();
    const transitions = run.lines.filter((line) => line.job_id === jobId).map((line) => line.msg);
    expect(transitions).toEqual(expect.arrayContaining(['job created', 'job started', 'job complete']));
    expect(run.lines.find((line) => line.msg === 'job complete')).toMatchObject({ total: 2, completed: 2 });
    // The webhook's receiver is not there: the server's log says how, as a warn line.
    expect(
      run.lines.some(
        (line) => line.level === 'warn' && String(line.msg).startsWith(`webhook (job ${jobId})`),
      ),
    ).toBe(true);
    expect(run.lines.at(-1)?.msg).toBe('mailvet API stopped');
    expect(run.lines.find((line) => line.msg === 'request' && line.key_id !== null)).toMatchObject({
      route: '/v1/bulk',
      key_id: /^mv_([0-9A-Za-z]{8})_/.exec(stored.key)?.[1],
    });
    for (const secret of [
      stored.key,
      stored.key.slice(12),
      stored.secret,
      stored.secret.slice(6),
      ...KEYS,
      WRONG_KEY,
      SECRET,
      SECRET.slice(6),
      PASSWORD,
      ADDRESS,
      ...BULK,
      'logged-job',
    ]) {
      expect(run.all).not.toContain(secret);
    }
    expect(run.all).not.toMatch(/logged@/);
  }, 90_000);

  it('logs the address of a verification only with --log-addresses', async () => {
    const run = await served(['--log-addresses'], async (url) => {
      expect((await verify(url, KEYS[0]!, 'with-address')).status).toBe(200);
    });
    expect(run.exit.code).toBe(EXIT.ok);
    expect(run.lines.find((line) => line.request_id === 'with-address')).toMatchObject({ email: ADDRESS });
    for (const secret of [...KEYS, SECRET]) expect(run.all).not.toContain(secret);
  }, 60_000);

  it('writes nothing below --log-level, and pretty text with --log-format pretty', async () => {
    const port = await freePort();
    const quietServer = start(
      ['serve', '--port', String(port), '--no-dns', '--no-console', '--log-level', 'warn'],
      {
        env: { MAILVET_API_KEYS: KEYS[0]! },
      },
    );
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined))?.ok === true,
      {
        what: 'the quiet server',
      },
    );
    expect((await verify(`http://127.0.0.1:${port}`, KEYS[0]!)).status).toBe(200);
    quietServer.child.kill('SIGTERM');
    const quiet = { exit: await quietServer.exited };
    expect(quiet.exit.code).toBe(EXIT.ok);
    expect(quiet.exit.stdout).toBe('');
    const pretty = start(['serve', '--port', '0', '--no-dns', '--no-console', '--log-format', 'pretty'], {
      env: { MAILVET_API_KEYS: KEYS[0]! },
    });
    await outputMatch(pretty.child, /listening on/, { what: 'serve' });
    pretty.child.kill('SIGTERM');
    const exit = await pretty.exited;
    expect(exit.code).toBe(EXIT.ok);
    expect(exit.stdout).toMatch(/INFO.*mailvet API listening on http/);
    expect(exit.stdout).not.toMatch(/^\{/m);
  }, 60_000);
});
