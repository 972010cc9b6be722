import { describe, expect, it } from 'vitest';
import { createCheckState } from '../../src/checks/state.js';
import type { AddressParts, CheckState } from '../../src/checks/types.js';
import { typoCheck } from '../../src/checks/typo.js';
import { resolveOptions, type VerifyOptions } from '../../src/options.js';
import type { VerifierRuntime } from '../../src/runtime.js';
import { verify } from '../../src/verifier.js';

/** The typo check is offline: any use of the runtime (resolver, transport, clock) fails the test. */
const NO_RUNTIME = new Proxy(
  {},
  {
    get(_, key) {
      throw new Error(`the typo check must not use runtime.${String(key)}`);
    },
  },
) as VerifierRuntime;

function addressOf(email: string, unicodeDomain?: string): AddressParts {
  const at = email.lastIndexOf('@');
  const domain = email.slice(at + 1);
  return {
    local: email.slice(0, at),
    domain,
    unicodeDomain: unicodeDomain ?? domain,
    normalized: email,
    smtpUtf8: false,
    literalAddress: /^\[(.*)\]$/.exec(domain)?.[1] ?? null,
  };
}

function stateFor(
  email: string,
  options: VerifyOptions = {},
  address: AddressParts | null = addressOf(email),
) {
  const resolved = resolveOptions({ dns: false, smtp: false, ...options });
  const state: CheckState = {
    ...createCheckState(email, resolved, NO_RUNTIME, 0),
    address,
    user: address?.local ?? null,
    domain: address?.domain ?? null,
  };
  return state;
}

function suggestionFor(email: string, options: VerifyOptions = {}): string | null {
  const state = stateFor(email, options);
  expect(typoCheck.run(state)).toBeUndefined();
  return state.did_you_mean;
}

describe('typoCheck', () => {
  it('is named typo', () => {
    expect(typoCheck.name).toBe('typo');
  });

  it('suggests the whole address with the domain corrected, keeping the local part as typed', () => {
    expect(suggestionFor('Jane.Doe+news@gmial.com')).toBe('Jane.Doe+news@gmail.com');
    expect(suggestionFor('x@hotmail.co')).toBe('x@hotmail.com');
    expect(suggestionFor('"john doe"@yaho.com', { allowQuotedLocal: true })).toBe('"john doe"@yahoo.com');
  });

  it('leaves did_you_mean null for a correct or unknown domain, and never gives a verdict', () => {
    expect(suggestionFor('jane@gmail.com')).toBeNull();
    expect(suggestionFor('jane@example.org')).toBeNull();
    expect(suggestionFor('jane@web.com')).toBeNull();
  });

  it('does nothing for an address that failed the syntax check', () => {
    const state = stateFor('jane@gmial.com', {}, null);
    expect(typoCheck.run(state)).toBeUndefined();
    expect(state.did_you_mean).toBeNull();
  });

  it('does nothing for a domain literal', () => {
    expect(suggestionFor('jane@[192.0.2.1]', { allowDomainLiteral: true })).toBeNull();
  });

  it('points to the caller’s suggestDomains too', () => {
    expect(suggestionFor('jane@acme-mial.example')).toBeNull();
    expect(suggestionFor('jane@acme-mial.example', { suggestDomains: ['acme-mail.example'] })).toBe(
      'jane@acme-mail.example',
    );
    // A caller's domain is known: it is not corrected into a built-in one.
    expect(suggestionFor('jane@gmal.com', { suggestDomains: ['gmal.com'] })).toBeNull();
  });

  it('leaves allowlisted addresses and domains alone', () => {
    expect(suggestionFor('jane@gmial.com', { allowlist: ['gmial.com'] })).toBeNull();
    expect(suggestionFor('jane@gmial.com', { allowlist: ['JANE@gmial.com'] })).toBeNull();
    expect(suggestionFor('john@gmial.com', { allowlist: ['jane@gmial.com'] })).toBe('john@gmail.com');
  });

  it('never corrects a domain the caller lists as a free provider', () => {
    expect(suggestionFor('jane@gmial.com', { lists: { free: { add: ['gmial.com'] } } })).toBeNull();
    expect(suggestionFor('jane@gmial.com', { lists: { free: ['GMIAL.com'] } })).toBeNull();
    expect(suggestionFor('jane@gmial.com', { lists: { free: { remove: ['gmail.com'] } } })).toBe(
      'jane@gmail.com',
    );
  });
});

describe('typoCheck after a failed syntax check', () => {
  it.each([
    ['user@yahoo.co.k', 'user@yahoo.co.uk'],
    ['a@gmx.d', 'a@gmx.de'],
    ['bob@comcast.ne5', 'bob@comcast.net'],
    ['jane@gmail..com', 'jane@gmail.com'],
  ])('suggests a fix for %s, whose domain is a near miss of a known one', async (email, expected) => {
    const result = await verify(email, { dns: false, smtp: false });
    expect(result).toMatchObject({ status: 'invalid', sub_status: 'failed_syntax_check' });
    expect(result.did_you_mean).toBe(expected);
  });

  it.each([
    'jo hn@gmial.com', // the local part is the problem: the fixed address would still fail
    'a@b',
    'nobody',
    '\uFFFD@gmail.co',
    `a@${'x'.repeat(300)}.com`,
  ])('suggests nothing for %j', async (email) => {
    const result = await verify(email, { dns: false, smtp: false });
    expect(result.status).toBe('invalid');
    expect(result.did_you_mean).toBeNull();
  });

  it('does not run when disabled', async () => {
    const result = await verify('user@yahoo.co.k', { dns: false, smtp: false, disableChecks: ['typo'] });
    expect(result.did_you_mean).toBeNull();
  });
});
