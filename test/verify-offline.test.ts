import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isStatus, SUB_STATUS_OF, type VerificationResult } from '../src/result.js';
import { scoreOf } from '../src/score.js';
import { createVerifier } from '../src/verifier.js';

const verifier = createVerifier({ dns: false, smtp: false });

function expectWellFormed(result: VerificationResult): void {
  expect(isStatus(result.status)).toBe(true);
  if (result.sub_status === null) expect(['valid', 'catch_all']).toContain(result.status);
  else expect(SUB_STATUS_OF[result.sub_status]).toBe(result.status);
  expect(Number.isInteger(result.score)).toBe(true);
  expect(result.score).toBe(scoreOf(result));
  if (result.status === 'invalid') expect(result.score).toBe(0);
}

describe('verify offline, through the default checks', () => {
  it('never calls a good address valid without a mail server', async () => {
    const result = await verifier.verify('  Jane.Doe@Example.ORG ');
    expect(result).toMatchObject({
      email: 'Jane.Doe@Example.ORG',
      normalized: 'Jane.Doe@example.org',
      user: 'Jane.Doe',
      domain: 'example.org',
      status: 'unknown',
      sub_status: 'smtp_not_checked',
      mx_record: null,
      accept_all: false,
    });
  });

  it('fails the syntax check on malformed input, keeping what it could read', async () => {
    const result = await verifier.verify('john..doe@example.com');
    expect(result).toMatchObject({
      status: 'invalid',
      sub_status: 'failed_syntax_check',
      score: 0,
      normalized: null,
    });
    expect(result.user).toBe('john..doe');
    expect(result.domain).toBe('example.com');
  });

  it('converts IDN domains to their ASCII form', async () => {
    const result = await verifier.verify('kontakt@bücher.de');
    expect(result.domain).toBe('xn--bcher-kva.de');
    expect(result.normalized).toBe('kontakt@xn--bcher-kva.de');
  });

  it('suggests a typo fix without changing the status', async () => {
    const result = await verifier.verify('jane@gmail.co');
    expect(result.did_you_mean).toBe('jane@gmail.com');
    expect(result).toMatchObject({ status: 'unknown', sub_status: 'smtp_not_checked', score: 20 });
  });

  it('flags disposable, role and free addresses', async () => {
    expect(await verifier.verify('x@mailinator.com')).toMatchObject({
      status: 'do_not_mail',
      sub_status: 'disposable',
      disposable: true,
    });
    expect(await verifier.verify('no-reply@acme-widgets.com')).toMatchObject({
      role: true,
      status: 'unknown',
    });
    expect(await verifier.verify('no-reply@acme-widgets.com', { roleIsDoNotMail: true })).toMatchObject({
      status: 'do_not_mail',
      sub_status: 'role_based',
    });
    expect(await verifier.verify('jane@gmail.com')).toMatchObject({ free: true, score: 40 });
  });

  it('applies the caller blocklist and allowlist', async () => {
    expect(await verifier.verify('a@spam.example.com', { blocklist: ['example.com'] })).toMatchObject({
      status: 'do_not_mail',
      sub_status: 'blocklisted',
    });
    expect(await verifier.verify('x@mailinator.com', { allowlist: ['mailinator.com'] })).toMatchObject({
      status: 'unknown',
      sub_status: 'smtp_not_checked',
      disposable: true,
    });
  });

  it('never lets CR, LF or NUL pass, even at the edges', async () => {
    for (const input of [
      'a@b.com\r\n',
      '\na@b.com',
      'a@b.com\u0000',
      'a\r\n@b.com',
      'a@b.com\rRCPT TO:<x@y.z>',
    ]) {
      expect((await verifier.verify(input)).sub_status).toBe('failed_syntax_check');
    }
  });

  it('handles oversized input without throwing', async () => {
    const huge = `${'a'.repeat(5_000_000)}@${'b'.repeat(5_000_000)}.com`;
    const result = await verifier.verify(huge);
    expect(result.sub_status).toBe('failed_syntax_check');
  });

  it('never throws and never leaves the taxonomy, on any string', async () => {
    const inputs = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 400 }),
      fc.string({ unit: 'grapheme', maxLength: 100 }),
      fc.emailAddress(),
      fc
        .tuple(fc.string({ unit: 'binary', maxLength: 70 }), fc.domain())
        .map(([local, domain]) => `${local}@${domain}`),
    );
    await fc.assert(
      fc.asyncProperty(inputs, async (input) => {
        expectWellFormed(await verifier.verify(input));
      }),
      { numRuns: 2000 },
    );
  });
});
