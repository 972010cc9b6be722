/**
 * `mailvet keys` against PGlite (--data) and PostgreSQL (--store): create, list, use through `mailvet serve`,
 * revoke, rotate; bad input is a usage error before any store opens; the built bin prints the key alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, PGLITE_OPEN_MS, POSTGRES_URL, testSchema } from '../support/databases.js';
import { start } from '../support/mailvet-bin.js';
import { waitFor } from '../support/wait-for.js';
import { runCli, serveInProcess, tempDir } from './support.js';

const KEY = /^mv_([0-9A-Za-z]{8})_[0-9A-Za-z_-]{43}\n$/;

async function call(
  url: string,
  key: string,
  path = '/v1/verify?email=someone@example.com',
): Promise<number> {
  const response = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  await response.body?.cancel();
  return response.status;
}

/** `mailvet keys create` succeeds and prints only the key; returns it and its id. */
async function create(store: string[], name: string, scopes: string, extra: string[] = []) {
  const run = await runCli(['keys', 'create', ...store, '--name', name, '--scopes', scopes, ...extra]);
  expect(run.code, run.stderr).toBe(EXIT.ok);
  expect(run.stdout).toMatch(KEY);
  expect(run.stderr).toContain(`created API key "${name}"`);
  expect(run.stderr).not.toContain(run.stdout.trim());
  return { key: run.stdout.trim(), id: KEY.exec(run.stdout)![1]! };
}

describe('mailvet keys: bad input', () => {
  it.each([
    [
      ['keys'],
      /^mailvet: keys needs a subcommand: create, list, revoke, rotate or webhook-secret \(got none\)/,
    ],
    [['keys', 'delete', '--data', 'x'], /^mailvet: keys needs a subcommand.*\(got "delete"\)/],
    [['keys', 'list'], /^mailvet: keys live in the job store: give --data <dir> or --store/],
    [
      ['keys', 'create', '--data', 'x', '--name', 'a', '--scopes', 'verify,bulk:wirte'],
      /did you mean bulk:write\?/,
    ],
    [
      ['keys', 'create', '--data', 'x', '--name', 'a', '--scopes', 'verify', '--rate', '20'],
      /^mailvet: --rate must be/,
    ],
    [
      ['keys', 'create', '--data', 'x', '--name', 'a', '--scopes', 'verify', '--quota', 'lots'],
      /^mailvet: --quota must be/,
    ],
    [
      ['keys', 'create', '--data', 'x', '--name', 'café', '--scopes', 'verify'],
      /^mailvet: --name must be 1-64/,
    ],
    [
      ['keys', 'create', '--data', 'x', '--name', 'n'.repeat(200), '--scopes', 'verify'],
      /^mailvet: --name must be 1-64 .*\.\.\."\n$/,
    ],
    [['keys', 'create', '--data', 'x', '--scopes', 'verify'], /^mailvet: keys create needs --name/],
    [['keys', 'list', '--data', 'x', '--grace', '1h'], /^mailvet: --grace does not apply to keys list/],
    [['keys', 'rotate', 'abc', '--data', 'x'], /^mailvet: keys rotate needs --grace/],
    [['keys', 'rotate', 'abc', '--data', 'x', '--grace', 'forever'], /^mailvet: --grace must be/],
    [['keys', 'revoke', '--data', 'x'], /^mailvet: keys revoke takes one key id or name, got 0/],
    [['keys', 'list', '--data', 'x', '--store', 'postgres://h/db'], /cannot be used together/],
    [['keys', 'list', '--nmae', 'x'], /did you mean --name\?/],
  ])('%j is a usage error', async (argv, message) => {
    const run = await runCli(argv as string[]);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message as RegExp);
  });

  it('prints its help', async () => {
    const run = await runCli(['keys', '--help']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toContain('Usage: mailvet keys <create|list|revoke|rotate|webhook-secret>');
  });
});

describe('mailvet keys on PGlite (--data)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('mailvet-keys-');
  });
  afterAll(async () => dir.remove());

  it(
    'creates, lists, rotates and revokes keys; serve accepts them with their scopes',
    async () => {
      const store = ['--data', dir.file('data')];
      const billing = await create(store, 'billing-app', 'verify,bulk:read,bulk:write', [
        '--rate',
        '20/s',
        '--quota',
        '100000/day',
      ]);
      const reader = await create(store, 'reader', 'bulk:read');
      const doomed = await create(store, 'doomed', 'verify');

      const duplicate = await runCli([
        'keys',
        'create',
        ...store,
        '--name',
        'billing-app',
        '--scopes',
        'verify',
      ]);
      expect(duplicate).toMatchObject({ code: EXIT.usage, stdout: '' });
      expect(duplicate.stderr).toBe(
        'mailvet: a key named "billing-app" exists already (revoke it, or choose another name)\n',
      );
      const unknown = await runCli(['keys', 'revoke', ...store, 'zzzzzzzz']);
      expect(unknown.code).toBe(EXIT.usage);
      expect(unknown.stderr).toMatch(/^mailvet: no API key "zzzzzzzz" in this store/);

      expect((await runCli(['keys', 'revoke', ...store, 'doomed'])).code).toBe(EXIT.ok);
      const rotated = await runCli(['keys', 'rotate', ...store, billing.id, '--grace', '1h']);
      expect(rotated.code).toBe(EXIT.ok);
      expect(rotated.stdout).toMatch(KEY);
      const fresh = rotated.stdout.trim();
      expect(fresh.startsWith(`mv_${billing.id}_`)).toBe(true);
      expect(fresh).not.toBe(billing.key);

      const table = await runCli(['keys', 'list', ...store]);
      expect(table.code).toBe(EXIT.ok);
      const lines = table.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^NAME +KEY +SCOPES +RATE +QUOTA\/DAY +WEBHOOK +CREATED +LAST USED +STATE$/);
      expect(lines[1]).toMatch(
        new RegExp(
          `^billing-app +mv_${billing.id}_… +verify,bulk:read,bulk:write +20/s +100000 .* rotating \\(old key until `,
        ),
      );
      expect(lines.find((line) => line.startsWith('doomed'))).toMatch(/ revoked$/);
      const json = await runCli(['keys', 'list', ...store, '--json']);
      const listed = JSON.parse(json.stdout) as Record<string, unknown>[];
      expect(listed.map((entry) => [entry.name, entry.state])).toEqual([
        ['billing-app', 'rotating'],
        ['reader', 'active'],
        ['doomed', 'revoked'],
      ]);
      expect(listed[0]).toMatchObject({
        id: billing.id,
        prefix: `mv_${billing.id}_`,
        requests_per_second: 20,
        addresses_per_day: 100000,
      });
      for (const output of [table.stdout, json.stdout]) {
        for (const key of [billing.key, fresh, reader.key, doomed.key])
          expect(output).not.toContain(key.slice(12));
        expect(output).not.toMatch(/[0-9a-f]{64}/); // no digest either
      }

      const server = await serveInProcess(['--port', '0', '--no-dns', '--no-smtp', ...store], {});
      try {
        expect(server.output()).toContain('(0 API keys and the stored keys; jobs in');
        expect(await call(server.url, billing.key)).toBe(200); // the old key, within its grace
        expect(await call(server.url, fresh)).toBe(200);
        expect(await call(server.url, doomed.key)).toBe(401);
        expect(await call(server.url, reader.key, '/v1/bulk')).toBe(200);
        const refused = await fetch(`${server.url}/v1/verify?email=someone@example.com`, {
          headers: { authorization: `Bearer ${reader.key}` },
        });
        expect(refused.status).toBe(403);
        expect(await refused.json()).toMatchObject({
          error: { code: 'forbidden', message: expect.stringContaining('verify') },
        });
      } finally {
        server.stop();
        expect(await server.exited).toBe(EXIT.ok);
      }
      const used = JSON.parse((await runCli(['keys', 'list', ...store, '--json'])).stdout) as {
        last_used_at: string | null;
      }[];
      expect(used[0]?.last_used_at).not.toBeNull();
    },
    PGLITE_OPEN_MS * 2,
  );
});

describe.skipIf(POSTGRES_URL === undefined)(
  'mailvet keys on PostgreSQL (--store), with serve running',
  () => {
    const schema = testSchema();
    const url = () => {
      const parsed = new URL(POSTGRES_URL!);
      parsed.searchParams.set('schema', schema);
      return parsed.toString();
    };
    beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);
    afterAll(async () => dropPostgresSchema(schema));

    it('a revocation and a rotation reach two running API nodes without a restart', async () => {
      const store = ['--store', url()];
      const first = await create(store, 'live', 'verify');
      const nodes = [
        await serveInProcess(['--port', '0', '--no-dns', '--no-smtp', ...store], {}),
        await serveInProcess(['--port', '0', '--no-dns', '--no-smtp', ...store], {
          MAILVET_API_KEYS: 'env-key',
        }),
      ];
      try {
        for (const node of nodes) expect(await call(node.url, first.key)).toBe(200);
        expect(await call(nodes[1]!.url, 'env-key')).toBe(200);
        const rotated = await runCli(['keys', 'rotate', ...store, 'live', '--grace', '0s']);
        expect(rotated.code).toBe(EXIT.ok);
        const fresh = rotated.stdout.trim();
        for (const node of nodes) {
          // Sooner than the 5 s of the record cache: a key the cached record does not open has it read again.
          await waitFor(async () => (await call(node.url, fresh)) === 200, {
            what: 'the new key',
            timeoutMs: 3000,
            intervalMs: 250, // each 401 counts against the node's 20 failed authentications a minute
          });
          await waitFor(async () => (await call(node.url, first.key)) === 401, {
            what: 'the old key to stop',
          });
        }
        expect((await runCli(['keys', 'revoke', ...store, first.id])).code).toBe(EXIT.ok);
        for (const node of nodes) {
          await waitFor(async () => (await call(node.url, fresh)) === 401, { what: 'the revocation' });
        }
      } finally {
        for (const node of nodes) node.stop();
        for (const node of nodes) expect(await node.exited).toBe(EXIT.ok);
      }
    });

    it('the built bin prints the new key alone on standard output, and the note on standard error', async () => {
      const run = start(['keys', 'create', '--store', url(), '--name', 'spawned', '--scopes', 'admin']);
      const exit = await run.exited;
      expect(exit.code).toBe(0);
      expect(exit.stdout).toMatch(KEY);
      expect(exit.stderr).toMatch(/^mailvet: created API key "spawned" \(id [0-9A-Za-z]{8}; scopes admin\)/);
      const list = start(['keys', 'list', '--store', url(), '--json']);
      const listed = JSON.parse((await list.exited).stdout) as { name: string; scopes: string[] }[];
      expect(listed.find((entry) => entry.name === 'spawned')?.scopes).toEqual(['admin']);
    });
  },
);
