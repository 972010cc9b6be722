import { describe, expect, it } from 'vitest';
import { isMailvetError, OptionsError } from '../src/errors.js';
import { applyBudget, DEFAULTS, resolveOptions, type VerifyOptions } from '../src/options.js';

function optionError(options: unknown): OptionsError {
  try {
    resolveOptions(options as VerifyOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(OptionsError);
    return error as OptionsError;
  }
  throw new Error('expected an OptionsError');
}

describe('resolveOptions', () => {
  it('fills in the documented defaults', () => {
    const options = resolveOptions();
    expect(options.dns).toBe(true);
    expect(options.smtp).toBe(true);
    expect(options.allowSmtpUtf8).toBe(true);
    expect(options.allowQuotedLocal).toBe(false);
    expect(options.allowDomainLiteral).toBe(false);
    expect(options.roleIsDoNotMail).toBe(false);
    expect(options.smtpPort).toBe(25);
    expect(options.timeoutMs).toBe(DEFAULTS.timeoutMs);
    expect(options.tls).toBe('never');
    expect(options.catchAll).toBe(true);
    expect(options.maxMxHosts).toBe(3);
    expect(options.perMxConcurrency).toBe(2);
  });

  it('normalizes list entries: case, white space, a leading @ or dot', () => {
    const options = resolveOptions({
      blocklist: [' @Spam.Example '],
      allowTlds: ['.TEST'],
      allowlist: ['Boss@Corp.com'],
    });
    expect([...options.blocklist]).toEqual(['spam.example']);
    expect([...options.allowTlds]).toEqual(['test']);
    expect([...options.allowlist]).toEqual(['boss@corp.com']);
  });

  it.each([
    [{ dns: 'yes' }, 'dns'],
    [{ smtpPort: 0 }, 'smtpPort'],
    [{ smtpPort: 70_000 }, 'smtpPort'],
    [{ smtpPort: 25.5 }, 'smtpPort'],
    [{ timeoutMs: -1 }, 'timeoutMs'],
    [{ timeoutMs: Number.NaN }, 'timeoutMs'],
    [{ tls: 'always' }, 'tls'],
    [{ blocklist: 'spam.com' }, 'blocklist'],
    [{ blocklist: [42] }, 'blocklist'],
    [{ blocklist: [''] }, 'blocklist'],
    [{ allowTlds: ['x'.repeat(1000)] }, 'allowTlds'],
    [{ lists: { disposable: { add: 'x' } } }, 'lists.disposable.add'],
    [{ lists: { unknown: [] } }, 'lists.unknown'],
    [{ lists: { free: { replace: [] } } }, 'lists.free.replace'],
    [{ checks: [{ name: 'x' }] }, 'checks'],
    [{ resolver: { mx: () => null } }, 'resolver'],
    [{ transport: {} }, 'transport'],
    [{ heloHost: 'bad host\r\n' }, 'heloHost'],
    [{ mailFrom: '' }, 'mailFrom'],
    [{ signal: 'abort' }, 'signal'],
    [{ smtpPortt: 25 }, 'smtpPortt'],
    [{ 'ünïcode\u0000': true }, 'ünïcode\u0000'],
  ])('rejects %j naming the option', (options, name) => {
    const error = optionError(options);
    expect(error.option).toBe(name);
    expect(error.code).toBe('invalid_option');
    expect(error.message.startsWith(name)).toBe(true);
    expect(isMailvetError(error)).toBe(true);
  });

  it('rejects options that are not an object', () => {
    expect(optionError(null).option).toBe('options');
    expect(optionError([]).option).toBe('options');
    expect(optionError('smtp').option).toBe('options');
  });
});

describe('applyBudget', () => {
  it('applies timeoutMs and signal alone without re-resolving', () => {
    const base = resolveOptions({ smtp: false });
    const signal = new AbortController().signal;
    const budgeted = applyBudget(base, { timeoutMs: 2_000, signal });
    expect(budgeted).toMatchObject({ smtp: false, timeoutMs: 2_000, signal });
    expect(applyBudget(base, {})).toBe(base);
    expect(applyBudget(base, { timeoutMs: 5, smtp: true })).toBeUndefined();
  });

  it('validates the budget like resolveOptions does', () => {
    const base = resolveOptions();
    expect(() => applyBudget(base, { timeoutMs: 0 })).toThrow(/^timeoutMs must be an integer/);
    expect(() => applyBudget(base, { signal: 'x' as unknown as AbortSignal })).toThrow(
      /^signal must be an AbortSignal/,
    );
  });
});
