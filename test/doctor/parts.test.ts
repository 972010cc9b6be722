import { describe, expect, it } from 'vitest';
import { renderDiagnostics } from '../../src/cli/doctor-render.js';
import { createStyle } from '../../src/cli/style.js';
import { reverseName } from '../../src/dns/reverse.js';
import { queryBlocklist } from '../../src/doctor/blocklists.js';
import { makeCheck, oneLine } from '../../src/doctor/check.js';
import { echoedAddress } from '../../src/doctor/egress.js';
import { probePort25 } from '../../src/doctor/port25.js';
import { type DiagnosticsReport, verdictOf } from '../../src/doctor/types.js';
import { SmtpError } from '../../src/errors.js';
import type { Transport } from '../../src/smtp/types.js';
import { scriptedTransport } from '../../src/testing/scripted-channel.js';
import { staticResolver } from '../../src/testing/static-resolver.js';

describe('echoedAddress', () => {
  it.each([
    ['mx.google.com at your service, [203.0.113.7]', '203.0.113.7'],
    ['BL0PR01.outlook.com Hello [203.0.113.7]', '203.0.113.7'],
    ['mx.example Hello client (203.0.113.7)', '203.0.113.7'],
    ['mx.example Hello [IPv6:2001:db8::7]', '2001:db8::7'],
    ['mx.example [not-an-ip] then [198.51.100.1]', '198.51.100.1'],
  ])('reads %j', (text, address) => {
    expect(echoedAddress(text)).toBe(address);
  });

  it.each([
    'mx.example ESMTP',
    'mx.example Hello 203.0.113.7',
    'mx.example [999.1.1.1]',
    'mx.example [010.0.0.1]',
    `[${'1'.repeat(5000)}]`,
    `${'x'.repeat(2000)} [203.0.113.7]`,
  ])('finds nothing in %j', (text) => {
    expect(echoedAddress(text)).toBeNull();
  });
});

describe('reverseName', () => {
  it('reverses IPv4 octets and IPv6 nibbles, and refuses anything else', () => {
    expect(reverseName('203.0.113.7')).toBe('7.113.0.203.in-addr.arpa');
    expect(reverseName('2001:db8::1')).toBe(`1.${'0.'.repeat(23)}8.b.d.0.1.0.0.2.ip6.arpa`);
    expect(reverseName('::ffff:192.0.2.1')).toMatch(/^1\.0\.2\.0\.0\.0\.0\.c\.f\.f\.f\.f\./);
    for (const bad of ['', 'example.com', '1.2.3', '1.2.3.4.5', '[::1]', 'fe80::1%eth0']) {
      expect(reverseName(bad)).toBeNull();
    }
  });
});

describe('queryBlocklist', () => {
  const zone = {
    '7.113.0.203.bl.test': {
      a: ['127.0.0.2', '127.0.0.4'],
      txt: ['spam\u0000source\r\nsee https://bl.test'],
    },
    '8.113.0.203.bl.test': { a: ['198.51.100.99'] },
    '9.113.0.203.bl.test': { a: ['127.255.255.254'] },
    '10.113.0.203.bl.test': { fail: 'servfail' as const },
  };

  it('reads a listing with its codes and a cleaned TXT reason', async () => {
    const answer = await queryBlocklist(staticResolver(zone), '203.0.113.7', 'bl.test');
    expect(answer).toMatchObject({ outcome: 'listed', codes: ['127.0.0.2', '127.0.0.4'] });
    expect(answer.reason).toBe('spam source  see https://bl.test');
  });

  it('tells clear, refused, rewritten and failed lookups apart', async () => {
    const resolver = staticResolver(zone);
    expect((await queryBlocklist(resolver, '203.0.113.1', 'bl.test')).outcome).toBe('clear');
    expect((await queryBlocklist(resolver, '203.0.113.8', 'bl.test')).problem).toContain(
      'outside 127.0.0.0/8',
    );
    expect((await queryBlocklist(resolver, '203.0.113.9', 'bl.test')).outcome).toBe('refused');
    expect((await queryBlocklist(resolver, '203.0.113.10', 'bl.test')).outcome).toBe('error');
    expect((await queryBlocklist(resolver, 'nonsense', 'bl.test')).outcome).toBe('error');
  });
});

describe('probePort25', () => {
  const base = { heloHost: 'probe.example', connectTimeoutMs: 50, replyTimeoutMs: 50, now: Date.now };
  const target = { host: '192.0.2.25', port: 25 };

  function failing(error: SmtpError): Transport {
    return { connect: () => Promise.reject(error) };
  }

  it('reads the banner and the first line of the EHLO reply, and sends only EHLO and QUIT', async () => {
    const written: string[] = [];
    const transport = scriptedTransport(() => ({
      greeting: ['220-mx.test first line', '220 mx.test ESMTP'],
      respond(command) {
        written.push(command);
        return command.startsWith('EHLO') ? ['250-mx.test Hello [198.51.100.4]', '250 8BITMIME'] : '221 bye';
      },
    }));
    const probe = await probePort25(target, { ...base, transport });
    expect(probe).toMatchObject({
      outcome: 'banner',
      banner: 'mx.test first line mx.test ESMTP',
      ehlo: 'mx.test Hello [198.51.100.4]',
    });
    expect(written).toEqual(['EHLO probe.example', 'QUIT']);
    expect(probe.transcript[0]).toBe('S: 220-mx.test first line');
  });

  it('tells a refused connect, a connect timeout, a tarpit, a 554 banner and a failed EHLO apart', async () => {
    const refused = new SmtpError('connection', 'cannot connect to 192.0.2.25:25: ECONNREFUSED', {
      cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
    });
    const timeout = new SmtpError('connection', 'cannot connect to 192.0.2.25:25: no answer within 50 ms');
    expect((await probePort25(target, { ...base, transport: failing(refused) })).outcome).toBe('refused');
    expect((await probePort25(target, { ...base, transport: failing(timeout) })).outcome).toBe(
      'connect_timeout',
    );
    const tarpit = scriptedTransport(() => ({ greeting: null }));
    expect((await probePort25(target, { ...base, transport: tarpit })).outcome).toBe('banner_timeout');
    const rejecting = scriptedTransport(() => ({ greeting: '554 5.7.1 your address is listed' }));
    const rejected = await probePort25(target, { ...base, transport: rejecting });
    expect(rejected).toMatchObject({ outcome: 'rejected', banner: '5.7.1 your address is listed' });
    const mute = scriptedTransport(() => ({ respond: () => undefined }));
    expect((await probePort25(target, { ...base, transport: mute })).outcome).toBe('ehlo_failed');
  });
});

describe('checks and rendering', () => {
  it('keeps evidence on one bounded line and drops advice on a pass', () => {
    expect(oneLine('a\r\nb\u0000c\u2028d')).toBe('a b c d');
    expect(oneLine('x'.repeat(1000)).length).toBe(401);
    expect(makeCheck('dns', 'pass', 'ok', 'never shown').advice).toBeNull();
    expect(makeCheck('dns', 'fail', 'bad', 'do this').advice).toBe('do this');
  });

  it('takes the worst status as the verdict; a skipped readiness check with advice makes it incomplete', () => {
    expect(verdictOf([{ status: 'pass' }, { status: 'skipped' }])).toBe('pass');
    expect(verdictOf([{ status: 'pass' }, { status: 'warn' }, { status: 'skipped' }])).toBe('warn');
    expect(verdictOf([{ status: 'warn' }, { status: 'fail' }])).toBe('fail');
    const noIp = makeCheck('spf', 'skipped', 'no egress address', 'Pass --ip with the public address.');
    expect(verdictOf([{ status: 'pass' }, noIp])).toBe('incomplete');
    expect(verdictOf([{ status: 'warn' }, noIp])).toBe('incomplete');
    expect(verdictOf([{ status: 'fail' }, noIp])).toBe('fail');
    // A skip with nothing to do is a choice (--no-blocklists), and a proxy check is not about readiness.
    expect(verdictOf([makeCheck('blocklists', 'skipped', 'no blocklists configured', null)])).toBe('pass');
    expect(verdictOf([makeCheck('proxy', 'skipped', 'no proxy', 'Set one.')])).toBe('pass');
  });

  it('names the checks that could not run and what lets them run in an incomplete verdict', () => {
    const advice = 'Pass --ip with the public address of this host.';
    const report: DiagnosticsReport = {
      verdict: 'incomplete',
      checks: [
        makeCheck('dns', 'pass', 'MX of gmail.com: a', null),
        makeCheck('reverse_dns', 'skipped', 'no egress address', advice),
        makeCheck('spf', 'skipped', 'no egress address', advice),
        makeCheck('blocklists', 'skipped', 'no egress address', advice),
      ],
      egress_ip: null,
      helo_host: 'h.example',
      mail_from: 'v@h.example',
      probe_domain: 'gmail.com',
      started_at: '2026-01-01T00:00:00.000Z',
      duration_ms: 12,
    };
    expect(renderDiagnostics(report, createStyle(false)).split('\n').at(-2)).toBe(
      `Verdict: INCOMPLETE (1 passed, 0 warned, 0 failed, 3 skipped; 12 ms): readiness is not known: Reverse DNS, SPF and Blocklists could not run. ${advice}`,
    );
  });

  it('renders one line per check, the advice under it, and the verdict', () => {
    const report: DiagnosticsReport = {
      verdict: 'fail',
      checks: [
        makeCheck('dns', 'pass', 'MX of gmail.com: a, b', null),
        makeCheck('port25', 'fail', 'the connection was refused', 'Open port 25.'),
      ],
      egress_ip: null,
      helo_host: 'h.example',
      mail_from: 'v@h.example',
      probe_domain: 'gmail.com',
      started_at: '2026-01-01T00:00:00.000Z',
      duration_ms: 12,
    };
    expect(renderDiagnostics(report, createStyle(false)).split('\n')).toEqual([
      'mailvet doctor: probe gmail.com, EHLO h.example, MAIL FROM v@h.example',
      '',
      '[ok  ] DNS      MX of gmail.com: a, b',
      '[FAIL] Port 25  the connection was refused',
      '       -> Open port 25.',
      '',
      'Verdict: FAIL (1 passed, 0 warned, 1 failed, 0 skipped; 12 ms): fix the failed checks first: until then, verifications from this host end mostly unknown.',
      '',
    ]);
  });
});
