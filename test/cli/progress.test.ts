import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { emptyCounts } from '../../src/cli/output.js';
import {
  createProgress,
  formatDuration,
  formatRate,
  progressLine,
  summaryTable,
} from '../../src/cli/progress.js';
import { colourWanted, createStyle, plain } from '../../src/cli/style.js';

function capture(tty = false) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  if (tty) Object.assign(stream, { isTTY: true, columns: 160, cursorTo: () => true, clearLine: () => true });
  return { stream, text: () => text };
}

describe('formatting', () => {
  it('formats durations and rates', () => {
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(3_210)).toBe('3.2s');
    expect(formatDuration(245_000)).toBe('4m05s');
    expect(formatDuration(7_620_000)).toBe('2h07m');
    expect(formatDuration(Number.NaN)).toBe('?');
    expect(formatRate(1000, 3200)).toBe('313/s');
    expect(formatRate(9, 2000)).toBe('4.5/s');
    expect(formatRate(0, 0)).toBe('0/s');
  });

  it('writes a progress line with total, share, rate, ETA and counts per status', () => {
    const counts = { ...emptyCounts(), valid: 1000, invalid: 200 };
    expect(progressLine({ done: 1200, counts, elapsedMs: 3000 }, 5000, 0)).toBe(
      '1200/5000 rows (24.0%), 400/s, ETA 9.5s | valid 1000, invalid 200, catch_all 0, unknown 0, do_not_mail 0',
    );
    expect(progressLine({ done: 30, counts, elapsedMs: 1000 }, undefined, 10)).toMatch(
      /^30 rows, 20\.0\/s \| /,
    );
  });
});

describe('createProgress without a terminal', () => {
  it('prints a plain line at most once per interval, by the injected clock', () => {
    let now = 0;
    const out = capture();
    const progress = createProgress({
      stream: out.stream,
      tty: false,
      style: createStyle(false),
      total: 10,
      counts: emptyCounts(),
      now: () => now,
      intervalMs: 1000,
    });
    const counts = emptyCounts();
    for (let done = 1; done <= 10; done++) {
      counts.valid++;
      now += 300;
      progress.update(done, { ...counts });
    }
    progress.stop();
    const lines = out.text().trim().split('\n');
    expect(lines).toEqual([
      'mailvet: 4/10 rows (40.0%), 3.3/s, ETA 1.8s | valid 4, invalid 0, catch_all 0, unknown 0, do_not_mail 0',
      'mailvet: 8/10 rows (80.0%), 3.3/s, ETA 600ms | valid 8, invalid 0, catch_all 0, unknown 0, do_not_mail 0',
    ]);
    expect(out.text()).not.toContain('\u001b[');
  });
});

describe('createProgress while greylisting retries wait', () => {
  it('says how many rows retry and when, and the ETA waits for the last retry instead of saying 0', () => {
    let now = new Date(2026, 10, 27, 14, 0, 0).getTime();
    const out = capture();
    let waiting: { count: number; nextDueMs: number; lastDueMs: number } | undefined;
    const progress = createProgress({
      stream: out.stream,
      tty: false,
      style: createStyle(false),
      total: 10,
      counts: emptyCounts(),
      now: () => now,
      intervalMs: 1000,
      retries: () => waiting,
    });
    now += 1000;
    waiting = { count: 2, nextDueMs: now + 60_000, lastDueMs: now + 300_000 };
    progress.update(9, { ...emptyCounts(), valid: 9 });
    waiting = undefined;
    now += 1000;
    progress.update(10, { ...emptyCounts(), valid: 10 });
    progress.stop();
    expect(out.text().trim().split('\n')).toEqual([
      'mailvet: 9/10 rows (90.0%), 9.0/s, ETA 5m00s | valid 9, invalid 0, catch_all 0, unknown 0, do_not_mail 0 | 2 addresses retry at 14:01 (greylisting)',
      'mailvet: 10/10 rows (100.0%), 5.0/s, ETA 0ms | valid 10, invalid 0, catch_all 0, unknown 0, do_not_mail 0',
    ]);
  });
});

describe('createProgress on a terminal', () => {
  it('draws a cli-progress bar with done/total, rate, ETA and coloured counts', () => {
    const out = capture(true);
    let now = 0;
    const progress = createProgress({
      stream: out.stream,
      tty: true,
      style: createStyle(true),
      total: 4,
      done: 2,
      counts: { ...emptyCounts(), valid: 2 },
      now: () => now,
    });
    now = 1000;
    progress.update(4, { ...emptyCounts(), valid: 3, invalid: 1 });
    progress.stop();
    const text = plain(out.text());
    expect(text).toContain('█'.repeat(20));
    expect(text).toContain(
      '4/4 rows (100.0%), 2.0/s, ETA 0ms | valid 3 invalid 1 catch_all 0 unknown 0 do_not_mail 0',
    );
    expect(out.text()).toContain('\u001b[32mvalid 3\u001b[0m');
  });
});

describe('createProgress on a narrow terminal', () => {
  const frames = (columns: number | undefined) => {
    const out = capture(true);
    Object.assign(out.stream, { columns });
    const progress = createProgress({
      stream: out.stream,
      tty: true,
      style: createStyle(true),
      total: 10,
      counts: emptyCounts(),
      now: () => 0,
    });
    progress.update(10, { ...emptyCounts(), valid: 4, invalid: 3, catch_all: 1, unknown: 1, do_not_mail: 1 });
    progress.stop();
    return out.text();
  };

  it("fits the line to the stream's columns: the bar goes first, the counts are never cut", () => {
    expect(plain(frames(160))).toContain('█'.repeat(20));
    expect(plain(frames(100))).toContain(
      '10/10 rows (100.0%), 0/s, ETA 0ms | valid 4 invalid 3 catch_all 1 unknown 1 do_not_mail 1',
    );
    expect(plain(frames(100))).not.toContain('█');
    const narrow = frames(40);
    expect(plain(narrow)).toContain('10/10 | val 4 inv 3 catch 1 unk 1 dnm 1');
    expect(narrow).toContain('\u001b[32mval 4\u001b[0m');
  });

  it('takes 80 columns when the stream does not say', () => {
    expect(plain(frames(undefined))).toContain(
      '10/10 rows (100.0%), 0/s, ETA 0ms | val 4 inv 3 catch 1 unk 1 dnm 1\u001b[0K',
    );
  });
});

describe('summaryTable', () => {
  it('shows rows and share per status, the total and the pace', () => {
    const counts = { ...emptyCounts(), valid: 812, invalid: 100, catch_all: 50, unknown: 30, do_not_mail: 8 };
    const table = summaryTable(counts, { processed: 1000, elapsedMs: 3200 }, createStyle(false));
    expect(table).toBe(
      [
        '  status        rows   share',
        '  valid          812   81.2%',
        '  invalid        100   10.0%',
        '  catch_all       50    5.0%',
        '  unknown         30    3.0%',
        '  do_not_mail      8    0.8%',
        '  total         1000  100.0%',
        '1000 rows verified in 3.2s (313/s)',
        '',
      ].join('\n'),
    );
    expect(plain(summaryTable(counts, { processed: 1000, elapsedMs: 3200 }, createStyle(true)))).toBe(table);
  });
});

describe('colourWanted', () => {
  it('colours a terminal only, and never with NO_COLOR or TERM=dumb', () => {
    expect(colourWanted(true, {})).toBe(true);
    expect(colourWanted(false, {})).toBe(false);
    expect(colourWanted(true, { NO_COLOR: '1' })).toBe(false);
    expect(colourWanted(true, { NO_COLOR: '' })).toBe(true);
    expect(colourWanted(true, { TERM: 'dumb' })).toBe(false);
  });
});
