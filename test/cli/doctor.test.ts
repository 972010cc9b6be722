import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { diagnose } from '../../src/doctor/diagnose.js';
import type { DiagnoseOptions } from '../../src/doctor/options.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { run as spawnCli } from '../support/mailvet-bin.js';
import { type RawServerHarness, startRawServer } from '../support/raw-server.js';
import { runCli } from './support.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

/** The egress address the fake MX echoes: only DNS questions about it go out, to the loopback DNS server. */
const PUBLIC = '93.184.215.14';

let dns: DnsTestServer;
let mx: RawServerHarness;
let quiet: RawServerHarness;

/** A fake MX on 127.0.0.2 that echoes `echo` as the client address in its EHLO reply (none: no echo). */
function fakeMx(echo: string | null) {
  return startRawServer({
    host: '127.0.0.2',
    script: async (peer) => {
      await peer.write('220 mx.probe.test ESMTP\r\n');
      for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
        const hello = echo === null ? 'mx.probe.test' : `mx.probe.test Hello [${echo}]`;
        if (/^EHLO /i.test(line)) await peer.write(`250-${hello}\r\n250 8BITMIME\r\n`);
        else if (/^QUIT/i.test(line)) return void (await peer.write('221 bye\r\n'));
        else await peer.write('502 no\r\n');
      }
    },
  });
}

beforeAll(async () => {
  dns = await startDnsServer({
    'probe.test': { mx: [{ priority: 10, exchange: 'mx.probe.test' }] },
    'mx.probe.test': { a: ['127.0.0.2'] },
    'refused.test': { mx: [{ priority: 10, exchange: 'mx.refused.test' }] },
    'mx.refused.test': { a: ['127.0.0.6'] },
    '1.0.0.127.in-addr.arpa': { ptr: ['mail.sender.test'] },
    '14.215.184.93.in-addr.arpa': { ptr: ['mail.sender.test'] },
    'mail.sender.test': { a: ['127.0.0.1', PUBLIC] },
    'sender.test': {
      mx: [{ priority: 10, exchange: 'mail.sender.test' }],
      txt: [`v=spf1 ip4:127.0.0.0/8 ip4:${PUBLIC} -all`],
    },
    'bl.test': {},
  });
  mx = await fakeMx(PUBLIC);
  quiet = await fakeMx(null);
});

afterAll(async () => {
  await Promise.all([dns.close(), mx.close(), quiet.close()]);
});

/** Runs `mailvet doctor`, its SMTP connections bound to 127.0.0.1 (the address the zone's PTR describes). */
function doctor(args: string[], env: Record<string, string> = {}) {
  return runCli(['doctor', ...args], {
    env,
    diagnose: (options: DiagnoseOptions) =>
      diagnose({
        ...options,
        ...(options.proxy === undefined ? { transport: tcpTransport({ localAddress: '127.0.0.1' }) } : {}),
      }),
  });
}

function world(port = mx.port, probe = 'probe.test'): string[] {
  return [
    '--dns',
    dns.address,
    '--smtp-port',
    String(port),
    '--probe-domain',
    probe,
    '--helo',
    'mail.sender.test',
    '--from',
    'verify@sender.test',
    '--allow-address',
    '127.0.0.0/8',
    '--allow-tld',
    'test',
    '--blocklist',
    'bl.test',
    '--timeout',
    '5',
  ];
}

describe('mailvet doctor', () => {
  it('prints a checklist, one line per check, and a passing verdict with exit code 0', async () => {
    const run = await doctor(world());
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    for (const title of [
      'DNS',
      'SOCKS proxy',
      'Port 25',
      'Egress address',
      'Reverse DNS',
      'HELO name',
      'SPF',
      'MAIL FROM domain',
      'Blocklists',
    ]) {
      expect(lines.filter((line) => line.includes(`] ${title} `)).length, title).toBe(1);
    }
    expect(run.stdout).toContain('[ok  ] Reverse DNS');
    expect(run.stdout).toMatch(/Verdict: PASS \(8 passed, 0 warned, 0 failed, 1 skipped; \d+ ms\)/);
  });

  it('gives the report as JSON with --json', async () => {
    const run = await doctor([...world(), '--json']);
    const report = JSON.parse(run.stdout);
    expect(report.verdict).toBe('pass');
    expect(report.egress_ip).toBe(PUBLIC);
    expect(report.checks.map((check: { name: string }) => check.name)).toEqual([
      'dns',
      'proxy',
      'port25',
      'egress',
      'reverse_dns',
      'helo',
      'spf',
      'sender_domain',
      'blocklists',
    ]);
  });

  it('exits 1 with the advice under the failed check when port 25 is refused', async () => {
    const closed = await startRawServer({ host: '127.0.0.6', script: async () => {} });
    const port = closed.port;
    await closed.close();
    const run = await doctor([...world(port, 'refused.test'), '--ip', '127.0.0.1']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /\[FAIL\] Port 25 +the connection to mx\.refused\.test \[127\.0\.0\.6\]:\d+ was refused/,
    );
    expect(run.stdout).toContain('-> Outbound port 25 is blocked');
    expect(run.stdout).toContain('Verdict: FAIL');
  });

  it('says INCOMPLETE and exits 1 when the checks that decide readiness cannot run, naming --ip (spawned)', async () => {
    const run = await spawnCli(['doctor', ...world(quiet.port)]);
    expect(run.stderr).toBe('');
    expect(run.stdout).toMatch(/\[skip\] Egress address +the mail server did not echo the client address/);
    expect(run.stdout).toMatch(
      /Verdict: INCOMPLETE \(3 passed, 0 warned, 0 failed, 6 skipped; \d+ ms\): readiness is not known: Reverse DNS, HELO name, SPF and Blocklists could not run\. Pass --ip with the public address of this host/,
    );
    expect(run.code).toBe(1);
  });

  it('warns of a loopback --ip even inside --allow-address, and exits 0 (spawned)', async () => {
    const run = await spawnCli(['doctor', ...world(quiet.port), '--ip', '127.0.0.1']);
    expect(run.stdout).toContain(
      '[warn] Egress address    127.0.0.1 (given with --ip) is not a public address',
    );
    expect(run.stdout).toMatch(/Verdict: WARN \(7 passed, 1 warned, 0 failed, 1 skipped/);
    expect(run.code).toBe(0);
  });

  it('reads the shared settings from MAILVET_* variables', async () => {
    const run = await doctor(
      ['--probe-domain', 'probe.test', '--json', '--blocklist', 'bl.test', '--allow-tld', 'test'],
      {
        MAILVET_DNS: dns.address,
        MAILVET_SMTP_PORT: String(mx.port),
        MAILVET_HELO: 'other.sender.test',
        MAILVET_FROM: 'verify@sender.test',
        MAILVET_ALLOW_ADDRESS: '127.0.0.0/8',
      },
    );
    const report = JSON.parse(run.stdout);
    expect(report.helo_host).toBe('other.sender.test');
    expect(report.checks.find((check: { name: string }) => check.name === 'helo').status).toBe('warn');
    expect(run.code).toBe(0);
  });

  it('prints help with exit code 0 and is listed in the main help', async () => {
    const run = await doctor(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: mailvet doctor');
    expect(run.stdout).toContain('--probe-domain');
    expect((await runCli(['--help'])).stdout).toContain('doctor');
  });

  it.each<[string, string[]]>([
    ['--timeout', ['--timeout', 'abc']],
    ['--timeout', ['--timeout', '0']],
    ['--timeout', ['--timeout', '99999999999']],
    ['--timeout', ['--timeout', '５']],
    ['--dns', ['--dns', 'not-an-ip']],
    ['--dns', ['--dns', '127.0.0.1:99999']],
    ['--smtp-port', ['--smtp-port', '70000']],
    ['--smtp-port', ['--smtp-port', '２５']],
    ['--helo', ['--helo', 'bad host']],
    ['--helo', ['--helo', 'exämple.com']],
    ['--helo', ['--helo', `${'a'.repeat(300)}.com`]],
    ['--from', ['--from', 'no-at-sign']],
    ['--from', ['--from', 'a@b.test\rRCPT TO:<x@y.test>']],
    ['--from', ['--from', `${'a'.repeat(300)}@example.com`]],
    ['--proxy', ['--proxy', 'http://127.0.0.1:8080']],
    ['--proxy', ['--proxy', 'socks5://ü:@127.0.0.1']],
    ['--allow-address', ['--allow-address', '10.0.0.0/99']],
    ['--allow-tld', ['--allow-tld', 'tëst']],
    ['--probe-domain', ['--probe-domain', 'exämple.com']],
    ['--probe-domain', ['--probe-domain', `${'a'.repeat(64)}.com`]],
    ['--probe-domain', ['--probe-domain', 'a\u0000b.com']],
    ['--ip', ['--ip', '1.2.3']],
    ['--ip', ['--ip', '２.２.２.２']],
    ['--ip', ['--ip', 'x'.repeat(5000)]],
    ['--blocklist', ['--blocklist', 'not a zone']],
    ['--blocklist', ['--blocklist', 'bl.test', '--no-blocklists']],
    ['--json', ['--json=yes']],
    ['--bogus', ['--bogus']],
    ['no arguments', ['extra-argument']],
  ])('refuses bad input (%#: %s) with exit code 2 and a one-line error naming it', async (named, args) => {
    const run = await doctor(args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr.startsWith('mailvet: ')).toBe(true);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(named);
    expect(run.stderr.length).toBeLessThan(400);
  });
});
