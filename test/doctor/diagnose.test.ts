import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import type { Resolver } from '../../src/dns/types.js';
import { diagnose } from '../../src/doctor/diagnose.js';
import type { DiagnoseOptions } from '../../src/doctor/options.js';
import type { CheckName, DiagnosticsReport } from '../../src/doctor/types.js';
import { OptionsError } from '../../src/errors.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import type { Zone } from '../../src/testing/zone.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type RawScript, type RawServerHarness, startRawServer } from '../support/raw-server.js';
import { startSocksServer } from '../support/socks-server.js';

/**
 * A public address for the egress echo: only DNS questions about it go out, to the loopback DNS server (a
 * loopback egress address is a warning, as mail servers on the internet never see one).
 */
const PUBLIC = '93.184.215.14';

/**
 * A mail server that greets, answers EHLO (echoing the client's address when `echo` is true, or the address
 * `echo` names, as a server behind NAT sees the public one), and QUIT.
 */
function probeMx(echo: boolean | string): RawScript {
  return async (peer) => {
    await peer.write('220 mx.probe.test ESMTP ready\r\n');
    for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
      const verb = line.slice(0, 4).toUpperCase();
      if (verb === 'EHLO') {
        const remote = (peer.socket.remoteAddress ?? '').replace(/^::ffff:/, '');
        const client = typeof echo === 'string' ? echo : remote;
        const hello = echo ? `mx.probe.test at your service, [${client}]` : 'mx.probe.test';
        await peer.write(`250-${hello}\r\n250-PIPELINING\r\n250 8BITMIME\r\n`);
      } else if (verb === 'QUIT') {
        await peer.write('221 2.0.0 bye\r\n');
        return;
      } else {
        await peer.write('502 5.5.1 not here\r\n');
      }
    }
  };
}

/** A tarpit: accepts and never greets. */
const tarpit: RawScript = async (peer) => {
  await peer.sleep(10_000);
};

function zoneFor(): Zone {
  return {
    // The probe domains: one MX each, on its own loopback address.
    'probe.test': { mx: [{ priority: 10, exchange: 'mx.probe.test' }] },
    'mx.probe.test': { a: ['127.0.0.2'] },
    'silent.test': { mx: [{ priority: 10, exchange: 'mx.silent.test' }] },
    'mx.silent.test': { a: ['127.0.0.3'] },
    'tarpit.test': { mx: [{ priority: 10, exchange: 'mx.tarpit.test' }] },
    'mx.tarpit.test': { a: ['127.0.0.4'] },
    // Behind the proxy only: the test SOCKS server refuses every non-loopback destination without connecting.
    'faraway.test': { mx: [{ priority: 10, exchange: 'mx.faraway.test' }] },
    'mx.faraway.test': { a: ['192.0.2.25'] },
    'closed.test': { mx: [{ priority: 10, exchange: 'mx.closed.test' }] },
    'mx.closed.test': { a: ['127.0.0.5'] },
    // The sender: PTR and forward records of 127.0.0.1, SPF through include: and ip4: ranges.
    '1.0.0.127.in-addr.arpa': { ptr: ['mail.sender.test'] },
    '14.215.184.93.in-addr.arpa': { ptr: ['mail.sender.test'] },
    'mail.sender.test': { a: ['127.0.0.1', PUBLIC] },
    'sender.test': {
      mx: [{ priority: 10, exchange: 'mail.sender.test' }],
      txt: ['v=spf1 ip4:192.0.2.0/24 include:_spf.sender.test -all', 'site-verification=abc'],
    },
    '_spf.sender.test': { txt: [`v=spf1 ip4:198.51.100.0/24 ip4:127.0.0.0/29 ip4:${PUBLIC} ~all`] },
    'strict.test': {
      mx: [{ priority: 10, exchange: 'mail.sender.test' }],
      txt: ['v=spf1 ip4:192.0.2.0/24 -all'],
    },
    'nullmx.test': { mx: [{ priority: 0, exchange: '.' }], txt: ['v=spf1 ip4:127.0.0.1 -all'] },
    // 127.0.0.10 has a PTR whose name points elsewhere; 127.0.0.9 has none.
    '10.0.0.127.in-addr.arpa': { ptr: ['liar.sender.test'] },
    'liar.sender.test': { a: ['127.0.0.99'] },
    // Blocklists: bl1 lists nothing, bl2 lists 127.0.0.7 with a reason, bl3 refuses (public-resolver code).
    'bl1.test': {},
    '7.0.0.127.bl2.test': {
      a: ['127.0.0.2'],
      txt: ['Listed for spam: see https://bl2.test/lookup?ip=127.0.0.7'],
    },
    '7.0.0.127.in-addr.arpa': { ptr: ['mail.sender.test'] },
    '1.0.0.127.bl3.test': { a: ['127.255.255.254'] },
  };
}

let dns: DnsTestServer;
let resolver: ReturnType<typeof nodeResolver>;
let echoing: RawServerHarness;
let natted: RawServerHarness;
let silent: RawServerHarness;
let slow: RawServerHarness;

beforeAll(async () => {
  dns = await startDnsServer(zoneFor());
  resolver = nodeResolver({ servers: [dns.address], timeoutMs: 500, tries: 1 });
  echoing = await startRawServer({ host: '127.0.0.2', script: probeMx(true) });
  natted = await startRawServer({ host: '127.0.0.2', script: probeMx(PUBLIC) });
  silent = await startRawServer({ host: '127.0.0.3', script: probeMx(false) });
  slow = await startRawServer({ host: '127.0.0.4', script: tarpit });
});

afterAll(async () => {
  resolver.close();
  await Promise.all([dns.close(), echoing.close(), natted.close(), silent.close(), slow.close()]);
});

/** Options for a run against the loopback world; the MX port is the one of `server`. */
function options(server: RawServerHarness, extra: DiagnoseOptions = {}): DiagnoseOptions {
  return {
    resolver,
    transport: tcpTransport({ localAddress: '127.0.0.1' }),
    probeDomain: 'probe.test',
    heloHost: 'mail.sender.test',
    mailFrom: 'verify@sender.test',
    smtpPort: server.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    blocklists: ['bl1.test', 'bl2.test'],
    timeoutMs: 5_000,
    connectTimeoutMs: 1_000,
    replyTimeoutMs: 1_000,
    ...extra,
  };
}

function check(report: DiagnosticsReport, name: CheckName) {
  const found = report.checks.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no ${name} check`);
  return found;
}

function statuses(report: DiagnosticsReport): Record<string, string> {
  return Object.fromEntries(report.checks.map((entry) => [entry.name, entry.status]));
}

describe('diagnose against loopback DNS and SMTP servers', () => {
  it('passes every check on a well set-up host, sending only EHLO and QUIT', async () => {
    const before = natted.received().length;
    const report = await diagnose(options(natted));
    expect(statuses(report)).toEqual({
      dns: 'pass',
      proxy: 'skipped',
      port25: 'pass',
      egress: 'pass',
      reverse_dns: 'pass',
      helo: 'pass',
      spf: 'pass',
      sender_domain: 'pass',
      blocklists: 'pass',
    });
    expect(report.verdict).toBe('pass');
    expect(report.egress_ip).toBe(PUBLIC);
    expect(check(report, 'egress').details).toMatchObject({ source: 'ehlo', echoed: PUBLIC });
    expect(check(report, 'port25').evidence).toContain('220 mx.probe.test ESMTP ready'.slice(4));
    expect(check(report, 'reverse_dns').evidence).toBe(`${PUBLIC} → mail.sender.test → ${PUBLIC}`);
    expect(check(report, 'spf').evidence).toContain('include:_spf.sender.test');
    expect(report.checks.every((entry) => entry.status !== 'pass' || entry.advice === null)).toBe(true);
    const sent = natted.received().slice(before);
    expect(sent).toEqual(['EHLO mail.sender.test', 'QUIT']);
  });

  it('fails port 25 when the connection is refused, and says so', async () => {
    const closed = await startRawServer({ host: '127.0.0.5', script: probeMx(true) });
    const port = closed.port;
    await closed.close();
    const report = await diagnose({ ...options(echoing), probeDomain: 'closed.test', smtpPort: port });
    const port25 = check(report, 'port25');
    expect(port25.status).toBe('fail');
    expect(port25.details).toMatchObject({ outcome: 'refused' });
    expect(port25.evidence).toContain('refused');
    expect(port25.advice).toContain('port 25');
    expect(check(report, 'egress').status).toBe('skipped');
    expect(check(report, 'egress').advice).toContain('--ip');
    expect(report.verdict).toBe('fail');
  });

  it('reports a tarpit (connected, no banner) as a banner timeout within the budget', async () => {
    const report = await diagnose({
      ...options(slow),
      probeDomain: 'tarpit.test',
      replyTimeoutMs: 400,
      timeoutMs: 3_000,
    });
    const port25 = check(report, 'port25');
    expect(port25.status).toBe('fail');
    expect(port25.details).toMatchObject({ outcome: 'banner_timeout' });
    expect(port25.evidence).toContain('no banner within 400 ms');
    expect(report.duration_ms).toBeLessThan(3_000);
  });

  it('skips the address checks, with advice to pass --ip, when the banner does not echo the address: verdict incomplete', async () => {
    const report = await diagnose({ ...options(silent), probeDomain: 'silent.test' });
    expect(check(report, 'port25').status).toBe('pass');
    expect(check(report, 'egress')).toMatchObject({ status: 'skipped' });
    expect(check(report, 'egress').evidence).toContain('did not echo');
    for (const name of ['reverse_dns', 'spf', 'blocklists'] as const) {
      expect(check(report, name).status).toBe('skipped');
    }
    expect(report.egress_ip).toBeNull();
    // Nothing failed or warned, but whether mail servers trust this host is not known.
    expect(report.checks.filter((entry) => entry.status === 'fail' || entry.status === 'warn')).toEqual([]);
    expect(report.verdict).toBe('incomplete');
  });

  it('takes the egress address from ip when given', async () => {
    const report = await diagnose({ ...options(silent), probeDomain: 'silent.test', ip: PUBLIC });
    expect(check(report, 'egress')).toMatchObject({ status: 'pass', details: { source: 'option' } });
    expect(check(report, 'reverse_dns').status).toBe('pass');
    expect(report.verdict).toBe('pass');
  });

  it.each([
    ['loopback', '127.0.0.1'],
    ['private', '10.1.2.3'],
  ])('warns of a %s egress address, also inside allowAddresses', async (_kind, ip) => {
    const report = await diagnose({
      ...options(silent),
      probeDomain: 'silent.test',
      allowAddresses: ['127.0.0.0/8', '10.0.0.0/8'],
      ip,
    });
    expect(check(report, 'egress')).toMatchObject({
      status: 'warn',
      evidence: `${ip} (given with --ip) is not a public address`,
    });
    expect(report.verdict).not.toBe('pass');
  });

  it('fails reverse DNS when the address has no PTR, and skips the HELO comparison', async () => {
    const report = await diagnose({ ...options(silent), probeDomain: 'silent.test', ip: '127.0.0.9' });
    const reverse = check(report, 'reverse_dns');
    expect(reverse).toMatchObject({ status: 'fail', evidence: '127.0.0.9 has no PTR record' });
    expect(reverse.advice).toContain('PTR');
    expect(check(report, 'helo').status).toBe('skipped');
  });

  it('fails reverse DNS when the PTR name does not resolve back to the address', async () => {
    const report = await diagnose({ ...options(silent), probeDomain: 'silent.test', ip: '127.0.0.10' });
    const reverse = check(report, 'reverse_dns');
    expect(reverse.status).toBe('fail');
    expect(reverse.evidence).toContain('liar.sender.test resolves to 127.0.0.99, not back to 127.0.0.10');
    expect(reverse.advice).toContain('A record for liar.sender.test');
  });

  it('warns when the HELO name is not the PTR name', async () => {
    const report = await diagnose({ ...options(echoing), heloHost: 'vm.sender.test' });
    const helo = check(report, 'helo');
    expect(helo.status).toBe('warn');
    expect(helo.evidence).toContain('vm.sender.test does not match the PTR name mail.sender.test');
    expect(helo.advice).toContain('--helo mail.sender.test');
    expect(report.verdict).toBe('warn');
  });

  it('fails SPF when the record ends -all without the address', async () => {
    const report = await diagnose({ ...options(echoing), mailFrom: 'verify@strict.test' });
    const spf = check(report, 'spf');
    expect(spf.status).toBe('fail');
    expect(spf.evidence).toContain('-all matched');
    expect(spf.advice).toContain('ip4:127.0.0.1');
    expect(check(report, 'sender_domain').status).toBe('pass');
  });

  it('fails the MAIL FROM domain check for a null MX', async () => {
    const report = await diagnose({ ...options(echoing), mailFrom: 'verify@nullmx.test' });
    expect(check(report, 'sender_domain')).toMatchObject({ status: 'fail' });
    expect(check(report, 'sender_domain').evidence).toContain('null MX');
    expect(check(report, 'spf').status).toBe('pass');
  });

  it('fails when the address is listed on one blocklist, with its TXT reason', async () => {
    const report = await diagnose({ ...options(silent), probeDomain: 'silent.test', ip: '127.0.0.7' });
    const lists = check(report, 'blocklists');
    expect(lists.status).toBe('fail');
    expect(lists.evidence).toContain(
      'bl2.test (127.0.0.2: Listed for spam: see https://bl2.test/lookup?ip=127.0.0.7)',
    );
    expect(lists.evidence).not.toContain('bl1.test');
    expect(report.verdict).toBe('fail');
  });

  it('warns, not passes, when a list refuses the query', async () => {
    const report = await diagnose({ ...options(echoing), blocklists: ['bl1.test', 'bl3.test'] });
    const lists = check(report, 'blocklists');
    expect(lists.status).toBe('warn');
    expect(lists.evidence).toContain('refused the query (127.255.255.254)');
  });

  it('fails the proxy check when the SOCKS proxy is down, and skips port 25', async () => {
    const socks = await startSocksServer();
    const url = socks.url;
    await socks.close();
    const { transport: _unused, ...rest } = options(echoing);
    const report = await diagnose({ ...rest, proxy: url });
    expect(check(report, 'proxy').status).toBe('fail');
    expect(check(report, 'proxy').evidence).toContain('cannot reach the SOCKS proxy');
    expect(check(report, 'port25').status).toBe('skipped');
    expect(report.verdict).toBe('fail');
  });

  it('passes the proxy check and probes port 25 through a working SOCKS proxy', async () => {
    const socks = await startSocksServer({ auth: { user: 'doc', password: 's3cret' } });
    try {
      const { transport: _unused, ...rest } = options(echoing);
      const report = await diagnose({ ...rest, proxy: socks.url });
      expect(check(report, 'proxy').status).toBe('pass');
      expect(check(report, 'port25').status).toBe('pass');
      expect(socks.destinations()).toEqual([`127.0.0.2:${echoing.port}`]);
      expect(JSON.stringify(report)).not.toContain('s3cret');
    } finally {
      await socks.close();
    }
  });

  it('passes the proxy handshake but fails port 25 when the proxy cannot open the onward connection', async () => {
    const socks = await startSocksServer();
    try {
      const { transport: _unused, ...rest } = options(echoing);
      const report = await diagnose({
        ...rest,
        proxy: socks.url,
        probeDomain: 'faraway.test',
        allowAddresses: ['127.0.0.0/8', '192.0.2.25'],
      });
      expect(check(report, 'proxy').status).toBe('pass');
      expect(check(report, 'proxy').evidence).toContain('could not open the onward connection');
      expect(check(report, 'port25')).toMatchObject({ status: 'fail', details: { outcome: 'proxy' } });
      expect(socks.destinations()).toEqual([`192.0.2.25:${echoing.port}`]);
    } finally {
      await socks.close();
    }
  });

  it('fails the proxy check when the SOCKS credentials are wrong', async () => {
    const socks = await startSocksServer({ auth: { user: 'doc', password: 's3cret' } });
    try {
      const { transport: _unused, ...rest } = options(echoing);
      const report = await diagnose({ ...rest, proxy: socks.url.replace('s3cret', 'wrong') });
      expect(check(report, 'proxy').status).toBe('fail');
      expect(check(report, 'proxy').evidence).toContain('handshake');
      expect(check(report, 'port25').status).toBe('skipped');
    } finally {
      await socks.close();
    }
  });

  it('fails the DNS check when the resolver does not answer', async () => {
    const dead = nodeResolver({ servers: ['127.0.0.1:9'], timeoutMs: 200, tries: 1 });
    try {
      const report = await diagnose({ ...options(echoing), resolver: dead });
      expect(check(report, 'dns').status).toBe('fail');
      expect(check(report, 'port25').status).toBe('skipped');
    } finally {
      dead.close();
    }
  });

  it('skips the checks that need ptr() or txt() with a resolver that lacks them', async () => {
    const older: Resolver = {
      mx: (name, lookup) => resolver.mx(name, lookup),
      addresses: (name, lookup) => resolver.addresses(name, lookup),
    };
    const report = await diagnose({ ...options(echoing), resolver: older });
    expect(check(report, 'reverse_dns')).toMatchObject({
      status: 'skipped',
      evidence: 'the resolver has no ptr() lookup',
    });
    expect(check(report, 'spf')).toMatchObject({
      status: 'skipped',
      evidence: 'the resolver has no txt() lookup',
    });
    expect(check(report, 'blocklists').status).toBe('pass');
  });
});

describe('diagnose options', () => {
  it.each([
    [{ ip: '999.1.1.1' }, 'ip'],
    [{ ip: 'x'.repeat(10_000) }, 'ip'],
    [{ probeDomain: 'exämple.com' }, 'probeDomain'],
    [{ probeDomain: 'localhost' }, 'probeDomain'],
    [{ probeDomain: `${'a'.repeat(300)}.com` }, 'probeDomain'],
    [{ heloHost: 'bad host' }, 'heloHost'],
    [{ mailFrom: 'no-at-sign' }, 'mailFrom'],
    [{ mailFrom: 'a@b.test\r\nRCPT TO:<x@y>' }, 'mailFrom'],
    [{ blocklists: ['bl.test', 'not a zone'] }, 'blocklists'],
    [{ blocklists: Array.from({ length: 21 }, (_, i) => `bl${i}.example`) }, 'blocklists'],
    [{ smtpPort: 0 }, 'smtpPort'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ allowAddresses: ['10.0.0.0/33'] }, 'allowAddresses'],
    [{ proxy: 'socks5://127.0.0.1:1', transport: tcpTransport() }, 'proxy'],
    [{ proxy: 'http://127.0.0.1:8080' }, 'proxy'],
  ] as [DiagnoseOptions, string][])('refuses %j naming the option', async (bad, option) => {
    const error = await diagnose({ resolver, ...bad }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OptionsError);
    expect((error as OptionsError).option).toBe(option);
  });
});
