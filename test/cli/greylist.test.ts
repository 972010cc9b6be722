import { readFile, writeFile } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greylistDelaysOf, greylistRetrier } from '../../src/cli/greylist.js';
import { EXIT } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { type SubStatus, verdictOf } from '../../src/result.js';
import { verdictOnlyResult } from '../../src/score.js';
import type { Verifier } from '../../src/verifier.js';
import { waitFor } from '../support/wait-for.js';
import { parseCsv, runCli, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-greylist-');
});
afterAll(async () => {
  await dir.remove();
});

/** A verifier whose `grey@` addresses are greylisted for their first `greyFor` answers; the rest are valid. */
function greylistingVerifier(greyFor: number) {
  const asked = new Map<string, number>();
  const verifier: Verifier = {
    async verify(email) {
      const times = (asked.get(email) ?? 0) + 1;
      asked.set(email, times);
      const subStatus: SubStatus | null = email.startsWith('grey') && times <= greyFor ? 'greylisted' : null;
      return verdictOnlyResult(
        email,
        subStatus === null ? { status: 'valid', sub_status: null } : verdictOf(subStatus),
      );
    },
    dispose: async () => undefined,
  };
  return { verifier, asked };
}

async function list(name: string, emails: readonly string[]): Promise<string> {
  const path = dir.file(name);
  await writeFile(path, `email\n${emails.join('\n')}\n`);
  return path;
}

describe('greylistDelaysOf', () => {
  it('reads seconds or none, and names the flag in its error', () => {
    expect(greylistDelaysOf({ value: '60, 300', label: '--greylist-delays' })).toEqual([60_000, 300_000]);
    expect(greylistDelaysOf({ value: 'None', label: '--greylist-delays' })).toEqual([]);
    expect(greylistDelaysOf(undefined)).toBeUndefined();
    expect(() => greylistDelaysOf({ value: '60,-1', label: '--greylist-delays' })).toThrow(
      '--greylist-delays must be none or at most 10 comma-separated delays of 0-86400 seconds, got "60,-1"',
    );
  });
});

describe('greylistRetrier', () => {
  it('tells how many rows wait and when, and an abort ends the waits with the greylisted result', async () => {
    const { verifier, asked } = greylistingVerifier(Number.POSITIVE_INFINITY);
    const controller = new AbortController();
    let now = 1_000_000;
    const retrier = greylistRetrier((email) => verifier.verify(email), {
      delaysMs: [60_000],
      now: () => now,
      signal: controller.signal,
    });
    expect(retrier.waiting()).toBeUndefined();
    const first = retrier.verify('grey1@example.com');
    await waitFor(() => retrier.waiting()?.count === 1, { intervalMs: 0 });
    now += 5_000;
    const second = retrier.verify('grey2@example.com');
    await waitFor(() => retrier.waiting()?.count === 2, { intervalMs: 0 });
    expect(retrier.waiting()).toEqual({ count: 2, nextDueMs: 1_060_000, lastDueMs: 1_065_000 });
    expect((await retrier.verify('fine@example.com')).status).toBe('valid');
    controller.abort();
    expect((await first).sub_status).toBe('greylisted');
    expect((await second).sub_status).toBe('greylisted');
    expect(retrier.waiting()).toBeUndefined();
    expect(asked.get('grey1@example.com')).toBe(1);
  });

  it('retries after each delay and stops at the first answer that is not greylisting', async () => {
    const { verifier, asked } = greylistingVerifier(2);
    const retrier = greylistRetrier((email) => verifier.verify(email), {
      delaysMs: [0, 0, 0],
      now: Date.now,
      signal: new AbortController().signal,
    });
    expect((await retrier.verify('grey@example.com')).status).toBe('valid');
    expect(asked.get('grey@example.com')).toBe(3);
  });
});

describe('mailvet bulk --greylist-delays', () => {
  it('shows on a 100-column terminal how many addresses retry and when, with an ETA that waits for them', async () => {
    const input = await list('wait.csv', ['a@example.com', 'grey@example.com', 'c@example.com']);
    const { verifier } = greylistingVerifier(Number.POSITIVE_INFINITY);
    const stderr = new PassThrough();
    let text = '';
    stderr.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
    });
    Object.assign(stderr, { isTTY: true, columns: 100, cursorTo: () => true, clearLine: () => true });
    const controller = new AbortController();
    const start = new Date(2026, 10, 27, 14, 0, 10).getTime();
    const running = main(['bulk', input, '-o', dir.file('wait-out.csv'), '--greylist-delays', '60,300'], {
      stdin: Readable.from([]),
      stdout: new PassThrough(),
      stderr,
      stderrIsTTY: true,
      env: { NO_COLOR: '1' },
      signal: controller.signal,
      now: () => start,
      hostname: () => 'verifier.mailvet-test.net',
      createVerifier: () => verifier,
    });
    const line = await waitFor(() => /[^\r\n\u001b]*retries at[^\u001b]*/.exec(text)?.[0], {
      what: 'the retry note on the progress line',
    });
    expect(line).toContain('1 address retries at 14:01 (greylisting)');
    expect(line).toContain('1/3 rows (33.3%), 0/s, ETA 1m00s | valid 1 | 1 address retries at 14:01');
    controller.abort();
    expect(await running).toBe(EXIT.interrupted);
    expect(parseCsv(await readFile(dir.file('wait-out.csv'), 'utf8')).map((row) => row[0])).toEqual([
      'email',
      'a@example.com',
    ]);
  });

  it('writes the answer of the retry, and without the flag keeps the greylisted verdict', async () => {
    const input = await list('retry.csv', ['grey@example.com', 'b@example.com']);
    const retried = greylistingVerifier(1);
    const run = await runCli(['bulk', input, '--format', 'json', '--greylist-delays', '0'], {
      createVerifier: () => retried.verifier,
    });
    expect(run.code).toBe(EXIT.ok);
    expect(JSON.parse(run.stdout).map((row: { status: string }) => row.status)).toEqual(['valid', 'valid']);
    expect(retried.asked.get('grey@example.com')).toBe(2);

    const once = greylistingVerifier(1);
    const plain = await runCli(['bulk', input, '--format', 'json'], { createVerifier: () => once.verifier });
    expect(JSON.parse(plain.stdout)[0].sub_status).toBe('greylisted');
    expect(once.asked.get('grey@example.com')).toBe(1);
  });

  it('rejects a malformed schedule as a usage error naming the flag', async () => {
    const input = await list('bad.csv', ['a@example.com']);
    const run = await runCli(['bulk', input, '--greylist-delays', 'soon']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toContain('--greylist-delays must be none or at most 10 comma-separated delays');
  });
});

describe('finish now (Ctrl-C while retries wait)', () => {
  it('the retrier: finish ends every wait with the last result and a reason, and retries nothing after', async () => {
    const { verifier, asked } = greylistingVerifier(99);
    const controller = new AbortController();
    const waits: number[] = [];
    const retrier = greylistRetrier((email) => verifier.verify(email), {
      delaysMs: [3_600_000, 3_600_000],
      now: () => Date.UTC(2026, 10, 27, 8, 15),
      signal: controller.signal,
      onWait: (waiting) => waits.push(waiting.count),
    });
    expect(retrier.finish()).toBe(false); // nothing waits: nothing to finish (a Ctrl-C then stops the run)
    const pending = [retrier.verify('grey1@x.example'), retrier.verify('grey2@x.example')];
    await waitFor(() => retrier.waiting()?.count === 2);
    expect(waits).toEqual([1]); // told once, when the first row started to wait
    expect(retrier.finish()).toBe(true);
    const results = await Promise.all(pending);
    for (const result of results) {
      expect(result).toMatchObject({ status: 'unknown', sub_status: 'greylisted' });
      expect(result.reason).toBe(
        'greylisted; not retried: the job was finished before the retry due at 09:15 UTC',
      );
    }
    expect(retrier.waiting()).toBeUndefined();
    const later = await retrier.verify('grey3@x.example'); // greylisted after the finish: final at once
    expect(later).toMatchObject({ sub_status: 'greylisted' });
    expect(later.reason).toBeUndefined();
    expect([...asked.values()]).toEqual([1, 1, 1]);
    expect(controller.signal.aborted).toBe(false);
  });

  it('mailvet bulk: the first Ctrl-C while a row waits finishes now; the run goes on and exits 0', async () => {
    const { verifier, asked } = greylistingVerifier(99);
    const takers: (() => boolean)[] = [];
    const controller = new AbortController();
    const path = await list('finish.csv', ['grey@x.example', 'ok@y.example']);
    const out = dir.file('finish-out.csv');
    const running = runCli(['bulk', path, '-o', out, '--greylist-delays', '3600'], {
      createVerifier: () => verifier,
      signal: controller.signal,
      interrupts: {
        take(taker) {
          takers.push(taker);
          return () => takers.splice(takers.indexOf(taker), 1);
        },
      },
    });
    await waitFor(() => takers.length === 1 && (asked.get('grey@x.example') ?? 0) === 1 && takers[0]!());
    const done = await running;
    expect(done.code).toBe(EXIT.ok);
    expect(done.stderr).toContain('mailvet: a row waits for a greylisting retry at ');
    expect(done.stderr).toContain('mailvet: finishing now: the rows waiting for a greylisting retry keep');
    expect(done.stderr).not.toContain('interrupted');
    expect(takers).toEqual([]); // released at the end of the run
    const rows = parseCsv(await readFile(out, 'utf8'));
    const header = rows[0]!;
    const grey = rows[1]!;
    expect(grey[header.indexOf('sub_status')]).toBe('greylisted');
    expect(grey[header.indexOf('reason')]).toMatch(
      /^greylisted; not retried: the job was finished before the retry due at \d\d:\d\d UTC$/,
    );
    expect(rows[2]![header.indexOf('status')]).toBe('valid');
    expect(asked.get('grey@x.example')).toBe(1);
    expect(controller.signal.aborted).toBe(false);
  });
});
