import { describe, expect, it } from 'vitest';
import { createCheckState } from '../../src/checks/state.js';
import { SYNTAX_FAILURES, syntaxCheck } from '../../src/checks/syntax.js';
import type { CheckState } from '../../src/checks/types.js';
import { resolveOptions, type VerifyOptions } from '../../src/options.js';
import type { VerifierRuntime } from '../../src/runtime.js';

/** A runtime that throws on any use: the syntax check must not need one. */
const noRuntime = new Proxy(
  {},
  {
    get(_target, key) {
      throw new Error(`the syntax check must not use runtime.${String(key)}`);
    },
  },
) as VerifierRuntime;

function stateFor(email: string, options: VerifyOptions = {}): CheckState {
  return createCheckState(email, resolveOptions({ dns: false, smtp: false, ...options }), noRuntime, 0);
}

describe('syntaxCheck', () => {
  it('is named syntax', () => {
    expect(syntaxCheck.name).toBe('syntax');
  });

  it('lets a valid address through and records its canonical parts', () => {
    const state = stateFor('José@Bücher.DE');
    expect(syntaxCheck.run(state)).toBeUndefined();
    expect(state.address).toEqual({
      local: 'José',
      domain: 'xn--bcher-kva.de',
      unicodeDomain: 'bücher.de',
      normalized: 'José@xn--bcher-kva.de',
      smtpUtf8: true,
      literalAddress: null,
    });
    expect(state.user).toBe('José');
    expect(state.domain).toBe('xn--bcher-kva.de');
  });

  it('gives invalid/failed_syntax_check and still records what it could read', () => {
    const state = stateFor('john..doe@Example.COM');
    expect(syntaxCheck.run(state)).toEqual({ status: 'invalid', sub_status: 'failed_syntax_check' });
    expect(state.address).toBeNull();
    expect(state.user).toBe('john..doe');
    expect(state.domain).toBe('example.com');
  });

  it('records null parts when the input has no @', () => {
    const state = stateFor('not an address');
    expect(syntaxCheck.run(state)).toEqual({ status: 'invalid', sub_status: 'failed_syntax_check' });
    expect(state.user).toBeNull();
    expect(state.domain).toBeNull();
  });

  it('reads its options from the verification', () => {
    expect(syntaxCheck.run(stateFor('jürgen@example.com', { allowSmtpUtf8: false }))).toMatchObject({
      status: 'invalid',
    });
    expect(syntaxCheck.run(stateFor('"john doe"@example.com'))).toMatchObject({ status: 'invalid' });
    expect(syntaxCheck.run(stateFor('"john doe"@example.com', { allowQuotedLocal: true }))).toBeUndefined();
    expect(syntaxCheck.run(stateFor('john@[192.0.2.1]'))).toMatchObject({ status: 'invalid' });
    const literal = stateFor('john@[192.0.2.1]', { allowDomainLiteral: true });
    expect(syntaxCheck.run(literal)).toBeUndefined();
    expect(literal.address?.literalAddress).toBe('192.0.2.1');
    expect(syntaxCheck.run(stateFor('john@mail.test'))).toMatchObject({ status: 'invalid' });
    expect(syntaxCheck.run(stateFor('john@mail.test', { allowTlds: ['test'] }))).toBeUndefined();
  });

  it('never lets CR, LF or NUL through, whatever the options', () => {
    const everything = {
      allowSmtpUtf8: true,
      allowQuotedLocal: true,
      allowDomainLiteral: true,
      allowTlds: ['test'],
    };
    for (const email of ['a\r\n@example.com', '"a\\\nb"@example.com', 'a@exa\0mple.com']) {
      const state = stateFor(email, everything);
      expect(syntaxCheck.run(state)).toMatchObject({ status: 'invalid', sub_status: 'failed_syntax_check' });
      expect(state.address).toBeNull();
    }
  });

  it('publishes its failure reasons', () => {
    expect(SYNTAX_FAILURES).toContain('local_too_long');
    expect(new Set(SYNTAX_FAILURES).size).toBe(SYNTAX_FAILURES.length);
  });
});
