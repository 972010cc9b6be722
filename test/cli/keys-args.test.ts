import { describe, expect, it } from 'vitest';
import { graceMsOf, keyNameOf, quotaOf, rateOf, scopesOf } from '../../src/cli/keys-args.js';

const usage = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return { code: (error as { exitCode?: number }).exitCode, message: (error as Error).message };
  }
  throw new Error('expected a usage error');
};

describe('the values of mailvet keys flags', () => {
  it('reads scopes, dropping duplicates, and suggests the scope a typo meant', () => {
    expect(scopesOf('verify,bulk:read, bulk:write,verify')).toEqual(['verify', 'bulk:read', 'bulk:write']);
    expect(usage(() => scopesOf('verify,bulk:red'))).toEqual({
      code: 2,
      message:
        'unknown scope "bulk:red" in --scopes (did you mean bulk:read?); scopes: verify, bulk:read, bulk:write, admin',
    });
    expect(usage(() => scopesOf('Admin')).message).toContain('(did you mean admin?)');
    expect(usage(() => scopesOf('everything')).message).not.toContain('did you mean');
    expect(usage(() => scopesOf(`${'x'.repeat(10_000)}`)).message.length).toBeLessThan(200);
    expect(usage(() => scopesOf(',,')).message).toBe(
      '--scopes must name at least one of verify, bulk:read, bulk:write, admin',
    );
    expect(usage(() => scopesOf(undefined)).code).toBe(2);
  });

  it('reads rates per second, minute or hour, and refuses the rest', () => {
    expect(rateOf('20/s')).toBe(20);
    expect(rateOf('600/min')).toBe(10);
    expect(rateOf('36/hour')).toBe(0.01);
    expect(rateOf(undefined)).toBeNull();
    for (const bad of ['20', '0/s', '-1/s', '20/day', '1e3/s', '200001/s', '20 /s', '２０/s', '']) {
      expect(usage(() => rateOf(bad)).message, bad).toMatch(/^--rate must be/);
    }
  });

  it('reads quotas per day, and refuses the rest', () => {
    expect(quotaOf('100000/day')).toBe(100_000);
    expect(quotaOf('5/d')).toBe(5);
    expect(quotaOf(undefined)).toBeNull();
    for (const bad of ['100000', '0/day', '1.5/day', '10/hour', '1000000000001/day', '１/day']) {
      expect(usage(() => quotaOf(bad)).message, bad).toMatch(/^--quota must be/);
    }
  });

  it('reads names of ASCII letters, digits and . _ -, up to 64 characters', () => {
    expect(keyNameOf('billing-app')).toBe('billing-app');
    expect(keyNameOf('a'.repeat(64))).toBe('a'.repeat(64));
    for (const bad of [
      '',
      'a'.repeat(65),
      'fac¡ture',
      'café',
      'two words',
      '-dash',
      'a\nb',
      'a\u0000',
      '😀',
    ]) {
      expect(usage(() => keyNameOf(bad)).message, bad).toMatch(/^--name must be 1-64 characters/);
    }
    expect(usage(() => keyNameOf(undefined)).code).toBe(2);
  });

  it('reads a grace in s, m, h or d up to 30 days', () => {
    expect(graceMsOf('1h')).toBe(3_600_000);
    expect(graceMsOf('0s')).toBe(0);
    expect(graceMsOf('30d')).toBe(30 * 86_400_000);
    for (const bad of ['1', '31d', '1w', '-1h', '1.5h', 'soon']) {
      expect(usage(() => graceMsOf(bad)).message, bad).toMatch(/^--grace must be/);
    }
    expect(usage(() => graceMsOf(undefined)).message).toMatch(/^keys rotate needs --grace/);
  });
});
