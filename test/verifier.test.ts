import { describe, expect, it } from 'vitest';
import type { Check } from '../src/checks/types.js';
import { MailvetError, OptionsError } from '../src/errors.js';
import { verdictOf } from '../src/result.js';
import { createVerifier, trimInput, verify } from '../src/verifier.js';

const offline = { dns: false, smtp: false } as const;

function recorder(name: string, log: string[], outcome?: ReturnType<Check['run']>): Check {
  return {
    name,
    run() {
      log.push(name);
      return outcome;
    },
  };
}

describe('createVerifier', () => {
  it('runs checks in order and stops at the first verdict', async () => {
    const log: string[] = [];
    const verifier = createVerifier({
      ...offline,
      checks: [recorder('a', log), recorder('b', log, verdictOf('blocklisted')), recorder('c', log)],
    });
    const result = await verifier.verify('  x@y.com  ');
    expect(log).toEqual(['a', 'b']);
    expect(result.email).toBe('x@y.com');
    expect(result.status).toBe('do_not_mail');
    expect(result.sub_status).toBe('blocklisted');
    expect(result.score).toBe(10);
    await verifier.dispose();
  });

  it('after a final verdict runs only the checks that annotate failures, ignoring their outcome and errors', async () => {
    const log: string[] = [];
    const annotator = (name: string, run: Check['run']): Check => ({
      name,
      annotatesFailures: true,
      run(state) {
        log.push(name);
        return run(state);
      },
    });
    const verifier = createVerifier({
      ...offline,
      checks: [
        recorder('a', log, verdictOf('blocklisted')),
        recorder('b', log),
        annotator('note', (state) => {
          state.did_you_mean = 'noted@example.com';
          return verdictOf('mailbox_not_found');
        }),
        annotator('broken', () => {
          throw new Error('annotation failed');
        }),
      ],
    });
    const result = await verifier.verify('x@y.com');
    expect(log).toEqual(['a', 'note', 'broken']);
    expect(result).toMatchObject({ status: 'do_not_mail', sub_status: 'blocklisted' });
    expect(result.did_you_mean).toBe('noted@example.com');
    await verifier.dispose();
  });

  it('ends unknown/smtp_not_checked when no check decides', async () => {
    const verifier = createVerifier({ ...offline, checks: [] });
    const result = await verifier.verify('x@y.com');
    expect(result).toMatchObject({ status: 'unknown', sub_status: 'smtp_not_checked', score: 45 });
    await verifier.dispose();
  });

  it('awaits asynchronous checks', async () => {
    const slow: Check = { name: 'slow', run: async () => verdictOf('greylisted') };
    const result = await createVerifier({ ...offline, checks: [slow] }).verify('x@y.com');
    expect(result.sub_status).toBe('greylisted');
  });

  it('turns a throwing check into unknown/exception_occurred', async () => {
    const boom: Check = {
      name: 'boom',
      run() {
        throw new Error('internal detail');
      },
    };
    const rejecting: Check = { name: 'rejecting', run: () => Promise.reject(new Error('x')) };
    for (const check of [boom, rejecting]) {
      const result = await createVerifier({ ...offline, checks: [check] }).verify('x@y.com');
      expect(result).toMatchObject({ status: 'unknown', sub_status: 'exception_occurred' });
      expect(JSON.stringify(result)).not.toContain('internal detail');
    }
  });

  it('skips checks named in disableChecks, per verifier and per call', async () => {
    const log: string[] = [];
    const verifier = createVerifier({
      ...offline,
      checks: [recorder('a', log), recorder('b', log)],
      disableChecks: ['a'],
    });
    await verifier.verify('x@y.com');
    expect(log).toEqual(['b']);
    await verifier.verify('x@y.com', { disableChecks: ['b'] });
    expect(log).toEqual(['b', 'a']);
  });

  it('validates defaults at construction and overrides per call', async () => {
    expect(() => createVerifier({ smtpPort: -1 })).toThrow(OptionsError);
    const verifier = createVerifier({ ...offline, checks: [] });
    await expect(verifier.verify('x@y.com', { timeoutMs: 0 })).rejects.toMatchObject({ option: 'timeoutMs' });
    // The types refuse a verifier-level option per call; plain JavaScript gets an OptionsError at run time.
    // @ts-expect-error concurrency can only be set on createVerifier()
    await expect(verifier.verify('x@y.com', { concurrency: 5 })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'concurrency',
    });
  });

  it('rejects non-string input and use after dispose with coded errors', async () => {
    const verifier = createVerifier({ ...offline, checks: [] });
    await expect(verifier.verify(undefined as unknown as string)).rejects.toMatchObject({
      code: 'invalid_request',
    });
    await verifier.dispose();
    await verifier.dispose();
    await expect(verifier.verify('x@y.com')).rejects.toBeInstanceOf(MailvetError);
    await expect(verifier.verify('x@y.com')).rejects.toMatchObject({ code: 'disposed' });
  });

  it('gives timeout_exceeded when the caller aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await createVerifier({ ...offline, checks: [] }).verify('x@y.com', {
      signal: controller.signal,
    });
    expect(result).toMatchObject({ status: 'unknown', sub_status: 'timeout_exceeded' });
  });

  it('adds smtp_transcript only when trace is on', async () => {
    const verifier = createVerifier({ ...offline, checks: [] });
    expect(await verifier.verify('x@y.com')).not.toHaveProperty('smtp_transcript');
    expect((await verifier.verify('x@y.com', { trace: true })).smtp_transcript).toEqual([]);
  });
});

describe('verify', () => {
  it('verifies with per-call options and returns the wire shape', async () => {
    const result = await verify('someone@example.org', { ...offline, checks: [] });
    expect(Object.keys(result).sort()).toEqual(
      [
        'accept_all',
        'did_you_mean',
        'disposable',
        'domain',
        'email',
        'free',
        'mx_record',
        'normalized',
        'role',
        'score',
        'smtp_provider',
        'status',
        'sub_status',
        'user',
      ].sort(),
    );
  });

  it('throws OptionsError for bad options', async () => {
    await expect(verify('x@y.com', { smtp: 1 as unknown as boolean })).rejects.toMatchObject({
      option: 'smtp',
    });
  });
});

describe('trimInput', () => {
  it('trims spaces, tabs, no-break spaces and a BOM, never CR, LF or NUL', () => {
    expect(trimInput(' \t\u00a0\ufeffa@b.com\u3000 ')).toBe('a@b.com');
    expect(trimInput('a@b.com\r\n')).toBe('a@b.com\r\n');
    expect(trimInput('\u0000a@b.com')).toBe('\u0000a@b.com');
    expect(trimInput('')).toBe('');
    expect(trimInput('a@b.com')).toBe('a@b.com');
  });
});
