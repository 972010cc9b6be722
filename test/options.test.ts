import { describe, expect, it } from 'vitest';
import { isMailvetError, OptionsError } from '../src/errors.js';
import { applyBudget, DEFAULTS, resolveOptions, type VerifyOptions } from '../src/options.js';
import { createVerifier } from '../src/verifier.js';

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

  it('gives the same object for the same budget on the same base, and a new one past 32 budgets', () => {
    const base = resolveOptions({ smtp: false });
    const budget = { timeoutMs: 3_000, connectTimeoutMs: 3_000, replyTimeoutMs: 3_000 };
    const first = applyBudget(base, budget);
    expect(first).toMatchObject({ smtp: false, ...budget });
    expect(applyBudget(base, { ...budget })).toBe(first);
    expect(applyBudget(resolveOptions({ smtp: false }), budget)).not.toBe(first); // another base
    expect(applyBudget(base, { timeoutMs: base.timeoutMs })).toBe(base); // nothing changes
    const signal = new AbortController().signal;
    const withSignal = applyBudget(base, { ...budget, signal });
    expect(withSignal).toMatchObject({ ...budget, signal });
    expect(applyBudget(base, { ...budget, signal })).not.toBe(withSignal); // a call's signal is its own
    for (let ms = 1; ms <= 40; ms++) expect(applyBudget(base, { timeoutMs: ms })?.timeoutMs).toBe(ms);
    expect(applyBudget(base, { timeoutMs: 5 })).toBe(applyBudget(base, { timeoutMs: 5 })); // among the first 32
    expect(applyBudget(base, { timeoutMs: 40 })).not.toBe(applyBudget(base, { timeoutMs: 40 })); // past them
    expect(applyBudget(base, budget)).toBe(first);
  });

  it('reads a frozen overrides object once per base, then answers from a lookup', () => {
    const base = resolveOptions({ smtp: false });
    let reads = 0;
    const overrides = Object.freeze({
      get timeoutMs() {
        reads += 1;
        return 2_500;
      },
    });
    const first = applyBudget(base, overrides);
    expect(first).toMatchObject({ smtp: false, timeoutMs: 2_500 });
    const readsOnce = reads;
    expect(applyBudget(base, overrides)).toBe(first);
    expect(reads).toBe(readsOnce);
    const other = resolveOptions({ smtp: false, replyTimeoutMs: 700 });
    expect(applyBudget(other, overrides)).toMatchObject({ timeoutMs: 2_500, replyTimeoutMs: 700 });
    expect(reads).toBeGreaterThan(readsOnce);
    const signal = new AbortController().signal;
    const withSignal = Object.freeze({ timeoutMs: 900, signal });
    expect(applyBudget(base, withSignal)).toMatchObject({ timeoutMs: 900, signal });
    expect(applyBudget(base, withSignal)).toBe(applyBudget(base, withSignal));
    const notBudget = Object.freeze({ timeoutMs: 900, smtp: true });
    expect(applyBudget(base, notBudget)).toBeUndefined();
    expect(applyBudget(base, notBudget)).toBeUndefined();
    const bad = Object.freeze({ timeoutMs: 0 });
    for (let i = 0; i < 2; i++) expect(() => applyBudget(base, bad)).toThrow(/^timeoutMs must be an integer/);
  });

  it('validates the budget like resolveOptions does', () => {
    const base = resolveOptions();
    expect(() => applyBudget(base, { timeoutMs: 0 })).toThrow(/^timeoutMs must be an integer/);
    expect(() => applyBudget(base, { signal: 'x' as unknown as AbortSignal })).toThrow(
      /^signal must be an AbortSignal/,
    );
  });
});

describe('heloHost and mailFrom (they go onto the SMTP wire as they are)', () => {
  it.each([
    ['heloHost', 'mx\u0085check.example.net'],
    ['heloHost', 'mx\u0001.example.net'],
    ['heloHost', 'mx.example.net\uD800'],
    ['heloHost', '<mx.example.net>'],
    ['heloHost', 'mx example.net'],
    ['heloHost', `${'a'.repeat(64)}.example.net`],
    ['heloHost', `${'a.'.repeat(130)}net`],
    ['heloHost', '-mx.example.net'],
    ['heloHost', '[999.1.1.1]'],
    ['heloHost', ''],
    ['heloHost', 42],
    ['mailFrom', 'verify'],
    ['mailFrom', '@example.net'],
    ['mailFrom', 'verify@'],
    ['mailFrom', 'verify@example.net>'],
    ['mailFrom', '<verify@example.net>'],
    ['mailFrom', 'ver\u0085ify@example.net'],
    ['mailFrom', 'ver\u2028ify@example.net'],
    ['mailFrom', 'verify@exa mple.net'],
    ['mailFrom', `${'v'.repeat(250)}@example.net`],
    ['mailFrom', 'verify@bad_host!'],
    ['mailFrom', 'v\uDC00@example.net'],
  ])('refuses %s %j with an OptionsError naming it', (key, value) => {
    expect(() => createVerifier({ [key]: value } as never)).toThrow(OptionsError);
    try {
      createVerifier({ [key]: value } as never);
    } catch (error) {
      expect((error as OptionsError).option).toBe(key);
    }
  });

  it.each([
    { heloHost: 'mx-check.example.net' },
    { heloHost: 'MX.Example.NET.' },
    { heloHost: '[192.0.2.1]' },
    { heloHost: '[IPv6:2001:db8::1]' },
    { mailFrom: 'verify@mx-check.example.net' },
    { mailFrom: 'bounce+tag@[192.0.2.1]' },
    { mailFrom: 'vérifier@exemple.fr' },
  ])('accepts %j', async (options) => {
    const verifier = createVerifier({ ...options, dns: false, smtp: false });
    await verifier.dispose();
  });
});
