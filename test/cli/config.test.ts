import { describe, expect, it } from 'vitest';
import { parseArgs } from '../../src/cli/args.js';
import { cidr, dnsServer, readSettings, VERIFY_FLAGS, verifyOptionsOf } from '../../src/cli/config.js';
import { CliError, EXIT } from '../../src/cli/io.js';
import { optionsUsageError } from '../../src/cli/options-error.js';
import { OptionsError } from '../../src/errors.js';
import { DEFAULTS } from '../../src/options.js';

function settings(argv: string[], env: Record<string, string> = {}) {
  return readSettings(parseArgs(argv, VERIFY_FLAGS, 'mailvet verify'), env);
}

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(EXIT.usage);
    return (error as CliError).message;
  }
  throw new Error('expected a usage error');
}

describe('readSettings', () => {
  it('has the documented defaults with no flags and no environment', () => {
    expect(settings([])).toEqual({
      timeoutMs: undefined,
      dnsServers: [],
      smtpPort: undefined,
      heloHost: undefined,
      mailFrom: undefined,
      proxy: undefined,
      allowAddresses: [],
      allowTlds: [],
      smtp: true,
      dns: true,
      concurrency: DEFAULTS.concurrency,
      trace: false,
    });
  });

  it('reads every MAILVET_* variable', () => {
    const read = settings([], {
      MAILVET_TIMEOUT: '2.5',
      MAILVET_DNS: '127.0.0.1:5353, [::1]:53',
      MAILVET_SMTP_PORT: '2525',
      MAILVET_HELO: 'probe.test',
      MAILVET_FROM: 'check@probe.test',
      MAILVET_PROXY: 'socks5://127.0.0.1:1080',
      MAILVET_ALLOW_ADDRESS: '127.0.0.0/8,::1',
      MAILVET_ALLOW_TLD: 'test,.localhost',
      MAILVET_NO_SMTP: 'yes',
      MAILVET_CONCURRENCY: '8',
      MAILVET_TRACE: '1',
    });
    expect(read).toEqual({
      timeoutMs: 2500,
      dnsServers: ['127.0.0.1:5353', '[::1]:53'],
      smtpPort: 2525,
      heloHost: 'probe.test',
      mailFrom: 'check@probe.test',
      proxy: 'socks5://127.0.0.1:1080',
      allowAddresses: ['127.0.0.0/8', '::1'],
      allowTlds: ['test', 'localhost'],
      smtp: false,
      dns: true,
      concurrency: 8,
      trace: true,
    });
  });

  it('lets flags win over the environment, a repeated flag replacing the whole list', () => {
    const read = settings(
      ['--timeout', '3', '--dns', '127.0.0.2', '--dns', '127.0.0.3:53', '--concurrency', '2'],
      {
        MAILVET_TIMEOUT: '9',
        MAILVET_DNS: '127.0.0.9',
        MAILVET_CONCURRENCY: '50',
      },
    );
    expect(read.timeoutMs).toBe(3000);
    expect(read.dnsServers).toEqual(['127.0.0.2', '127.0.0.3:53']);
    expect(read.concurrency).toBe(2);
  });

  it('turns SMTP off with --no-dns, and treats empty variables as unset', () => {
    expect(settings(['--no-dns'])).toMatchObject({ dns: false, smtp: false });
    expect(settings([], { MAILVET_NO_DNS: 'true' })).toMatchObject({ dns: false, smtp: false });
    expect(settings([], { MAILVET_NO_SMTP: '0', MAILVET_TIMEOUT: '' })).toMatchObject({
      smtp: true,
      timeoutMs: undefined,
    });
  });

  it('names the flag or the variable in one line for each malformed value', () => {
    expect(usage(() => settings(['--timeout', '0']))).toMatch(/^--timeout must be a number of seconds/);
    expect(usage(() => settings(['--timeout', '601']))).toMatch(/^--timeout /);
    expect(usage(() => settings(['--timeout', 'ten']))).toContain('"ten"');
    expect(usage(() => settings([], { MAILVET_TIMEOUT: '-1' }))).toMatch(/^MAILVET_TIMEOUT /);
    expect(usage(() => settings(['--smtp-port', '70000']))).toBe(
      '--smtp-port must be an integer 1-65535, got "70000"',
    );
    expect(usage(() => settings(['--smtp-port', '25.5']))).toMatch(/^--smtp-port /);
    expect(usage(() => settings(['--concurrency', '0']))).toMatch(
      /^--concurrency must be an integer 1-10000/,
    );
    expect(usage(() => settings([], { MAILVET_CONCURRENCY: 'lots' }))).toMatch(/^MAILVET_CONCURRENCY /);
    expect(usage(() => settings(['--dns', 'dns.google']))).toMatch(/^--dns must be an IP address/);
    expect(usage(() => settings([], { MAILVET_DNS: '1.2.3.4:99999' }))).toMatch(/^MAILVET_DNS /);
    expect(usage(() => settings(['--allow-address', '10.0.0.0/33']))).toMatch(/^--allow-address /);
    expect(usage(() => settings(['--allow-tld', 'no spaces']))).toMatch(/^--allow-tld /);
    expect(usage(() => settings(['--proxy', 'http://127.0.0.1:8080']))).toMatch(/^--proxy must use socks5:/);
    expect(usage(() => settings([], { MAILVET_NO_SMTP: 'maybe' }))).toBe(
      'MAILVET_NO_SMTP must be 1/true/yes or 0/false/no, got "maybe"',
    );
  });

  it('never repeats a proxy password in an error', () => {
    const message = usage(() => settings(['--proxy', 'socks5://alice:hunter2@127.0.0.1:1080/path']));
    expect(message).not.toContain('hunter2');
  });

  it('bounds the echo of a huge value', () => {
    expect(usage(() => settings(['--timeout', '9'.repeat(100_000)])).length).toBeLessThan(200);
  });
});

describe('dnsServer and cidr', () => {
  it('accept IPv4 and IPv6 with and without a port, in node:dns form', () => {
    expect(dnsServer('--dns', '127.0.0.1')).toBe('127.0.0.1');
    expect(dnsServer('--dns', ' 127.0.0.1:5353 ')).toBe('127.0.0.1:5353');
    expect(dnsServer('--dns', '::1')).toBe('::1');
    expect(dnsServer('--dns', '[::1]')).toBe('::1');
    expect(dnsServer('--dns', '[::1]:5353')).toBe('[::1]:5353');
    expect(cidr('--allow-address', '10.0.0.0/8')).toBe('10.0.0.0/8');
    expect(cidr('--allow-address', 'fd00::/8')).toBe('fd00::/8');
    expect(cidr('--allow-address', '192.0.2.1')).toBe('192.0.2.1');
  });

  it('reject host names, bad ports and bad prefixes', () => {
    for (const bad of ['localhost', '1.2.3.4:0', '1.2.3.4:', '[::1]:x', '1.2.3', '']) {
      expect(usage(() => dnsServer('--dns', bad))).toMatch(/^--dns /);
    }
    for (const bad of ['10.0.0.0/', '10.0.0.0/8/8', 'fd00::/129', 'example.com/8']) {
      expect(usage(() => cidr('--allow-address', bad))).toMatch(/^--allow-address /);
    }
  });
});

describe('verifyOptionsOf', () => {
  it('maps settings to verifier options, with a resolver for --dns and a transport for --proxy', () => {
    const built = verifyOptionsOf(
      settings([
        '--timeout',
        '1.5',
        '--dns',
        '127.0.0.1:5353',
        '--proxy',
        'socks5://127.0.0.1:1080',
        '--helo',
        'probe.test',
      ]),
    );
    expect(built.options).toMatchObject({
      dns: true,
      smtp: true,
      timeoutMs: 1500,
      heloHost: 'probe.test',
      trace: false,
    });
    expect(typeof built.options.resolver?.mx).toBe('function');
    expect(typeof built.options.transport?.connect).toBe('function');
    built.close();
    const offline = verifyOptionsOf(
      settings(['--no-dns', '--dns', '127.0.0.1', '--proxy', 'socks5://127.0.0.1:1080']),
    );
    expect(offline.options.resolver).toBeUndefined();
    expect(offline.options.transport).toBeUndefined();
    expect(Object.keys(offline.options)).not.toContain('timeoutMs');
  });
});

describe('optionsUsageError', () => {
  it('names the flag of a verifier option, and ignores other errors', () => {
    const error = optionsUsageError(new OptionsError('heloHost', 'must be a non-empty string'));
    expect(error?.exitCode).toBe(EXIT.usage);
    expect(error?.message).toBe('--helo must be a non-empty string');
    expect(optionsUsageError(new OptionsError('apiKeys[0]', 'must be 1-256 characters'))?.message).toBe(
      'MAILVET_API_KEYS must be 1-256 characters',
    );
    expect(optionsUsageError(new Error('other'))).toBeUndefined();
  });
});
