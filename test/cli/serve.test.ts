import { createServer as createNetServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { startDnsServer } from '../support/dns-server.js';
import { runCli, serveInProcess as serve } from './support.js';

describe('mailvet serve', () => {
  it('serves the API with the keys of MAILVET_API_KEYS, prints where it listens, and stops on the signal', async () => {
    const server = await serve(['--port', '0', '--no-dns'], { MAILVET_API_KEYS: 'key-one,key-two' });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.output()).toContain('(2 API keys; jobs in memory); Ctrl-C stops it"}\n');
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const denied = await fetch(`${server.url}/v1/verify?email=a@example.com`);
    expect(denied.status).toBe(401);
    const verified = await fetch(`${server.url}/v1/verify?email=someone@example.com`, {
      headers: { authorization: 'Bearer key-two' },
    });
    expect(verified.status).toBe(200);
    expect(await verified.json()).toMatchObject({
      email: 'someone@example.com',
      status: 'unknown',
      sub_status: 'smtp_not_checked',
    });
    server.stop();
    expect(await server.exited).toBe(EXIT.ok);
    expect(server.output()).toMatch(/"msg":"mailvet API stopped"}\n$/);
    await expect(fetch(`${server.url}/healthz`)).rejects.toThrow();
  });

  it('serves GET /v1/diagnostics only with --diagnostics (or MAILVET_DIAGNOSTICS=1), with its DNS settings', async () => {
    const dns = await startDnsServer({ 'probe.test': {} });
    try {
      const headers = { authorization: 'Bearer k' };
      const off = await serve(['--port', '0', '--dns', dns.address], { MAILVET_API_KEYS: 'k' });
      expect((await fetch(`${off.url}/v1/diagnostics`, { headers })).status).toBe(404);
      off.stop();
      await off.exited;
      const on = await serve(['--port', '0', '--dns', dns.address, '--helo', 'mail.sender.test'], {
        MAILVET_API_KEYS: 'k',
        MAILVET_DIAGNOSTICS: '1',
      });
      const response = await fetch(`${on.url}/v1/diagnostics`, { headers });
      expect(response.status).toBe(200);
      const report = await response.json();
      expect(report.helo_host).toBe('mail.sender.test');
      // The loopback DNS server knows no gmail.com: the resolver answers, the probe domain has no MX.
      expect(report.checks[0]).toMatchObject({ name: 'dns', status: 'warn' });
      expect(report.checks.find((check: { name: string }) => check.name === 'port25').status).toBe('skipped');
      expect(dns.queryLog.some((query) => query.name === 'gmail.com' && query.type === 'MX')).toBe(true);
      on.stop();
      expect(await on.exited).toBe(EXIT.ok);
    } finally {
      await dns.close();
    }
  });

  it('takes the port and host from MAILVET_PORT and MAILVET_HOST', async () => {
    const server = await serve([], {
      MAILVET_API_KEYS: 'k',
      MAILVET_PORT: '0',
      MAILVET_HOST: '127.0.0.1',
      MAILVET_NO_DNS: '1',
    });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    server.stop();
    expect(await server.exited).toBe(EXIT.ok);
  });

  it('turns on signed webhooks with MAILVET_WEBHOOK_SECRETS, and refuses a bad secret', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const server = await serve(['--port', '0', '--no-dns'], {
      MAILVET_API_KEYS: 'k',
      MAILVET_WEBHOOK_SECRETS: secret,
    });
    const post = (webhook: unknown) =>
      fetch(`${server.url}/v1/bulk`, {
        method: 'POST',
        headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
        body: JSON.stringify({ webhook }),
      });
    const refused = await post({ url: 'https://10.0.0.1/hook' });
    expect(refused.status).toBe(422);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('webhook_refused');
    expect((await post({ url: 'https://10.0.0.1/hook', events: ['nope'] })).status).toBe(400);
    server.stop();
    expect(await server.exited).toBe(EXIT.ok);

    const bad = await runCli(['serve', '--port', '0'], {
      env: { MAILVET_API_KEYS: 'k', MAILVET_WEBHOOK_SECRETS: 'not-a-secret' },
    });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^mailvet: MAILVET_WEBHOOK_SECRETS entry 0 must be whsec_/);
  });

  it('needs API keys, and rejects malformed ones, a bad port, or arguments', async () => {
    expect(await runCli(['serve', '--port', '0'])).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr:
        'mailvet: serve needs API keys: set MAILVET_API_KEYS=key1,key2, or keep keys in a job store (--data or --store, then mailvet keys create)\n',
    });
    const bad = await runCli(['serve', '--port', '0'], { env: { MAILVET_API_KEYS: 'good,has space' } });
    expect(bad.code).toBe(EXIT.usage);
    expect(bad.stderr).toMatch(/^mailvet: MAILVET_API_KEYS must be 1-256 characters/);
    expect((await runCli(['serve', '--port', 'http'], { env: { MAILVET_API_KEYS: 'k' } })).stderr).toBe(
      'mailvet: --port must be an integer 0-65535, got "http"\n',
    );
    expect((await runCli(['serve', 'now'], { env: { MAILVET_API_KEYS: 'k' } })).stderr).toBe(
      'mailvet: serve takes no arguments, got "now"\n',
    );
  });

  it('fails with exit 3 when the port is taken', async () => {
    const blocker = createNetServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      const run = await runCli(['serve', '--port', String(port), '--no-dns'], {
        env: { MAILVET_API_KEYS: 'k' },
      });
      expect(run).toEqual({
        code: EXIT.io,
        stdout: '',
        stderr: `mailvet: cannot listen on 127.0.0.1:${port}: the address is in use\n`,
      });
    } finally {
      blocker.close();
    }
  });
});

describe('mailvet serve --greylist-delays', () => {
  it('sets the greylisting schedule of every job (seconds), and none turns retries off', async () => {
    for (const [value, expected] of [
      ['1,2', [1000, 2000]],
      ['none', []],
    ] as const) {
      const server = await serve(['--port', '0', '--no-dns', '--greylist-delays', value], {
        MAILVET_API_KEYS: 'key-one',
      });
      const created = await fetch(`${server.url}/v1/bulk`, {
        method: 'POST',
        headers: { authorization: 'Bearer key-one', 'content-type': 'application/json' },
        body: '{"auto_start": false}',
      });
      expect(((await created.json()) as { retries: { delays_ms: number[] } }).retries.delays_ms).toEqual(
        expected,
      );
      server.stop();
      expect(await server.exited).toBe(EXIT.ok);
    }
  });

  it('takes MAILVET_GREYLIST_DELAYS, and refuses bad schedules with exit 2', async () => {
    for (const value of ['-1', '1,,2', 'soon', '86401', '1,2,3,4,5,6,7,8,9,10,11', '\u202e1']) {
      const run = await runCli(['serve', '--port', '0', '--greylist-delays', value], {
        env: { MAILVET_API_KEYS: 'k' },
      });
      expect(run.code, value).toBe(EXIT.usage);
      expect(run.stderr).toMatch(
        /^mailvet: --greylist-delays must be none or at most 10 comma-separated delays/,
      );
    }
    const fromEnv = await runCli(['serve', '--port', '0'], {
      env: { MAILVET_API_KEYS: 'k', MAILVET_GREYLIST_DELAYS: 'often' },
    });
    expect(fromEnv.code).toBe(EXIT.usage);
    expect(fromEnv.stderr).toContain('MAILVET_GREYLIST_DELAYS must be none');
  });
});
