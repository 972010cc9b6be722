import { describe, expect, it } from 'vitest';
import { quotaWords, type Usage, usageRow, usageView } from '../../src/console/usage-view.js';

const zero = { valid: 0, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 };

const usage: Usage = {
  from: '2026-10-29',
  to: '2026-11-27',
  days: [
    { date: '2026-11-01', single: { ...zero, valid: 2 }, bulk: { ...zero, invalid: 3 }, total: 5 },
    {
      date: '2026-11-27',
      single: { ...zero, unknown: 1 },
      bulk: { ...zero, valid: 4, unknown: 1 },
      total: 6,
    },
  ],
  totals: {
    single: { ...zero, valid: 2, unknown: 1 },
    bulk: { ...zero, valid: 4, invalid: 3, unknown: 1 },
    total: 11,
  },
  quota: { day: '2026-11-27', limit: 100000, used: 6, remaining: 99994 },
};

describe('usageView', () => {
  it("gives today's row, the range's row and the days newest first, statuses in the console's order", () => {
    const view = usageView(usage);
    // valid, catch_all, unknown, do_not_mail, invalid
    expect(view.today).toEqual({
      label: 'Today (2026-11-27)',
      counts: [4, 0, 2, 0, 0],
      single: 1,
      bulk: 5,
      total: 6,
    });
    expect(view.range).toEqual({
      label: '2026-10-29 to 2026-11-27',
      counts: [6, 0, 2, 0, 3],
      single: 3,
      bulk: 8,
      total: 11,
    });
    expect(view.days.map((row) => row.label)).toEqual(['2026-11-27', '2026-11-01']);
  });

  it('shows zeros for a today without usage', () => {
    expect(usageView({ ...usage, days: [usage.days[0]!] }).today.total).toBe(0);
    expect(usageRow('x', undefined).counts).toEqual([0, 0, 0, 0, 0]);
  });

  it('says the quota in words, or nothing without one', () => {
    expect(quotaWords(usage.quota)).toBe(
      'Daily quota: 6 of 100,000 addresses used today (UTC), 99,994 left.',
    );
    expect(quotaWords(null)).toBeNull();
  });
});
