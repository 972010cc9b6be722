import { chmod, link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { parseCsv, runCli, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-bulk-');
});
afterAll(async () => {
  await dir.remove();
});

const RESULT_COLUMNS = [
  'normalized',
  'user',
  'domain',
  'status',
  'sub_status',
  'score',
  'disposable',
  'role',
  'free',
  'accept_all',
  'did_you_mean',
  'mx_record',
  'smtp_provider',
  'reason',
  'error',
];

async function file(name: string, content: string): Promise<string> {
  const path = dir.file(name);
  await writeFile(path, content);
  return path;
}

/** What the verifier says about an address with the same offline options, to check rows against. */
async function expected(emails: string[]): Promise<VerificationResult[]> {
  const verifier = createVerifier({ dns: false, smtp: false });
  try {
    return await Promise.all(emails.map((email) => verifier.verify(email)));
  } finally {
    await verifier.dispose();
  }
}

function cellsOf(result: VerificationResult): string[] {
  return RESULT_COLUMNS.slice(0, -1).map((column) => {
    const value = result[column as keyof VerificationResult];
    return value === null || value === undefined ? '' : String(value);
  });
}

describe('mailvet bulk: CSV in, CSV out', () => {
  it('keeps the input columns and adds the result columns, row by row, in input order', async () => {
    const emails = [
      'jane@example.com',
      'info@mailinator.com',
      'nope',
      'Bob.Smith@gmial.com',
      '用户@例子.广告',
    ];
    const input = await file(
      'people.csv',
      `Name,E-mail,Company\n${emails.map((email, index) => `Person ${index},${email},"Acme, ${index}"`).join('\n')}\n`,
    );
    const out = dir.file('people.out.csv');
    const run = await runCli(['bulk', input, '-o', out, '--no-dns']);
    expect(run.code).toBe(EXIT.ok);
    expect(run.stdout).toBe('');
    const rows = parseCsv(await readFile(out, 'utf8'));
    expect(rows[0]).toEqual(['Name', 'E-mail', 'Company', ...RESULT_COLUMNS]);
    expect(rows).toHaveLength(emails.length + 1);
    const results = await expected(emails);
    for (const [index, email] of emails.entries()) {
      expect(rows[index + 1]).toEqual([
        `Person ${index}`,
        email,
        `Acme, ${index}`,
        ...cellsOf(results[index]!),
        '',
      ]);
    }
    expect(run.stderr).toMatch(/status +rows +share\n/);
    expect(run.stderr).toMatch(/ {2}total +5 +100\.0%\n5 rows verified in /);
    expect(run.stderr).toContain(`results: ${out}\n`);
  });

  it('finds the column by --column and reads semicolon CSVs', async () => {
    const input = await file('semi.csv', 'work;home\nw@example.com;h@example.com\n');
    const run = await runCli(['bulk', input, '--column', 'home', '--no-dns']);
    const rows = parseCsv(run.stdout);
    expect(rows[0]?.slice(0, 3)).toEqual(['work', 'home', 'normalized']);
    expect(rows[1]?.slice(0, 3)).toEqual(['w@example.com', 'h@example.com', 'h@example.com']);
  });

  it('keeps pass-through cells byte for byte unless they would run as a formula (--formula-escape)', async () => {
    const cells = [
      '+44 20 7946 0958',
      '-5.20',
      '@vip',
      '+1 (555) 123-4567',
      '=HYPERLINK("http://x.example")',
      '+A1',
      '@SUM(A1)',
      "-2+3+cmd|' /C calc'!A0",
    ];
    const input = await file(
      'formula.csv',
      `email,note\n${cells.map((cell) => `a@example.com,"${cell.replaceAll('"', '""')}"`).join('\n')}\n`,
    );
    const notes = async (extra: string[]) => {
      const run = await runCli(['bulk', input, '--no-dns', ...extra]);
      expect(run.code).toBe(EXIT.ok);
      return parseCsv(run.stdout)
        .slice(1)
        .map((row) => row[1]);
    };
    const quoted = (cell: string) => `'${cell}`;
    const byAuto = [...cells.slice(0, 4), ...cells.slice(4).map(quoted)];
    expect(await notes([])).toEqual(byAuto);
    expect(await notes(['--formula-escape', 'auto'])).toEqual(byAuto);
    expect(await notes(['--formula-escape', 'always'])).toEqual(cells.map(quoted));
    expect(await notes(['--formula-escape', 'never'])).toEqual(cells);
  });

  it('reports malformed rows as rows with an error, and goes on', async () => {
    const input = await file(
      'bad.csv',
      'email,name\na@example.com,A\n"broken"x@example.com,B\nc@example.com,"C\nd@example.com,D\ne@example.com,E,extra\n',
    );
    const run = await runCli(['bulk', input, '--no-dns']);
    expect(run.code).toBe(EXIT.ok);
    const rows = parseCsv(run.stdout);
    const errorIndex = rows[0]!.indexOf('error');
    const statusIndex = rows[0]!.indexOf('status');
    expect(rows.slice(1).map((row) => [row[0], row[statusIndex], row[errorIndex]])).toEqual([
      ['a@example.com', 'unknown', ''],
      ['"broken"x@example.com,B', 'invalid', 'malformed CSV row at line 3: "x" after a closing quote'],
      ['c@example.com,"C', 'invalid', 'malformed CSV row at line 4: a quoted field is not closed'],
      ['d@example.com', 'unknown', ''],
      ['e@example.com,E,extra', 'invalid', 'malformed CSV row at line 6: 3 fields, the header has 2'],
    ]);
    expect(run.stderr).toContain('3 rows could not be read or verified: see the error column\n');
  });

  it('reports an over-long line as a row with an error', async () => {
    const input = await file('long.txt', `a@example.com\n${'x'.repeat(100_000)}\nb@example.com\n`);
    const run = await runCli(['bulk', input, '--no-dns', '--format', 'ndjson']);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as VerificationResult & { error?: string });
    expect(lines.map((line) => line.error ?? null)).toEqual([null, 'line 2 is longer than the limit', null]);
    expect(lines[1]?.email.length).toBeLessThanOrEqual(200);
  });
});

describe('mailvet bulk: formats and sources', () => {
  it('reads plain text from standard input and writes CSV to standard output', async () => {
    const run = await runCli(['bulk', '-', '--no-dns'], { stdin: 'a@example.com\n\n  b@example.com \n' });
    expect(run.code).toBe(EXIT.ok);
    const rows = parseCsv(run.stdout);
    expect(rows[0]).toEqual(['email', ...RESULT_COLUMNS]);
    expect(rows.slice(1).map((row) => row[0])).toEqual(['a@example.com', 'b@example.com']);
    expect(run.stderr).toContain('\n2 rows verified in ');
  });

  it('chooses JSON or NDJSON by the output extension, and --format wins', async () => {
    const input = await file('list.txt', 'a@example.com\nb@example.com\n');
    await runCli(['bulk', input, '-o', dir.file('out.json'), '--no-dns']);
    const array = JSON.parse(await readFile(dir.file('out.json'), 'utf8')) as VerificationResult[];
    expect(array.map((result) => result.email)).toEqual(['a@example.com', 'b@example.com']);
    expect(array[0]).toEqual((await expected(['a@example.com']))[0]);
    await runCli(['bulk', input, '-o', dir.file('out.jsonl'), '--no-dns']);
    const lines = (await readFile(dir.file('out.jsonl'), 'utf8')).trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as VerificationResult).email)).toEqual([
      'a@example.com',
      'b@example.com',
    ]);
    await runCli(['bulk', input, '-o', dir.file('forced.json'), '--format', 'csv', '--no-dns']);
    expect(await readFile(dir.file('forced.json'), 'utf8')).toMatch(/^email,normalized,/);
  });

  it('adds the input columns of a CSV to JSON records', async () => {
    const input = await file('with-columns.csv', 'email,plan\na@example.com,pro\n');
    const run = await runCli(['bulk', input, '--format', 'json', '--no-dns']);
    expect(JSON.parse(run.stdout)).toEqual([
      expect.objectContaining({ email: 'a@example.com', input: { email: 'a@example.com', plan: 'pro' } }),
    ]);
  });
});

describe('mailvet bulk: errors', () => {
  it('fails in one line with exit 3 for a missing, a directory, an empty or a header-only input', async () => {
    const cases: [string, string][] = [
      [dir.file('missing.csv'), `cannot read ${dir.file('missing.csv')}: no such file`],
      [dir.path, `cannot read ${dir.path}: it is a directory`],
      [await file('empty.csv', ''), `${dir.file('empty.csv')} is empty`],
      [await file('blank.txt', '\n \n'), `${dir.file('blank.txt')} is empty`],
      [
        await file('header.csv', 'email,name\n'),
        `${dir.file('header.csv')} has a header row but no addresses`,
      ],
    ];
    for (const [input, message] of cases) {
      const run = await runCli(['bulk', input, '--no-dns']);
      expect(run).toEqual({ code: EXIT.io, stdout: '', stderr: `mailvet: ${message}\n` });
    }
    const stdin = await runCli(['bulk', '-', '--no-dns'], { stdin: '' });
    expect(stdin).toEqual({ code: EXIT.io, stdout: '', stderr: 'mailvet: standard input is empty\n' });
  });

  it.skipIf(process.getuid?.() === 0)('fails with exit 3 for an unreadable input', async () => {
    const input = await file('secret.csv', 'email\na@example.com\n');
    await chmod(input, 0o000);
    const run = await runCli(['bulk', input, '--no-dns']);
    expect(run).toEqual({
      code: EXIT.io,
      stdout: '',
      stderr: `mailvet: cannot read ${input}: permission denied\n`,
    });
  });

  it('fails with exit 3 when the input breaks while it is read', async () => {
    const stdin = new Readable({ read() {} });
    stdin.push('a@example.com\nb@example.com\n');
    setImmediate(() => stdin.destroy(Object.assign(new Error('input/output error'), { code: 'EIO' })));
    const run = await runCli(['bulk', '-', '-o', dir.file('broken.csv'), '--no-dns'], { stdin });
    expect(run).toEqual({ code: EXIT.io, stdout: '', stderr: 'mailvet: cannot read standard input: EIO\n' });
  });

  it('fails with exit 3 for an output it cannot write', async () => {
    const input = await file('ok.txt', 'a@example.com\n');
    const out = dir.file('no/such/dir/out.csv');
    const run = await runCli(['bulk', input, '-o', out, '--no-dns']);
    expect(run.code).toBe(EXIT.io);
    expect(run.stderr).toBe(`mailvet: cannot write ${out}: no such file or directory\n`);
  });

  it('refuses an output that is the input under another name (symlink, hard link, ./), and leaves it as it is', async () => {
    const input = await file('self.txt', 'a@example.com\nb@example.com\n');
    await symlink(input, dir.file('self-link.txt'));
    await link(input, dir.file('self-hard.txt'));
    for (const out of [dir.file('self-link.txt'), dir.file('self-hard.txt'), `${dir.file('.')}/./self.txt`]) {
      const run = await runCli(['bulk', input, '-o', out, '--no-dns']);
      expect(run, out).toMatchObject({
        code: EXIT.usage,
        stderr: 'mailvet: the output file must not be the input file\n',
      });
    }
    expect(await readFile(input, 'utf8')).toBe('a@example.com\nb@example.com\n');
  });

  it('fails with exit 2 for usage mistakes', async () => {
    const input = await file('usage.csv', 'first,last\nJane,Doe\n');
    const cases: [string[], string][] = [
      [['bulk'], 'bulk needs an input file, or - for standard input; see mailvet bulk --help'],
      [['bulk', input, 'other.csv'], 'bulk takes one input, got 2; use -o for the output'],
      [['bulk', input, '--resume'], '--resume needs an output file: -o <file>'],
      [['bulk', input, '-o', input], 'the output file must not be the input file'],
      [
        ['bulk', input, '--formula-escape', 'sometimes'],
        '--formula-escape must be auto, always or never, not "sometimes"',
      ],
      [
        ['bulk', input, '--formula-escape', '\u202e'],
        '--formula-escape must be auto, always or never, not "\u202e"',
      ],
      [['bulk', input], `no email column in the header of ${input} ("first", "last"); name it with --column`],
      [
        ['bulk', input, '--column', 'mail'],
        `column "mail" is not in the header of ${input}: "first", "last"`,
      ],
    ];
    for (const [argv, message] of cases) {
      const run = await runCli([...argv, '--no-dns']);
      expect(run, argv.join(' ')).toEqual({ code: EXIT.usage, stdout: '', stderr: `mailvet: ${message}\n` });
    }
  });
});

describe('mailvet bulk: progress', () => {
  it('prints plain progress lines when standard error is not a terminal', async () => {
    const input = await file(
      'progress.txt',
      Array.from({ length: 50 }, (_, index) => `p${index}@example.com`).join('\n'),
    );
    let now = 0;
    const run = await runCli(['bulk', input, '-o', dir.file('progress.csv'), '--no-dns'], {
      now: () => {
        now += 1000;
        return now;
      },
    });
    const lines = run.stderr.split('\n').filter((line) => line.startsWith('mailvet: '));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(
      /^mailvet: \d+\/50 rows \(\d+\.\d%\), [\d.]+\/s, ETA \S+ \| valid \d+, invalid \d+, catch_all \d+, unknown \d+, do_not_mail \d+$/,
    );
    expect(run.stderr).not.toContain('\u001b[');
  });

  it('draws a bar on a terminal, and still ends with the summary', async () => {
    const input = await file('bar.txt', 'a@example.com\nb@example.com\n');
    const run = await runCli(['bulk', input, '-o', dir.file('bar.csv'), '--no-dns'], {
      stderrTerminal: true,
    });
    expect(run.code).toBe(EXIT.ok);
    expect(run.stderr).toContain('2/2 rows (100.0%)');
    expect(run.stderr).toMatch(/█{20}/);
    expect(run.stderr).toContain('\u001b[33munknown 2\u001b[0m');
    expect(run.stderr).toMatch(/2 rows verified in/);
  });
});

/** A verifier that "presses Ctrl-C" when it is asked about `stop@example.com`. */
function interruptAt(controller: AbortController) {
  return (options: Parameters<typeof createVerifier>[0]): Verifier => {
    const real = createVerifier(options);
    return {
      verify(email, overrides) {
        if (email === 'stop@example.com') controller.abort();
        return real.verify(email, overrides);
      },
      dispose: () => real.dispose(),
    };
  };
}

describe('mailvet bulk: Ctrl-C and --resume', () => {
  for (const format of ['csv', 'json', 'ndjson'] as const) {
    it(`writes what is done, says how to resume, and --resume completes the same ${format} output`, async () => {
      const emails = Array.from({ length: 40 }, (_, index) =>
        index === 25 ? 'stop@example.com' : `r${index}@example.com`,
      );
      const input = await file(
        `resume-${format}.csv`,
        `id,email\n${emails.map((email, index) => `${index},${email}`).join('\n')}\n`,
      );
      const out = dir.file(`resume-out.${format}`);
      const controller = new AbortController();
      const argv = ['bulk', input, '-o', out, '--no-dns', '--concurrency', '2'];
      const first = await runCli(argv, {
        signal: controller.signal,
        createVerifier: interruptAt(controller),
      });
      expect(first.code).toBe(EXIT.interrupted);
      const done = Number(/interrupted; (\d+) of 40 rows are in/.exec(first.stderr)?.[1]);
      expect(done).toBeGreaterThanOrEqual(0);
      expect(done).toBeLessThan(26);
      expect(first.stderr).toContain(`Resume with:\n  mailvet ${argv.join(' ')} --resume\n`);
      const partial = await readFile(out, 'utf8');
      if (format === 'json') expect(JSON.parse(partial)).toHaveLength(done);
      if (format === 'csv') expect(parseCsv(partial)).toHaveLength(done + 1);
      if (format === 'ndjson') expect(partial.split('\n').filter(Boolean)).toHaveLength(done);

      const second = await runCli([...argv, '--resume']);
      expect(second.code).toBe(EXIT.ok);
      expect(second.stderr).toMatch(new RegExp(`${40 - done} rows verified in`));
      expect(second.stderr).toMatch(/ {2}total +40 +100\.0%/);
      const whole = await readFile(out, 'utf8');
      const fresh = dir.file(`fresh.${format}`);
      await runCli(['bulk', input, '-o', fresh, '--no-dns']);
      expect(whole).toBe(await readFile(fresh, 'utf8'));
    });
  }

  it('reports an interruption before the first row as such', async () => {
    const input = await file('early.txt', 'a@example.com\nb@example.com\n');
    const out = dir.file('early.ndjson');
    const run = await runCli(['bulk', input, '-o', out, '--no-dns'], { signal: AbortSignal.abort() });
    expect(run.code).toBe(EXIT.interrupted);
    expect(run.stderr).toContain(`mailvet: interrupted; 0 of 2 rows are in ${out}. Resume with:\n`);
    expect(await readFile(out, 'utf8')).toBe('');
    const toStdout = await runCli(['bulk', '-', '--no-dns'], {
      stdin: 'a@example.com\n',
      signal: AbortSignal.abort(),
    });
    expect(toStdout.code).toBe(EXIT.interrupted);
    expect(toStdout.stderr).toContain('mailvet: interrupted after 0 rows\n');
  });

  it('does nothing more when the output is already complete', async () => {
    const input = await file('complete.txt', 'a@example.com\nb@example.com\n');
    const out = dir.file('complete.csv');
    await runCli(['bulk', input, '-o', out, '--no-dns']);
    const before = await readFile(out, 'utf8');
    const again = await runCli(['bulk', input, '-o', out, '--no-dns', '--resume']);
    expect(again.code).toBe(EXIT.ok);
    expect(again.stderr).toContain('0 rows verified in');
    expect(await readFile(out, 'utf8')).toBe(before);
  });

  it('starts afresh when the output does not exist yet', async () => {
    const input = await file('fresh.txt', 'a@example.com\n');
    const run = await runCli(['bulk', input, '-o', dir.file('not-yet.csv'), '--no-dns', '--resume']);
    expect(run.code).toBe(EXIT.ok);
    expect(parseCsv(await readFile(dir.file('not-yet.csv'), 'utf8'))).toHaveLength(2);
  });

  it('refuses to resume an output that belongs to another input', async () => {
    const one = await file('one.txt', 'a@example.com\nb@example.com\nc@example.com\n');
    const other = await file('other.txt', 'x@example.com\ny@example.com\nz@example.com\n');
    const out = dir.file('mixed.csv');
    await runCli(['bulk', one, '-o', out, '--no-dns']);
    await writeFile(out, (await readFile(out, 'utf8')).split('\r\n').slice(0, 3).join('\r\n').concat('\r\n'));
    const run = await runCli(['bulk', other, '-o', out, '--no-dns', '--resume']);
    expect(run.code).toBe(EXIT.io);
    expect(run.stderr).toBe(
      `mailvet: cannot resume: row 2 of ${out} ("b@example.com") is not row 2 of ${other} ("y@example.com"); remove ${out} or pick another -o\n`,
    );
    const longer = await file('short.txt', 'a@example.com\n');
    const tooMany = await runCli(['bulk', longer, '-o', out, '--no-dns', '--resume']);
    expect(tooMany.stderr).toBe(`mailvet: cannot resume: ${out} has more rows (2) than ${longer}\n`);
    const foreign = await file('foreign.ndjson', 'this is not ndjson\n{"status":"valid"}\n');
    const notOurs = await runCli(['bulk', one, '-o', foreign, '--no-dns', '--resume']);
    expect(notOurs.stderr).toBe(`mailvet: cannot resume: ${foreign} is not NDJSON written by mailvet bulk\n`);
    expect(await readFile(foreign, 'utf8')).toBe('this is not ndjson\n{"status":"valid"}\n');
    const csv = await file('columns.csv', 'email,name\na@example.com,A\n');
    const columns = await runCli(['bulk', csv, '-o', out, '--no-dns', '--resume']);
    expect(columns.stderr).toBe(
      `mailvet: cannot resume: ${out} was written for other columns; remove it or pick another -o\n`,
    );
  });

  it('refuses to resume when an earlier row differs, even if the last one matches (the whole prefix is checked)', async () => {
    const first = await file('first.txt', 'a@example.com\nb@example.com\nc@example.com\nd@example.com\n');
    const edited = await file('edited.txt', 'a@example.com\nX@example.com\nc@example.com\nd@example.com\n');
    for (const extension of ['csv', 'ndjson']) {
      const out = dir.file(`prefix.${extension}`);
      await runCli(['bulk', first, '-o', out, '--no-dns']);
      const lines = (await readFile(out, 'utf8')).split(extension === 'csv' ? '\r\n' : '\n');
      const keep = extension === 'csv' ? 4 : 3; // header + 3 rows, or 3 rows
      await writeFile(
        out,
        `${lines.slice(0, keep).join(extension === 'csv' ? '\r\n' : '\n')}${extension === 'csv' ? '\r\n' : '\n'}`,
      );
      const run = await runCli(['bulk', edited, '-o', out, '--no-dns', '--resume']);
      expect(run.code, extension).toBe(EXIT.io);
      expect(run.stderr).toBe(
        `mailvet: cannot resume: the 3 rows of ${out} were not written for the first 3 rows of ${edited} (their addresses differ); remove ${out} or pick another -o\n`,
      );
      const same = await runCli(['bulk', first, '-o', out, '--no-dns', '--resume']);
      expect(same.code, extension).toBe(EXIT.ok);
    }
  });

  it('rejects an output inside a directory it cannot create', async () => {
    await mkdir(dir.file('sub'), { recursive: true });
    const input = await file('sub-in.txt', 'a@example.com\n');
    const run = await runCli(['bulk', input, '-o', dir.file('sub'), '--no-dns']);
    expect(run.code).toBe(EXIT.io);
    expect(run.stderr).toMatch(/^mailvet: cannot write .*sub: it is a directory\n$/);
  });
});
