import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { runCli } from '../cli/support.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let dir: string;

beforeAll(async () => {
  smtp = await startSmtpServer({ host: '127.0.0.2', mailboxes: { ann: 'ok', bob: 'ok' } });
  dns = await startDnsServer({
    'serve.test': { mx: [{ priority: 10, exchange: 'mx.serve.test' }] },
    'mx.serve.test': { a: ['127.0.0.2'] },
  });
  dir = await mkdtemp(join(tmpdir(), 'mailvet-known-'));
});

afterAll(async () => {
  await smtp?.close();
  await dns?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

/** Starts `mailvet serve` in process; resolves once it prints where it listens. */
async function serve(argv: string[]) {
  const controller = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let printed = '';
  let errors = '';
  stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const listening = new Promise<string>((resolve) => {
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
      if (url) resolve(url);
    });
  });
  const exited = main(
    [
      'serve',
      '--port',
      '0',
      '--dns',
      dns.address,
      '--smtp-port',
      String(smtp.port),
      '--allow-address',
      '127.0.0.0/8',
      '--allow-tld',
      'test',
      ...argv,
    ],
    {
      stdin: new PassThrough(),
      stdout,
      stderr,
      env: { MAILVET_API_KEYS: 'key-a,key-b' },
      signal: controller.signal,
    },
  );
  const url = await Promise.race([
    listening,
    exited.then((code) => Promise.reject(new Error(`exited ${code}: ${errors}`))),
  ]);
  const verify = async (query: string, key = 'key-a') => {
    const response = await fetch(`${url}/v1/verify?${query}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    verify,
    async stop() {
      controller.abort();
      expect(await exited).toBe(EXIT.ok);
    },
  };
}

const asked = (address: string) => smtp.rcpts().filter((rcpt) => rcpt === address).length;

describe('mailvet serve with known results', () => {
  it("answers a key's repeated verification from the durable store (--data), asks again with fresh=true, never across keys", async () => {
    const server = await serve(['--data', join(dir, 'data')]);
    try {
      const first = await server.verify('email=ann@serve.test');
      expect(first.body).toMatchObject({ status: 'valid', checked_at: expect.any(String) });
      const again = await server.verify('email=ann@serve.test');
      expect(asked('ann@serve.test')).toBe(1);
      expect(again.body).toEqual(first.body);
      await server.verify('email=ann@serve.test', 'key-b');
      expect(asked('ann@serve.test')).toBe(2);
      const fresh = await server.verify('email=ann@serve.test&fresh=true');
      expect(asked('ann@serve.test')).toBe(3);
      expect(fresh.body.checked_at).not.toBe(first.body.checked_at);
      expect((await server.verify('email=ann@serve.test&fresh=maybe')).status).toBe(400);
    } finally {
      await server.stop();
    }
    // Kept in the store: a restarted server still knows ann's verdict.
    const restarted = await serve(['--data', join(dir, 'data')]);
    try {
      await restarted.verify('email=ann@serve.test');
      expect(asked('ann@serve.test')).toBe(3);
    } finally {
      await restarted.stop();
    }
  }, 120_000);

  it('asks every time with --no-known-results, and keeps results in memory with --known-results-ttl', async () => {
    const off = await serve(['--data', join(dir, 'data'), '--no-known-results']);
    try {
      await off.verify('email=bob@serve.test');
      const response = await off.verify('email=bob@serve.test');
      expect(asked('bob@serve.test')).toBe(2);
      expect('checked_at' in response.body).toBe(false);
    } finally {
      await off.stop();
    }
    const memory = await serve(['--known-results-ttl', 'valid=1h']);
    try {
      await memory.verify('email=bob@serve.test');
      await memory.verify('email=bob@serve.test');
      expect(asked('bob@serve.test')).toBe(3);
    } finally {
      await memory.stop();
    }
  }, 120_000);

  it.each([
    [['--known-results-ttl', 'valid=-1d'], /--known-results-ttl must be status=time pairs/],
    [['--known-results-ttl', 'valid=91d'], /valid must be at most 90d/],
    [['--known-results-ttl', 'valid=999999999d'], /valid must be at most 90d/],
    [['--known-results-ttl', 'bogus=1d'], /must be status=time pairs/],
    [['--known-results-ttl', 'valid=7x'], /must be status=time pairs/],
    [['--known-results-ttl', 'valid=1d,valid=2d'], /names valid twice/],
    [['--known-results-ttl', 'välid=1d'], /must be status=time pairs/],
    [['--known-results-ttl', ''], /must be status=time pairs/],
    [['--known-results-ttl', 'valid=1d', '--no-known-results'], /cannot be used together/],
  ])('refuses serve %j with a usage error', async (flags, message) => {
    const run = await runCli(['serve', '--port', '0', ...flags], { env: { MAILVET_API_KEYS: 'k' } });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(message);
  });
});
