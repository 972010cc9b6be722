/**
 * Webhooks of stored API keys, as users run them: `mailvet keys create --webhook-secret` and `mailvet keys
 * webhook-secret` (spawned) give a key its `whsec_` secret; a spawned `mailvet serve` on PGlite (--data) and on
 * PostgreSQL (--store) signs the deliveries of that key's jobs with it, checked by a loopback receiver with the
 * `standardwebhooks` package; a key without a secret gets the error keys of MAILVET_API_KEYS get; the secret
 * survives a restart; a rotation signs with both secrets during its grace; a removal stops webhooks; a fleet job
 * (serve --redis --work) is signed the same way.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, PGLITE_OPEN_MS, POSTGRES_URL, testSchema } from '../support/databases.js';
import { deferred } from '../support/deferred.js';
import { run, start } from '../support/mailvet-bin.js';
import { pgliteDataDir } from '../support/pglite-template.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { outputMatch } from '../support/wait-for.js';
import { type Received, receiver } from '../webhooks/support.js';
import { runCli, tempDir } from './support.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

const KEY = /^mv_([0-9A-Za-z]{8})_[0-9A-Za-z_-]{43}$/;
const WHSEC = /^whsec_[A-Za-z0-9+/]{43}=$/;

/** `mailvet keys ...` (spawned): succeeds; answers its standard output's lines and its standard error. */
async function keys(args: string[]): Promise<{ lines: string[]; stderr: string }> {
  const exit = await run(['keys', ...args]);
  expect(exit.code, exit.stderr).toBe(EXIT.ok);
  return { lines: exit.stdout.split('\n').filter((line) => line !== ''), stderr: exit.stderr };
}

/** Creates a key (with `--webhook-secret` when `withSecret`); answers the key, its id and its secret. */
async function createKey(store: string[], name: string, withSecret: boolean) {
  const { lines, stderr } = await keys([
    'create',
    ...store,
    '--name',
    name,
    '--scopes',
    'bulk:read,bulk:write',
    ...(withSecret ? ['--webhook-secret'] : []),
  ]);
  expect(lines).toHaveLength(withSecret ? 2 : 1);
  const [key = '', secret] = lines;
  expect(key).toMatch(KEY);
  if (withSecret) expect(secret).toMatch(WHSEC);
  expect(stderr).not.toContain(key);
  if (secret !== undefined) expect(stderr).not.toContain(secret);
  return { key, id: KEY.exec(key)![1]!, secret };
}

/** `mailvet keys webhook-secret <name> ...`: answers the new secret printed alone on standard output. */
async function newSecret(store: string[], name: string, extra: string[] = []): Promise<string> {
  const { lines, stderr } = await keys(['webhook-secret', ...store, name, ...extra]);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(WHSEC);
  expect(stderr).not.toContain(lines[0]);
  return lines[0]!;
}

/** A spawned `mailvet serve` on `store` that lets webhooks reach 127.0.0.1 over http:. */
async function serve(store: string[], env: Record<string, string> = {}) {
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
      ...store,
    ],
    { env },
  );
  const { match } = await outputMatch(server.child, /listening on (http:\/\/\S+?)[\s"]/, { what: 'serve' });
  return {
    url: match[1]!,
    async stop() {
      server.child.kill('SIGTERM');
      const exit = await server.exited;
      expect(exit.code, exit.stderr).toBe(EXIT.ok);
      return exit.stdout + exit.stderr;
    },
  };
}

/** A loopback receiver; `next()` resolves with the next request it gets (verified against `secret`). */
async function hook(secret: string) {
  const arrivals: ((received: Received) => void)[] = [];
  const started = await receiver(secret, (_req, res, index) => {
    res.writeHead(204).end();
    arrivals.shift()?.(started.received[index]!);
  });
  return {
    ...started,
    url: `http://127.0.0.1:${started.port}/hook`,
    next() {
      const arrival = deferred<Received>();
      arrivals.push(arrival.resolve);
      return arrival.promise;
    },
  };
}

function createJob(url: string, key: string, webhook: unknown) {
  return fetch(`${url}/v1/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ emails: ['someone@example.com'], webhook }),
  });
}

/** Creates a job with a webhook to `receiver` and answers the delivery of its `bulk.completed`. */
async function delivered(url: string, key: string, target: Awaited<ReturnType<typeof hook>>) {
  const arrival = target.next();
  const created = await createJob(url, key, { url: target.url });
  expect(created.status, await created.clone().text()).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const received = await arrival;
  expect(JSON.parse(received.body)).toMatchObject({ type: 'bulk.completed', data: { id } });
  return received;
}

/** Whether `received` verifies with `secret` (the `standardwebhooks` package, as receivers check it). */
function signedBy(received: Received, secret: string): boolean {
  try {
    new Webhook(secret).verify(received.body, received.headers);
    return true;
  } catch {
    return false;
  }
}

/** The refusal of a webhook on a key without a secret: the one keys of MAILVET_API_KEYS get. */
async function expectNotConfigured(response: Response): Promise<void> {
  expect(response.status).toBe(400);
  expect(await response.json()).toMatchObject({
    error: { code: 'invalid_request', message: 'webhooks are not configured for this API key' },
  });
}

describe('webhooks of stored keys on PGlite (--data), across restarts', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  beforeAll(async () => {
    dir = await tempDir('mailvet-keys-webhooks-');
  });
  afterAll(async () => dir.remove());

  it(
    "signs with the key's secret, refuses a key without one as env keys are, and keeps both after a restart and a rotation",
    async () => {
      const store = ['--data', await pgliteDataDir(dir.file('data'))]; // initdb done: not a first start's test
      const signed = await createKey(store, 'signed-app', true);
      const plain = await createKey(store, 'plain-app', false);
      const receiverOfSigned = await hook(signed.secret!);
      const outputs: string[] = [];
      try {
        let server = await serve(store, { MAILVET_API_KEYS: 'env-key-without-secret' });
        try {
          const first = await delivered(server.url, signed.key, receiverOfSigned);
          expect(first.verified).toBe(true);
          await expectNotConfigured(await createJob(server.url, plain.key, { url: receiverOfSigned.url }));
          await expectNotConfigured(
            await createJob(server.url, 'env-key-without-secret', { url: receiverOfSigned.url }),
          );
          // Without a webhook, a key without a secret creates jobs as before.
          expect((await createJob(server.url, plain.key, undefined)).status).toBe(201);
        } finally {
          outputs.push(await server.stop());
        }

        // While the server is stopped (PGlite: one process per directory): rotate one secret, set the other.
        const rotated = await newSecret(store, 'signed-app', ['--rotate', '--grace', '1h']);
        expect(rotated).not.toBe(signed.secret);
        const plainSecret = await newSecret(store, plain.id);
        const listed = JSON.parse((await run(['keys', 'list', ...store, '--json'])).stdout) as {
          name: string;
          webhook_secret: string;
        }[];
        expect(listed.map((entry) => [entry.name, entry.webhook_secret])).toEqual([
          ['signed-app', 'rotating'],
          ['plain-app', 'set'],
        ]);

        server = await serve(store);
        try {
          // During the grace each delivery carries a signature by each secret: receivers switch at their pace.
          const during = await delivered(server.url, signed.key, receiverOfSigned);
          expect(signedBy(during, rotated)).toBe(true);
          expect(signedBy(during, signed.secret!)).toBe(true);
          expect(during.headers['webhook-signature']?.split(' ')).toHaveLength(2);
          const receiverOfPlain = await hook(plainSecret);
          try {
            const fresh = await delivered(server.url, plain.key, receiverOfPlain);
            expect(fresh.verified).toBe(true);
            expect(signedBy(fresh, rotated)).toBe(false); // each key signs with its own secret
          } finally {
            await receiverOfPlain.close();
          }
        } finally {
          outputs.push(await server.stop());
        }
      } finally {
        await receiverOfSigned.close();
      }
      for (const output of outputs) {
        for (const secret of [signed.secret!, signed.secret!.slice(6), signed.key, plain.key]) {
          expect(output).not.toContain(secret);
        }
      }
    },
    PGLITE_OPEN_MS * 3,
  );

  it(
    'refuses bad webhook-secret calls with usage errors that say what to do',
    async () => {
      // Checked before the store opens: no database start.
      const early: [string[], RegExp][] = [
        [['webhook-secret', 'a', '--rotate'], /--rotate needs --grace <duration>/],
        [['webhook-secret', 'a', '--grace', '1h'], /--grace applies to keys webhook-secret with --rotate/],
        [['webhook-secret', 'a', '--remove', '--rotate'], /--remove cannot be combined/],
        [['webhook-secret'], /keys webhook-secret takes one key id or name, got 0/],
        [['list', '--rotate'], /--rotate does not apply to keys list/],
        [['rotate', 'a', '--grace', '1h', '--webhook-secret'], /--webhook-secret does not apply/],
      ];
      for (const [args, message] of early) {
        const exit = await runCli(['keys', ...args, '--data', dir.file('never-opened')]);
        expect(exit.code, args.join(' ')).toBe(EXIT.usage);
        expect(exit.stdout).toBe('');
        expect(exit.stderr).toMatch(message);
      }
      const store = ['--data', await pgliteDataDir(dir.file('usage'))];
      await createKey(store, 'has-secret', true);
      await createKey(store, 'no-secret', false);
      const cases: [string[], RegExp][] = [
        [['has-secret'], /has a webhook secret already: --rotate --grace <duration>/],
        [['no-secret', '--rotate', '--grace', '1h'], /has no webhook secret to rotate/],
        [['no-secret', '--remove'], /has no webhook secret\n$/],
        [['nobody'], /no API key "nobody" in this store/],
      ];
      for (const [args, message] of cases) {
        const exit = await run(['keys', 'webhook-secret', ...store, ...args]);
        expect(exit.code, args.join(' ')).toBe(EXIT.usage);
        expect(exit.stdout).toBe('');
        expect(exit.stderr).toMatch(message);
      }
      const removed = await keys(['webhook-secret', ...store, 'has-secret', '--remove']);
      expect(removed.lines).toEqual([]);
      expect(removed.stderr).toMatch(/^mailvet: removed the webhook secret of API key "has-secret"/);
      const table = await run(['keys', 'list', ...store]);
      expect(table.stdout).toMatch(/\nhas-secret +\S+ +\S+ +- +- +- +/);
    },
    PGLITE_OPEN_MS * 2,
  );
});

describe.skipIf(POSTGRES_URL === undefined)(
  'webhooks of stored keys on PostgreSQL (--store), serve running',
  () => {
    const schema = testSchema();
    const store = () => {
      const parsed = new URL(POSTGRES_URL!);
      parsed.searchParams.set('schema', schema);
      return ['--store', parsed.toString()];
    };
    afterAll(async () => dropPostgresSchema(schema));

    it('a secret set, rotated and removed while serve runs takes effect on the next job', async () => {
      const made = await createKey(store(), 'live-app', false);
      const server = await serve(store());
      const receivers: Awaited<ReturnType<typeof hook>>[] = [];
      try {
        await expectNotConfigured(await createJob(server.url, made.key, { url: 'http://127.0.0.1:9/hook' }));
        const first = await newSecret(store(), 'live-app');
        const target = await hook(first);
        receivers.push(target);
        expect((await delivered(server.url, made.key, target)).verified).toBe(true);

        // A rotation without grace: the old secret signs no more, at once (secrets are read for every attempt).
        const second = await newSecret(store(), made.id, ['--rotate', '--grace', '0s']);
        const after = await delivered(server.url, made.key, target);
        expect(after.verified).toBe(false);
        expect(signedBy(after, second)).toBe(true);
        expect(after.headers['webhook-signature']?.split(' ')).toHaveLength(1);

        await keys(['webhook-secret', ...store(), 'live-app', '--remove']);
        await expectNotConfigured(await createJob(server.url, made.key, { url: target.url }));
      } finally {
        const output = await server.stop();
        for (const target of receivers) await target.close();
        expect(output).not.toContain('whsec_');
        expect(output).not.toContain(made.key);
      }
    }, 90_000);

    it.skipIf(REDIS_URL === undefined)(
      "signs a fleet job's webhook with the stored key's secret (serve --redis --work)",
      async () => {
        const made = await createKey(store(), 'fleet-app', true);
        const prefix = testPrefix();
        const server = await serve([...store(), '--redis', REDIS_URL!, '--prefix', prefix, '--work']);
        const target = await hook(made.secret!);
        try {
          expect((await delivered(server.url, made.key, target)).verified).toBe(true);
        } finally {
          const output = await server.stop();
          await target.close();
          await deletePrefix(prefix);
          expect(output).not.toContain(made.secret!);
        }
      },
      90_000,
    );
  },
);
