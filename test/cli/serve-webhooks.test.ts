/**
 * Webhooks of a spawned `mailvet serve`: per-key secrets from --webhook-secrets-file, the webhook guard's flags,
 * refusals that name the flag and never an internal address, a coarse delivery log.
 */
import { chmod, writeFile } from 'node:fs/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { WEBHOOK_UNREACHABLE } from '../../src/webhooks/notifier.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { deferred } from '../support/deferred.js';
import { startDnsServer } from '../support/dns-server.js';
import { freePort } from '../support/free-port.js';
import { run, start } from '../support/mailvet-bin.js';
import { receiver } from '../webhooks/support.js';
import { tempDir } from './support.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

const SECRET_A = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const SECRET_B = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-serve-webhooks-');
});
afterAll(async () => {
  await dir.remove();
});

/** The log lines (JSON, on standard output) printed so far. */
function logLines(stdout: string): { level: string; msg: string }[] {
  return stdout
    .split('\n')
    .filter((line) => line.startsWith('{') && line.endsWith('}'))
    .map((line) => JSON.parse(line) as { level: string; msg: string });
}

/** Starts a spawned server; resolves with its URL, a way to wait for a log message, and stop(). */
async function serve(args: string[], env: Record<string, string>) {
  const server = start(['serve', '--port', '0', ...args], { env });
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const listening = deferred<string>();
  server.child.stdout.on('data', () => {
    const url = /listening on (http:\/\/\S+)/.exec(server.stdout())?.[1];
    if (url !== undefined) listening.resolve(url);
    for (const wait of [...waiting]) {
      const line = logLines(server.stdout()).find((each) => wait.pattern.test(each.msg));
      if (line !== undefined) {
        waiting.splice(waiting.indexOf(wait), 1);
        wait.resolve(line.msg);
      }
    }
  });
  void server.exited.then((exit) => listening.reject(new Error(`exited ${exit.code}: ${exit.stderr}`)));
  const url = await listening.promise;
  return {
    url,
    /** The messages of the `warn` lines logged so far. */
    warnings: () => logLines(server.stdout()).flatMap((line) => (line.level === 'warn' ? [line.msg] : [])),
    line(pattern: RegExp): Promise<string> {
      const found = logLines(server.stdout()).find((each) => pattern.test(each.msg));
      if (found !== undefined) return Promise.resolve(found.msg);
      const line = deferred<string>();
      waiting.push({ pattern, resolve: line.resolve });
      return line.promise;
    },
    async stop() {
      server.child.kill('SIGTERM');
      return server.exited;
    },
  };
}

/** A loopback receiver that checks signatures with `secret`; `next()` resolves with the next request. */
async function hook(secret: string) {
  const arrivals: ((index: number) => void)[] = [];
  const started = await receiver(secret, (_req, res, index) => {
    res.writeHead(204).end();
    arrivals.shift()?.(index);
  });
  return {
    ...started,
    url: `http://127.0.0.1:${started.port}/hook`,
    next: () => new Promise<number>((resolve) => arrivals.push(resolve)).then((i) => started.received[i]!),
  };
}

function createJob(url: string, key: string, webhook: unknown) {
  return fetch(`${url}/v1/bulk`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ emails: ['someone@example.com'], webhook }),
  });
}

describe('mailvet serve webhooks (spawned)', () => {
  it("signs each key's webhooks with its own secret from --webhook-secrets-file: tenant A cannot sign for B", async () => {
    const file = dir.file('secrets');
    await writeFile(file, `# tenant secrets\nkey-a ${SECRET_A}\n\nkey-b ${SECRET_B}\n`);
    await chmod(file, 0o600);
    const hookB = await hook(SECRET_B);
    const server = await serve(
      [
        '--no-dns',
        '--webhook-secrets-file',
        file,
        '--webhook-allow-address',
        '127.0.0.1/32',
        '--allow-http-webhooks',
      ],
      { MAILVET_API_KEYS: 'key-a,key-b' },
    );
    try {
      const fromB = hookB.next();
      expect((await createJob(server.url, 'key-b', { url: hookB.url })).status).toBe(201);
      const genuine = await fromB;
      expect(genuine.verified).toBe(true);
      expect(() => new Webhook(SECRET_A).verify(genuine.body, genuine.headers)).toThrow();

      // Tenant A points its job's webhook at B's receiver: B's receiver refuses what A's secret signed.
      const fromA = hookB.next();
      expect((await createJob(server.url, 'key-a', { url: hookB.url })).status).toBe(201);
      const forged = await fromA;
      expect(forged.verified).toBe(false);
      expect(() => new Webhook(SECRET_A).verify(forged.body, forged.headers)).not.toThrow();
      expect(server.warnings()).toEqual([]);

      // A receiver that is not there: the tenant's log says so in general terms, the server's log says how.
      const closed = await freePort();
      const created = await createJob(server.url, 'key-a', { url: `http://127.0.0.1:${closed}/hook` });
      const { id } = (await created.json()) as { id: string };
      await server.line(
        new RegExp(`webhook \\(job ${id}\\): connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}`),
      );
      const log = await fetch(`${server.url}/v1/bulk/${id}/webhooks`, {
        headers: { authorization: 'Bearer key-a' },
      });
      const { deliveries } = (await log.json()) as { deliveries: { error: string }[] };
      expect(deliveries[0]?.error).toBe(WEBHOOK_UNREACHABLE);
    } finally {
      expect((await server.stop()).code).toBe(EXIT.ok);
      await hookB.close();
    }
  }, 60_000);

  it('refuses an internal name naming the flag, never the address it resolves to, and warns of a shared secret', async () => {
    const dns = await startDnsServer({ 'intranet.corp.test': { a: ['10.20.30.40'] } });
    const server = await serve(['--dns', dns.address], {
      MAILVET_API_KEYS: 'key-a,key-b',
      MAILVET_WEBHOOK_SECRETS: SECRET_A,
    });
    try {
      const refused = await createJob(server.url, 'key-a', { url: 'https://intranet.corp.test/hook' });
      expect(refused.status).toBe(422);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error).toEqual({
        code: 'webhook_refused',
        message:
          "the webhook host intranet.corp.test is not publicly routable; the server's operator can open its range with --webhook-allow-address",
      });
      expect(await server.line(/webhook: the webhook host intranet\.corp\.test resolves to/)).toBe(
        'webhook: the webhook host intranet.corp.test resolves to 10.20.30.40 (10.0.0.0/8 private use)',
      );
      const http = await createJob(server.url, 'key-b', { url: 'http://hooks.example/hook' });
      expect(http.status).toBe(422);
      expect(((await http.json()) as { error: { message: string } }).error.message).toContain(
        'can accept http: with --allow-http-webhooks',
      );
      expect(
        server
          .warnings()
          .some((msg) => msg.startsWith('MAILVET_WEBHOOK_SECRETS signs the webhooks of 2 API keys alike')),
      ).toBe(true);
    } finally {
      expect((await server.stop()).code).toBe(EXIT.ok);
      await dns.close();
    }
  }, 60_000);

  it('refuses webhook flags without secrets, and a secrets file with a foreign key or a shared secret', async () => {
    const env = { MAILVET_API_KEYS: 'key-a,key-b' };
    expect(await run(['serve', '--port', '0', '--webhook-allow-address', '10.0.0.0/8'], { env })).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr:
        'mailvet: --webhook-allow-address applies only with webhooks on (MAILVET_WEBHOOK_SECRETS, --webhook-secrets-file, or keys in a job store: --data or --store)\n',
    });
    const file = dir.file('shared');
    await writeFile(file, `key-a ${SECRET_A}\nkey-b ${SECRET_A}\n`);
    const shared = await run(['serve', '--port', '0', '--webhook-secrets-file', file], { env });
    expect(shared.code).toBe(EXIT.usage);
    expect(shared.stderr).toBe(
      'mailvet: --webhook-secrets-file line 2 repeats a secret of line 1: each API key needs its own\n',
    );
    await writeFile(file, `key-z ${SECRET_A}\n`);
    const foreign = await run(['serve', '--port', '0', '--webhook-secrets-file', file], { env });
    expect(foreign.stderr).toBe(
      'mailvet: --webhook-secrets-file line 1: the key is not one of MAILVET_API_KEYS\n',
    );
    const missing = await run(['serve', '--port', '0', '--webhook-secrets-file', dir.file('nope')], { env });
    expect(missing).toMatchObject({
      code: EXIT.io,
      stderr: `mailvet: cannot read ${dir.file('nope')}: no such file\n`,
    });
  }, 60_000);
});
