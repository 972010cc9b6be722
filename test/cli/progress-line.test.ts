import { describe, expect, it } from 'vitest';
import { emptyCounts } from '../../src/cli/output.js';
import { clockTime, fitProgressLine, type ProgressView, retryNote } from '../../src/cli/progress-line.js';
import { createStyle, plain } from '../../src/cli/style.js';

const busy: ProgressView = {
  done: 1200,
  total: 5000,
  rate: '400/s',
  eta: '9.5s',
  counts: { valid: 1000, invalid: 150, catch_all: 30, unknown: 15, do_not_mail: 5 },
};
const waiting: ProgressView = { ...busy, retries: { count: 3, at: '14:05' } };
const colour = createStyle(true);
const none = createStyle(false);

describe('fitProgressLine', () => {
  it.each([
    [40, 'val 1000 inv 150 catch 30 unk 15 dnm 5'],
    [60, '1200/5000 | val 1000 inv 150 catch 30 unk 15 dnm 5'],
    [80, '1200/5000 24% ETA 9.5s | val 1000 inv 150 catch 30 unk 15 dnm 5'],
    [
      120,
      '1200/5000 rows (24.0%), 400/s, ETA 9.5s | valid 1000 invalid 150 catch_all 30 unknown 15 do_not_mail 5',
    ],
    [
      200,
      '█████░░░░░░░░░░░░░░░ 1200/5000 rows (24.0%), 400/s, ETA 9.5s | valid 1000 invalid 150 catch_all 30 unknown 15 do_not_mail 5',
    ],
  ])('fits a %i-column terminal without cutting a count', (columns, expected) => {
    const line = fitProgressLine(busy, columns, colour);
    expect(plain(line)).toBe(expected);
    expect(plain(line).length).toBeLessThan(columns);
    expect(line).toContain('\u001b[32m');
  });

  it.each([
    [40, 'val 1000 inv 150 catch 30 unk 15 dnm 5'],
    [60, 'val 1000 inv 150 catch 30 unk 15 dnm 5 | 3 retry 14:05'],
    [80, '1200/5000 24% ETA 9.5s | val 1000 inv 150 catch 30 unk 15 dnm 5 | 3 retry 14:05'],
    [
      120,
      '1200/5000 24% ETA 9.5s | val 1000 inv 150 catch 30 unk 15 dnm 5 | 3 addresses retry at 14:05 (greylisting)',
    ],
    [
      200,
      '█████░░░░░░░░░░░░░░░ 1200/5000 rows (24.0%), 400/s, ETA 9.5s | valid 1000 invalid 150 catch_all 30 unknown 15 do_not_mail 5 | 3 addresses retry at 14:05 (greylisting)',
    ],
  ])(
    'says on a %i-column terminal how many addresses wait for a greylisting retry, and when',
    (columns, expected) => {
      const line = fitProgressLine(waiting, columns, none);
      expect(line).toBe(expected);
      expect(line.length).toBeLessThan(columns);
    },
  );

  it('drops the statuses at zero before it abbreviates the others', () => {
    const view = { ...busy, counts: { ...emptyCounts(), valid: 1000, unknown: 15 } };
    expect(fitProgressLine(view, 80, none)).toBe(
      '1200/5000 rows (24.0%), 400/s, ETA 9.5s | valid 1000 unknown 15',
    );
  });

  it('shows every status while all are at zero, and no share or ETA without a total', () => {
    const view = { done: 0, total: undefined, rate: '0/s', eta: undefined, counts: emptyCounts() };
    expect(fitProgressLine(view, 80, none)).toBe(
      '0 rows, 0/s | valid 0 invalid 0 catch_all 0 unknown 0 do_not_mail 0',
    );
    expect(fitProgressLine(view, 40, none)).toBe('0 | val 0 inv 0 catch 0 unk 0 dnm 0');
  });

  it('cuts only what does not fit even as short counts, as plain text, and treats a bad width as 80', () => {
    const line = fitProgressLine(busy, 20, colour);
    expect(line).toBe('val 1000 inv 150 ca');
    expect(fitProgressLine(busy, Number.NaN, none)).toBe(fitProgressLine(busy, 80, none));
    expect(fitProgressLine(busy, 0, none)).toBe(fitProgressLine(busy, 80, none));
  });
});

describe('retry wording', () => {
  it('writes local HH:MM and one or several addresses', () => {
    expect(clockTime(new Date(2026, 10, 27, 9, 5, 59).getTime())).toBe('09:05');
    expect(clockTime(new Date(2026, 10, 27, 23, 40).getTime())).toBe('23:40');
    expect(retryNote({ count: 1, at: '09:05' })).toBe('1 address retries at 09:05 (greylisting)');
    expect(retryNote({ count: 2, at: '09:05' })).toBe('2 addresses retry at 09:05 (greylisting)');
  });
});
