import { describe, expect, it } from 'vitest';
import { heloWarning } from '../../src/cli/helo.js';
import { EXIT } from '../../src/cli/io.js';
import { runCli } from './support.js';

const smtpOn = { smtp: true, heloHost: undefined } as Parameters<typeof heloWarning>[0];

describe('heloWarning', () => {
  it.each([
    ['vm', undefined],
    ['localhost', undefined],
    ['box.local', undefined],
    ['ip-10-0-0-7.ec2.internal', undefined],
    ['router.lan', undefined],
    ['', undefined],
    ['bad name!', undefined], // not a host name: the default becomes localhost.localdomain
    [undefined, 'mx'],
    [undefined, 'box.localdomain'],
  ])('warns for the host name %j / --helo %j', (host, helo) => {
    const warning = heloWarning({ ...smtpOn, heloHost: helo }, () => host ?? 'vm');
    expect(warning).toMatch(
      /^mailvet: warning: the EHLO name ".*" \(.*\) is not a fully qualified domain name;/,
    );
    expect(warning).toContain('--helo');
    expect(warning?.endsWith('\n')).toBe(true);
  });

  it.each([
    ['worker-7.example.net', undefined],
    ['vm', 'mx-check.example.net'],
    ['vm', 'MX.Example.NET.'],
    ['vm', 'check.mailvet.test'],
  ])('says nothing for the host name %j / --helo %j', (host, helo) => {
    expect(heloWarning({ ...smtpOn, heloHost: helo }, () => host)).toBeUndefined();
  });

  it('says nothing when SMTP is off', () => {
    expect(heloWarning({ ...smtpOn, smtp: false }, () => 'vm')).toBeUndefined();
  });

  it('names a hostile --helo safely quoted', () => {
    const warning = heloWarning({ ...smtpOn, heloHost: 'a\u202eb\u0000' }, () => 'vm') ?? '';
    expect(warning).toContain('"a\u202eb\\u0000"');
  });
});

describe('the warning in the CLI', () => {
  it('is printed once on standard error by verify when SMTP is on, and not with --no-smtp', async () => {
    const run = await runCli(['verify', 'not-an-address'], { hostname: () => 'vm' });
    expect(run.code).toBe(EXIT.notValid);
    expect(run.stderr.match(/warning: the EHLO name "vm" \(this machine's host name\)/g)).toHaveLength(1);
    const quiet = await runCli(['verify', '--no-smtp', 'not-an-address'], { hostname: () => 'vm' });
    expect(quiet.stderr).toBe('');
  });
});
