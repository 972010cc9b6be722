import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { STATUSES, type Status, SUB_STATUS_OF, type SubStatus } from '../src/result.js';
import { scoreOf } from '../src/score.js';

const base = { role: false, free: false, did_you_mean: null };

describe('scoreOf', () => {
  it('gives 0 to every invalid result, whatever its flags', () => {
    expect(scoreOf({ ...base, status: 'invalid', sub_status: 'mailbox_not_found' })).toBe(0);
    expect(
      scoreOf({
        status: 'invalid',
        sub_status: 'failed_syntax_check',
        role: true,
        free: true,
        did_you_mean: 'a@b.c',
      }),
    ).toBe(0);
  });

  it('follows the published table', () => {
    expect(scoreOf({ ...base, status: 'valid', sub_status: null })).toBe(100);
    expect(scoreOf({ ...base, status: 'valid', sub_status: null, free: true })).toBe(95);
    expect(scoreOf({ ...base, status: 'valid', sub_status: null, role: true })).toBe(85);
    expect(scoreOf({ ...base, status: 'catch_all', sub_status: null })).toBe(60);
    expect(scoreOf({ ...base, status: 'unknown', sub_status: 'smtp_not_checked' })).toBe(45);
    expect(
      scoreOf({ ...base, status: 'unknown', sub_status: 'smtp_not_checked', did_you_mean: 'x@gmail.com' }),
    ).toBe(20);
    expect(scoreOf({ ...base, status: 'unknown', sub_status: 'dns_error' })).toBe(40);
    expect(scoreOf({ ...base, status: 'do_not_mail', sub_status: 'disposable' })).toBe(10);
    expect(scoreOf({ ...base, status: 'do_not_mail', sub_status: 'role_based', role: true })).toBe(1);
  });

  it('keeps valid > catch_all > unknown > do_not_mail > invalid for any flags', () => {
    const order: Status[] = ['valid', 'catch_all', 'unknown', 'do_not_mail', 'invalid'];
    const subOf = (status: Status): (SubStatus | null)[] => {
      const subs = (Object.keys(SUB_STATUS_OF) as SubStatus[]).filter((sub) => SUB_STATUS_OF[sub] === status);
      return subs.length === 0 ? [null] : subs;
    };
    const flags = fc.record({
      role: fc.boolean(),
      free: fc.boolean(),
      did_you_mean: fc.option(fc.constant('a@b.co'), { nil: null }),
    });
    fc.assert(
      fc.property(flags, flags, fc.nat(), fc.nat(), fc.integer({ min: 0, max: 3 }), (a, b, i, j, rank) => {
        const higher = order[rank]!;
        const lower = order[rank + 1]!;
        const highSubs = subOf(higher);
        const lowSubs = subOf(lower);
        const high = scoreOf({ ...a, status: higher, sub_status: highSubs[i % highSubs.length]! });
        const low = scoreOf({ ...b, status: lower, sub_status: lowSubs[j % lowSubs.length]! });
        expect(high).toBeGreaterThan(low);
      }),
    );
  });

  it('is always an integer in [0, 100]', () => {
    for (const status of STATUSES) {
      const score = scoreOf({ status, sub_status: null, role: true, free: true, did_you_mean: 'x@y.z' });
      expect(Number.isInteger(score)).toBe(true);
      expect(score).toBeGreaterThanOrEqual(0);
      expect(score).toBeLessThanOrEqual(100);
    }
  });
});
