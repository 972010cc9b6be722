import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import type { VerificationResult } from '../../src/result.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { runCli } from './support.js';

const zone: Zone = {
  'good.test': { mx: [{ priority: 10, exchange: 'mx.good.test' }] },
  'mx.good.test': { a: ['127.0.0.2'] },
  'nomail.test': {},
};

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let network: string[];

beforeAll(async () => {
  dns = await startDnsServer(zone);
  smtp = await startSmtpServer({ host: '127.0.0.2', mailboxes: { alice: 'ok', bob: 'ok', full: 'full' } });
  network = [
    '--dns',
    dns.address,
    '--smtp-port',
    String(smtp.port),
    '--allow-address',
    '127.0.0.0/8',
    '--allow-tld',
    'test',
    '--helo',
    'cli.test',
    '--timeout',
    '5',
  ];
});

afterAll(async () => {
  await Promise.all([dns?.close(), smtp?.close()]);
});

function json(stdout: string): VerificationResult[] {
  return JSON.parse(stdout) as VerificationResult[];
}

describe('mailvet verify offline', () => {
  it('prints a readable summary per address, in order, and exits 1 when one is not valid', async () => {
    const run = await runCli(['verify', '--no-dns', 'someone@example.com', 'not-an-address']);
    expect(run.code).toBe(EXIT.notValid);
    const blocks = run.stdout.trimEnd().split('\n\n');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(
      /^someone@example\.com {2}unknown {2}score \d+\n {2}sub_status {2}smtp_not_checked\n {2}flags {7}.+\n {2}suggestion {2}.+\n {2}mx {10}-$/,
    );
    expect(blocks[1]).toMatch(/^not-an-address {2}invalid {2}score 0\n {2}sub_status {2}failed_syntax_check/);
    expect(run.stderr).toBe('');
  });

  it('prints the same results as JSON with --json', async () => {
    const addresses = ['someone@example.com', 'Jane.Doe@gmial.com', 'info@example.org'];
    const run = await runCli(['verify', '--no-dns', '--json', ...addresses]);
    const results = json(run.stdout);
    expect(results.map((result) => result.email)).toEqual(addresses);
    expect(results.every((result) => result.sub_status !== null && typeof result.score === 'number')).toBe(
      true,
    );
    // The human summary shows each result's suggestion and flags as the JSON has them.
    const human = await runCli(['verify', '--no-dns', ...addresses]);
    for (const result of results) {
      expect(human.stdout).toContain(`  suggestion  ${result.did_you_mean ?? '-'}\n`);
      const flags = (['disposable', 'role', 'free', 'accept_all'] as const).filter((flag) => result[flag]);
      expect(human.stdout).toContain(`  flags       ${flags.length === 0 ? '-' : flags.join(', ')}\n`);
    }
  });

  it('colours only on a terminal, and not with NO_COLOR', async () => {
    const tty = await runCli(['verify', '--no-dns', 'bad@@x'], { stdoutIsTTY: true });
    expect(tty.stdout).toContain('\u001b[31minvalid\u001b[0m');
    const noColour = await runCli(['verify', '--no-dns', 'bad@@x'], {
      stdoutIsTTY: true,
      env: { NO_COLOR: '1' },
    });
    expect(noColour.stdout).not.toContain('\u001b[');
    const pipe = await runCli(['verify', '--no-dns', 'bad@@x']);
    expect(pipe.stdout).not.toContain('\u001b[');
  });

  it('handles unicode, oversized and hostile input as results, never a crash', async () => {
    const huge = `${'a'.repeat(100_000)}@example.com`;
    const hostile = 'evil@example.com\r\nRCPT TO:<x@y>\u001b[2J';
    const run = await runCli(['verify', '--no-dns', '--json', 'josé@exämple.test', huge, hostile, ''], {
      env: { MAILVET_ALLOW_TLD: 'test' },
    });
    const results = json(run.stdout);
    expect(results).toHaveLength(4);
    expect(results[0]).toMatchObject({ email: 'josé@exämple.test', domain: 'xn--exmple-cua.test' });
    expect(results[1]?.status).toBe('invalid');
    expect(results[2]?.status).toBe('invalid');
    expect(results[3]?.status).toBe('invalid');
    const human = await runCli(['verify', '--no-dns', hostile]);
    expect(human.stdout).not.toContain('\u001b');
    expect(human.stdout).toContain('\\x0d\\x0a');
  });

  it('needs at least one address', async () => {
    const run = await runCli(['verify', '--no-dns']);
    expect(run).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: 'mailvet: verify needs at least one address; see mailvet verify --help\n',
    });
  });

  it('stops with exit 130 when interrupted', async () => {
    const run = await runCli(['verify', '--no-dns', 'a@example.com'], { signal: AbortSignal.abort() });
    expect(run.code).toBe(EXIT.interrupted);
    expect(run.stderr).toMatch(/^mailvet: interrupted after \d of 1 addresses\n$/);
  });
});

describe('mailvet verify against loopback DNS and SMTP', () => {
  it('exits 0 when every address is valid, and shows the MX it used', async () => {
    const run = await runCli(['verify', ...network, 'alice@good.test', 'bob@good.test']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toMatch(/^alice@good\.test {2}valid {2}score \d+\n/);
    expect(run.stdout).toContain('  mx          mx.good.test\n');
    expect(smtp.rcpts()).toContain('alice@good.test');
  });

  it('exits 1 with a mailbox that does not exist or a domain with no mail', async () => {
    const run = await runCli([
      'verify',
      '--json',
      ...network,
      'alice@good.test',
      'nobody@good.test',
      'x@nomail.test',
    ]);
    expect(run.code).toBe(EXIT.notValid);
    expect(json(run.stdout).map((result) => [result.status, result.sub_status])).toEqual([
      ['valid', null],
      ['invalid', 'mailbox_not_found'],
      ['invalid', 'no_dns_entries'],
    ]);
  });

  it('takes the same settings from MAILVET_* variables', async () => {
    const env = {
      MAILVET_DNS: dns.address,
      MAILVET_SMTP_PORT: String(smtp.port),
      MAILVET_ALLOW_ADDRESS: '127.0.0.0/8',
      MAILVET_ALLOW_TLD: 'test',
      MAILVET_HELO: 'cli.test',
    };
    const run = await runCli(['verify', '--json', 'full@good.test'], { env });
    expect(json(run.stdout)[0]).toMatchObject({ status: 'invalid', sub_status: 'mailbox_quota_exceeded' });
    const noSmtp = await runCli(['verify', '--json', 'full@good.test'], {
      env: { ...env, MAILVET_NO_SMTP: '1' },
    });
    expect(json(noSmtp.stdout)[0]).toMatchObject({
      status: 'unknown',
      sub_status: 'smtp_not_checked',
      mx_record: 'mx.good.test',
    });
  });

  it('prints the SMTP dialogue with --trace', async () => {
    const run = await runCli(['verify', '--trace', ...network, 'alice@good.test']);
    expect(run.stdout).toMatch(/ {2}smtp {8}.*\n/);
    expect(run.stdout).toContain('RCPT TO:<alice@good.test>');
  });

  it('passes the flags to the verifier as options', async () => {
    let seen: Parameters<typeof createVerifier>[0];
    const flags = [
      '--dns',
      dns.address,
      '--allow-tld',
      'test',
      '--no-smtp',
      '--concurrency',
      '3',
      '--timeout',
      '0.5',
    ];
    await runCli(['verify', ...flags, '--from', 'probe@cli.test', 'a@good.test'], {
      createVerifier: (options) => {
        seen = options;
        return createVerifier(options);
      },
    });
    expect(seen).toMatchObject({
      smtp: false,
      dns: true,
      concurrency: 3,
      timeoutMs: 500,
      mailFrom: 'probe@cli.test',
    });
    expect(typeof seen?.resolver?.mx).toBe('function');
  });
});
