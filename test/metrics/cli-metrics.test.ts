/**
 * The metrics flags of `mailvet serve` and `mailvet worker`: bad values are usage errors (exit 2), a port that
 * cannot be had is exit 3 naming it; a running serve (the built bin) answers `GET /metrics` on its own listener
 * and, with `--metrics`, on the API port behind a key, and `promtool check metrics` accepts what it serves.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../cli/support.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { BIN } from '../support/mailvet-bin.js';
import { outputMatch, waitFor } from '../support/wait-for.js';

const KEY = 'metrics-test-key';
const ENV = { MAILVET_API_KEYS: KEY };
const spawned = new Set<ReturnType<typeof spawn>>();

afterEach(() => {
  for (const child of spawned)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  spawned.clear();
});

/** Exit 2 with `message` on stderr. */
async function usage(argv: string[], message: RegExp, env: Record<string, string> = ENV) {
  const run = await runCli(argv, { env });
  expect(run.stderr).toMatch(message);
  expect(run.code).toBe(2);
}

describe('the metrics flags: bad input', () => {
  it.each([
    ['abc', /--metrics-port must be an integer 0-65535, got "abc"/],
    ['70000', /--metrics-port must be an integer 0-65535/],
    ['-1', /--metrics-port must be an integer 0-65535/],
    ['٣٠٠٠', /--metrics-port must be an integer 0-65535/], // Arabic-Indic digits
    ['9'.repeat(10_000), /--metrics-port must be an integer 0-65535, got "9{60}\.\.\."/],
  ])('serve and worker --metrics-port %j', async (port, message) => {
    await usage(['serve', '--metrics-port', port], message);
    await usage(
      ['worker', '--redis', 'redis://x', '--store', 'postgres://x/y', '--metrics-port', port],
      message,
    );
  });

  it.each([
    ['ünïcödé.example', /--metrics-host must be an IP address or a host name, got "ünïcödé\.example"/],
    ['a'.repeat(300), /--metrics-host must be an IP address or a host name/],
    ['127.0.0.1\nx', /--metrics-host must be an IP address or a host name/],
    ['', /--metrics-host must be an IP address or a host name/],
  ])('serve --metrics-host %j', async (host, message) => {
    await usage(['serve', '--metrics-port', '0', '--metrics-host', host], message);
  });

  it('--metrics-host without --metrics-port', async () => {
    await usage(['serve', '--metrics-host', '127.0.0.1'], /--metrics-host applies to --metrics-port only/);
  });

  it('--metrics without API keys', async () => {
    await usage(['serve', '--metrics'], /serve needs API keys/, {});
  });

  it('MAILVET_METRICS that is not a switch, and --metrics on a worker', async () => {
    await usage(['serve'], /MAILVET_METRICS must be 1\/true\/yes or 0\/false\/no, got "maybe"/, {
      ...ENV,
      MAILVET_METRICS: 'maybe',
    });
    await usage(['worker', '--metrics'], /--metrics/);
  });
});

describe('the metrics listener: a port that cannot be had', () => {
  let blocker: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => blocker?.close(resolve) ?? resolve(undefined));
    blocker = undefined;
  });

  it('a port in use is exit 3 naming it, and the API listener is closed again', async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    const run = await runCli(['serve', '--port', '0', '--no-console', '--metrics-port', String(port)], {
      env: ENV,
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toBe(
      `mailvet: cannot listen for metrics on 127.0.0.1:${port}: the address is in use\n`,
    );
  });

  it('an address that is not this host is exit 3', async () => {
    const run = await runCli(
      ['serve', '--port', '0', '--no-console', '--metrics-port', '0', '--metrics-host', '192.0.2.1'],
      { env: ENV },
    );
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/cannot listen for metrics on 192\.0\.2\.1:0: no such local address/);
  });
});

describe('a running serve with --metrics-port and --metrics', () => {
  beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);

  it('serves the series on its listener and to API keys on the API port; promtool accepts them', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'serve', '--port', '0', '--no-console', '--no-dns', '--metrics', '--metrics-port', '0'],
      { env: { PATH: process.env.PATH ?? '', ...ENV }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    spawned.add(child);
    const { match } = await outputMatch(
      child,
      /listening on (http:[^\s"]+)[^\n]*\n[^\n]*mailvet metrics on (http:[^\s"]+)/,
    );
    const [api, listener] = [match[1]!, match[2]!];
    expect(listener).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);

    const verified = await fetch(`${api}/v1/verify?email=${encodeURIComponent('jane@example.com')}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(verified.status).toBe(200);
    await verified.text();

    const scrape = async () => {
      const response = await fetch(listener);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      return response.text();
    };
    // The request record is told after the response: wait for it to be counted.
    const text = await waitFor(async () => {
      const body = await scrape();
      return (
        /mailvet_http_requests_total\{method="GET",route="\/v1\/verify",status="200"\} 1/.test(body) && body
      );
    });
    expect(text).toMatch(
      /^mailvet_verifications_total\{status="unknown",sub_status="[a-z_]+",provider="other"\} 1$/m,
    );
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(text).not.toContain('jane');
    expect(text).not.toContain('example.com');
    expect(text).not.toContain(KEY);

    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(promtool.error).toBeUndefined();
    expect(`${promtool.stdout}${promtool.stderr}`).toBe('');
    expect(promtool.status).toBe(0);

    // On the API port: a key is needed.
    expect((await fetch(`${api}/metrics`)).status).toBe(401);
    const wrongKey = await fetch(`${api}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrongKey.status).toBe(401);
    const onApi = await fetch(`${api}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(onApi.status).toBe(200);
    expect(await onApi.text()).toMatch(
      /^mailvet_http_requests_total\{method="GET",route="\/metrics",status="401"\} 2$/m,
    );

    // The listener answers /metrics only.
    const other = await fetch(listener.replace(/\/metrics$/, '/v1/verify'));
    expect(other.status).toBe(404);
    const post = await fetch(listener, { method: 'POST' });
    expect(post.status).toBe(405);

    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    // The listener is gone with the process.
    await expect(fetch(listener)).rejects.toThrow();
  });

  it('without --metrics, GET /metrics on the API port is 404 even with a key', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--no-console', '--no-dns'], {
      env: { PATH: process.env.PATH ?? '', ...ENV },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    spawned.add(child);
    const { match } = await outputMatch(child, /listening on (http:[^\s"]+)/);
    const response = await fetch(`${match[1]}/metrics`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(response.status).toBe(404);
    child.kill('SIGTERM');
  });
});
