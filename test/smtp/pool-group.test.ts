/**
 * The reading of a pipelined group's replies as a pure function: what each member gets, what counts against
 * the session, and which lost members may try again.
 */
import { describe, expect, it } from 'vitest';
import { SmtpError } from '../../src/errors.js';
import { fitsEnvelope } from '../../src/smtp/pool/envelope.js';
import { type GroupReplies, mayRetryLost, readGroup } from '../../src/smtp/pool/group.js';
import type { Settled } from '../../src/smtp/pool/replies.js';
import { afterCheck, proofDelay, QUIET_MIN_MS, quietMs } from '../../src/smtp/pool/step.js';
import type { SmtpReply } from '../../src/smtp/types.js';
import { reply } from '../support/fake-smtp.js';

const ok = (code: number, text = 'ok'): Settled<SmtpReply> => ({ ok: true, value: reply(code, text) });
const lost = (error: unknown): Settled<SmtpReply> => ({ ok: false, error });
const dropped = new SmtpError('disconnect', 'the server closed the connection');
const unsafe = new SmtpError('unsafe_argument', 'CR in the address');

const group = (extra: Partial<GroupReplies>): GroupReplies => ({
  mail: null,
  rcpts: [],
  before: 0,
  retry452: true,
  reused: false,
  ...extra,
});

/** Each fate in short: `resolve:rcpt:250:fresh`, `lost`, `fail`, `again:452`. */
function fates(replies: GroupReplies): string[] {
  return readGroup(replies).fates.map((fate) => {
    if (fate.kind === 'resolve') {
      const { outcome } = fate;
      if (outcome.kind !== 'reply') return 'resolve:no_smtputf8';
      return `resolve:${outcome.stage}:${outcome.reply.code}:${outcome.reused ? 'reused' : 'fresh'}`;
    }
    if (fate.kind === 'again') return `again:${fate.reply.code}`;
    if (fate.kind === 'void') return 'void';
    return fate.kind;
  });
}

describe('readGroup', () => {
  it.each([
    {
      case: 'each member gets its own reply; riders count as reused',
      replies: group({ mail: ok(250), rcpts: [ok(250), ok(550, '5.1.1 no'), ok(250)] }),
      expected: ['resolve:rcpt:250:fresh', 'resolve:rcpt:550:reused', 'resolve:rcpt:250:reused'],
      counted: [250, 550, 250], // an accepted MAIL FROM is not an RCPT reply to count
      answered: true,
    },
    {
      case: 'a refused MAIL FROM answers everyone, and counts with each 503',
      replies: group({ mail: ok(550, '5.7.1 sender refused'), rcpts: [ok(503), ok(503)] }),
      expected: ['resolve:mail:550:fresh', 'resolve:mail:550:reused'],
      counted: [550, 503, 503],
      answered: true,
    },
    {
      case: 'a drop after the first reply loses the rest',
      replies: group({ rcpts: [ok(250), lost(dropped), lost(dropped)], reused: true }),
      expected: ['resolve:rcpt:250:reused', 'lost', 'lost'],
      counted: [250],
      answered: true,
    },
    {
      case: 'an unsafe recipient fails alone, the others are answered',
      replies: group({ rcpts: [lost(unsafe), ok(250)] }),
      expected: ['fail', 'resolve:rcpt:250:reused'],
      counted: [250],
      answered: true,
    },
    {
      case: '452 too many recipients past the first of the envelope is asked again',
      replies: group({ rcpts: [ok(250), ok(452, '4.5.3 too many recipients')] }),
      expected: ['resolve:rcpt:250:fresh', 'again:452'],
      counted: [250, 452],
      answered: true,
    },
    {
      case: '452 to the first recipient of the envelope is its answer',
      replies: group({ rcpts: [ok(452, '4.5.3 too many recipients')] }),
      expected: ['resolve:rcpt:452:fresh'],
      counted: [452],
      answered: true,
    },
    {
      case: '452 in an envelope that already held recipients is asked again, even first in the group',
      replies: group({ rcpts: [ok(452, '4.5.3 too many recipients')], before: 3 }),
      expected: ['again:452'],
      counted: [452],
      answered: true,
    },
    {
      case: 'the second try of a 452 keeps its answer',
      replies: group({ rcpts: [ok(250), ok(452, '4.5.3 too many recipients')], retry452: false }),
      expected: ['resolve:rcpt:250:fresh', 'resolve:rcpt:452:reused'],
      counted: [250, 452],
      answered: true,
    },
    {
      case: 'nothing answered',
      replies: group({ mail: lost(dropped), rcpts: [lost(dropped)] }),
      expected: ['lost'],
      counted: [],
      answered: false,
    },
  ])('$case', ({ replies, expected, counted, answered }) => {
    expect(fates(replies)).toEqual(expected);
    const reading = readGroup(replies);
    expect(reading.counted.map((counted) => counted.code)).toEqual(counted);
    expect(reading.answered).toBe(answered);
  });
});

describe('mayRetryLost', () => {
  const rejected = new SmtpError('rejected', 'closing', { smtpReply: reply(421, '4.3.2 bye') });
  it.each([
    {
      case: 'a reused session that failed before any reply (stale)',
      error: dropped,
      reused: true,
      answered: false,
      retried: false,
      expected: true,
    },
    {
      case: 'a fresh session that dropped',
      error: dropped,
      reused: false,
      answered: true,
      retried: false,
      expected: false,
    },
    {
      case: 'a reused session that dropped after answering',
      error: dropped,
      reused: true,
      answered: true,
      retried: false,
      expected: false,
    },
    {
      case: 'a 421 after answering',
      error: rejected,
      reused: false,
      answered: true,
      retried: false,
      expected: true,
    },
    {
      case: 'a 421 on a fresh session before any reply',
      error: rejected,
      reused: false,
      answered: false,
      retried: false,
      expected: false,
    },
    {
      case: 'a request already retried once',
      error: dropped,
      reused: true,
      answered: false,
      retried: true,
      expected: false,
    },
  ])('$case: $expected', ({ expected, ...lostMember }) => {
    expect(mayRetryLost(lostMember)).toBe(expected);
  });
});

describe('fitsEnvelope', () => {
  it.each([
    { case: 'no envelope', envelope: null, request: { sender: 'a@x', smtpUtf8: false }, expected: false },
    {
      case: 'same sender',
      envelope: { sender: 'a@x', smtpUtf8: false },
      request: { sender: 'a@x', smtpUtf8: false },
      expected: true,
    },
    {
      case: 'another sender',
      envelope: { sender: 'a@x', smtpUtf8: false },
      request: { sender: 'b@x', smtpUtf8: false },
      expected: false,
    },
    {
      case: 'UTF-8 recipient, ASCII envelope',
      envelope: { sender: 'a@x', smtpUtf8: false },
      request: { sender: 'a@x', smtpUtf8: true },
      expected: false,
    },
    {
      case: 'ASCII recipient, SMTPUTF8 envelope',
      envelope: { sender: 'a@x', smtpUtf8: true },
      request: { sender: 'a@x', smtpUtf8: false },
      expected: true,
    },
  ])('$case: $expected', ({ envelope, request, expected }) => {
    expect(fitsEnvelope(envelope, request)).toBe(expected);
  });
});

describe('readGroup on a session out of step', () => {
  it.each([
    {
      case: 'with MAIL FROM first, no RCPT TO reply stands',
      replies: group({ mail: ok(250), rcpts: [ok(250), ok(550, '5.1.1 no')], inStep: false }),
      expected: ['void', 'void'],
    },
    {
      case: 'in an open envelope, the first RCPT TO reply stands, the later ones do not',
      replies: group({ rcpts: [ok(550, '5.1.1 no'), ok(250), lost(dropped)], inStep: false, reused: true }),
      expected: ['resolve:rcpt:550:reused', 'void', 'lost'],
    },
    {
      case: 'a refused MAIL FROM, the first line, still answers everyone',
      replies: group({ mail: ok(550, '5.7.1 no'), rcpts: [ok(503)], inStep: false }),
      expected: ['resolve:mail:550:fresh'],
    },
  ])('$case', ({ replies, expected }) => {
    expect(fates(replies)).toEqual(expected);
  });

  it('does not count a void reply against the session', () => {
    const reading = readGroup(group({ mail: ok(250), rcpts: [ok(550, '5.1.1 no')], inStep: false }));
    expect(reading.counted).toEqual([]);
  });
});

describe('afterCheck', () => {
  it.each([
    { held: 3, check: 'in_step', confirmed: [0, 1, 2], voided: [] },
    { held: 3, check: 'out_of_step', confirmed: [], voided: [0, 1, 2] },
    { held: 3, check: 'last_reply_doubled', confirmed: [2], voided: [0, 1] },
    { held: 1, check: 'last_reply_doubled', confirmed: [0], voided: [] },
    { held: 0, check: 'last_reply_doubled', confirmed: [], voided: [] },
  ] as const)('$held held, $check', ({ held, check, confirmed, voided }) => {
    expect(afterCheck(held, check)).toEqual({ confirmed, voided });
  });

  it('waits at least QUIET_MIN_MS, and twice the slowest reply beyond it', () => {
    expect(quietMs(0)).toBe(QUIET_MIN_MS);
    expect(quietMs(QUIET_MIN_MS)).toBe(2 * QUIET_MIN_MS);
  });

  it.each([
    { slowestMs: 5, msLeft: 10_000, expected: QUIET_MIN_MS },
    { slowestMs: 4_000, msLeft: 10_000, expected: 8_000 },
    { slowestMs: 4_000, msLeft: 3_000, expected: 2_980 },
    { slowestMs: 5, msLeft: 10, expected: 0 },
  ])(
    'checks within the earliest budget: slowest $slowestMs ms, $msLeft ms left',
    ({ slowestMs, msLeft, expected }) => {
      expect(proofDelay(slowestMs, msLeft)).toBe(expected);
    },
  );
});
