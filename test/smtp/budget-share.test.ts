/**
 * Budgets that are honest (issue 32), in the pure functions and the pool: each attempt's share of the budget, the
 * reply deadline of a command, and the error of a request that was never tried.
 */
import { describe, expect, it } from 'vitest';
import { attemptSettings } from '../../src/checks/smtp-probe.js';
import { notTriedError, replyDeadline } from '../../src/smtp/pool/lease.js';
import { createSessionPool, type PoolTarget, type RcptRequest } from '../../src/smtp/pool.js';
import { fakeMailHost } from '../support/fake-smtp.js';

const settings = {
  heloHost: 'probe.test',
  tls: 'never',
  connectTimeoutMs: 5000,
  replyTimeoutMs: 5000,
} as const;
const target: PoolTarget = { host: '192.0.2.10', port: 25, hostname: 'mx.example.com' };

function request(recipient: string): RcptRequest {
  return { sender: 'verify@probe.test', recipient, smtpUtf8: false, settings };
}

describe('attemptSettings', () => {
  it('leaves the waits alone when the budget covers them', () => {
    expect(attemptSettings(settings, 10_100, 1)).toBe(settings);
    expect(attemptSettings(settings, 10_100, 2)).toBe(settings);
  });

  it('gives an attempt half of what is left while another address remains to be tried', () => {
    expect(attemptSettings(settings, 4000, 2)).toEqual({
      ...settings,
      connectTimeoutMs: 1987,
      replyTimeoutMs: 1987,
    });
    expect(attemptSettings(settings, 4000, 5)).toMatchObject({ connectTimeoutMs: 1987 });
  });

  it('gives the last attempt all that is left, less a margin, so its waits end inside the budget', () => {
    expect(attemptSettings(settings, 600, 1)).toMatchObject({ connectTimeoutMs: 575, replyTimeoutMs: 575 });
  });

  it('never asks for a wait below 1 ms, even with no budget left', () => {
    expect(attemptSettings(settings, -50, 1)).toMatchObject({ connectTimeoutMs: 1, replyTimeoutMs: 1 });
  });

  it('keeps a shorter configured wait', () => {
    const short = { ...settings, connectTimeoutMs: 300 };
    expect(attemptSettings(short, 2000, 1)).toMatchObject({ connectTimeoutMs: 300, replyTimeoutMs: 1975 });
  });
});

describe('replyDeadline', () => {
  it('is the request’s own reply timeout, within the lease', () => {
    const shortReply = { ...request('a@example.com'), settings: { ...settings, replyTimeoutMs: 200 } };
    expect(replyDeadline({ deadline: 10_000 }, shortReply, 1000)).toBe(1200);
    expect(replyDeadline({ deadline: 1100 }, shortReply, 1000)).toBe(1100);
    const noReply = {
      ...request('a@example.com'),
      settings: { heloHost: 'h', tls: 'never', connectTimeoutMs: 1 },
    };
    expect(replyDeadline({ deadline: 1100 }, noReply as RcptRequest, 1000)).toBe(1100);
  });
});

describe('notTriedError', () => {
  it('says how long the request waited and for which limit', () => {
    const error = notTriedError({ deadline: 0 }, 2049, false);
    expect(error).toMatchObject({ kind: 'timeout' });
    expect(error.message).toBe(
      'not tried: waited 2.0 s for a free session (concurrency limit) and the time budget ran out',
    );
    expect(notTriedError({ deadline: 0 }, 300, true).message).toContain('(perMxConcurrency limit)');
  });

  it('is the abort error when the signal fired', () => {
    const controller = new AbortController();
    controller.abort();
    expect(notTriedError({ deadline: 0, signal: controller.signal }, 300, true)).toMatchObject({
      kind: 'aborted',
    });
  });
});

describe('a request whose budget runs out in the pool', () => {
  it('was not tried when it waited for one of its host’s sessions, and was tried when it was opening one', async () => {
    const mail = fakeMailHost({ manual: true }); // the first session never finishes opening
    const pool = createSessionPool({ open: mail.open, perMxConcurrency: 1 });
    try {
      const opening = pool.rcpt(target, request('a@example.com'), { deadline: Date.now() + 80 });
      const queued = pool.rcpt(target, request('b@example.com'), { deadline: Date.now() + 40 });
      // Both at once, so that neither rejection goes unhandled while the other is awaited. The wait is whatever the
      // timers took: on a loaded machine a 40 ms deadline can fire a second late.
      await Promise.all([
        expect(queued).rejects.toThrow(
          /^not tried: waited \d+\.\d s for a free session \(perMxConcurrency limit\)/,
        ),
        expect(opening).rejects.toThrow('the verification time budget is spent'),
      ]);
    } finally {
      mail.step();
      await pool.close();
    }
  });
});
