import { chmod, lstat, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliError, EXIT } from '../../src/cli/io.js';
import {
  fileSink,
  formatOf,
  keyOf,
  layoutOf,
  type OutputFormat,
  type OutputRow,
  ResultWriter,
  resumeFrom,
  type Sink,
  sameKey,
} from '../../src/cli/output.js';
import type { InputRecord, InputShape } from '../../src/io/input.js';
import type { Status, VerificationResult } from '../../src/result.js';

const CSV_SHAPE: InputShape = {
  format: 'csv',
  delimiter: ',',
  columns: ['name', 'email', 'status'],
  emailIndex: 1,
  hasHeader: true,
};
const TEXT_SHAPE: InputShape = {
  format: 'text',
  delimiter: ',',
  columns: ['email'],
  emailIndex: 0,
  hasHeader: false,
};

function result(email: string, status: Status): VerificationResult {
  return {
    email,
    normalized: status === 'invalid' ? null : email,
    user: 'u',
    domain: 'x.test',
    status,
    sub_status: status === 'invalid' ? 'failed_syntax_check' : null,
    score: status === 'valid' ? 100 : 0,
    disposable: false,
    role: false,
    free: true,
    accept_all: false,
    did_you_mean: null,
    mx_record: null,
    smtp_provider: null,
  };
}

function row(shape: InputShape, cells: string[], status: Status, error: string | null = null): OutputRow {
  const email = cells[shape.emailIndex] ?? '';
  const record: InputRecord = { line: 1, cells, email, error };
  return { record, result: result(email.trim(), status), error };
}

function memorySink(): Sink & { text: string; closed: boolean } {
  const sink = {
    text: '',
    closed: false,
    async write(text: string) {
      sink.text += text;
    },
    async close() {
      sink.closed = true;
    },
  };
  return sink;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailvet-output-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('formatOf', () => {
  it('takes --format first, then the extension, then CSV', () => {
    expect(formatOf('NDJSON', 'out.csv')).toBe('ndjson');
    expect(formatOf(undefined, '/tmp/out.JSON')).toBe('json');
    expect(formatOf(undefined, 'out.jsonl')).toBe('ndjson');
    expect(formatOf(undefined, 'out.ndjson')).toBe('ndjson');
    expect(formatOf(undefined, 'out.txt')).toBe('csv');
    expect(formatOf(undefined, undefined)).toBe('csv');
  });

  it('rejects an unknown format in one line', () => {
    expect(() => formatOf('xml', undefined)).toThrow('--format must be csv, json or ndjson, got "xml"');
  });
});

describe('layoutOf', () => {
  it('puts the input columns first and prefixes result columns whose names are taken', () => {
    const layout = layoutOf('csv', CSV_SHAPE, false, 'always');
    expect(layout.header).toEqual([
      'name',
      'email',
      'status',
      'normalized',
      'user',
      'domain',
      'mailvet_status',
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
    ]);
    expect(layout.header[layout.statusIndex]).toBe('mailvet_status');
    expect(layoutOf('csv', TEXT_SHAPE, true, 'always').header.slice(-2)).toEqual([
      'error',
      'smtp_transcript',
    ]);
  });
});

describe('ResultWriter', () => {
  it('writes CSV rows: input cells, result fields, error, RFC 4180 quoting, formula-safe', async () => {
    const sink = memorySink();
    const writer = new ResultWriter(sink, layoutOf('csv', CSV_SHAPE, false, 'always'), undefined);
    await writer.add(row(CSV_SHAPE, ['Doe, Jane', 'jane@x.test', 'lead'], 'valid'));
    await writer.add(
      row(
        CSV_SHAPE,
        ['=cmd()', '"bad"x', ''],
        'invalid',
        'malformed CSV row at line 3: "x" after a closing quote',
      ),
    );
    await writer.finish();
    const lines = sink.text.split('\r\n');
    expect(lines[0]).toBe(
      'name,email,status,normalized,user,domain,mailvet_status,sub_status,score,disposable,role,free,accept_all,did_you_mean,mx_record,smtp_provider,reason,error',
    );
    expect(lines[1]).toBe(
      '"Doe, Jane",jane@x.test,lead,jane@x.test,u,x.test,valid,,100,false,false,true,false,,,,,',
    );
    expect(lines[2]).toBe(
      `'=cmd(),"""bad""x",,,u,x.test,invalid,failed_syntax_check,0,false,false,true,false,,,,,"malformed CSV row at line 3: ""x"" after a closing quote"`,
    );
    expect(lines[3]).toBe('');
    expect(sink.closed).toBe(true);
  });

  it('writes NDJSON with the input columns of a CSV and the error of a bad row', async () => {
    const sink = memorySink();
    const writer = new ResultWriter(sink, layoutOf('ndjson', CSV_SHAPE, false, 'always'), undefined);
    await writer.add(row(CSV_SHAPE, ['Jane', 'jane@x.test', 'lead'], 'valid'));
    await writer.add(row(CSV_SHAPE, ['', 'oops', ''], 'invalid', 'bad row'));
    await writer.finish();
    const [first, second, end] = sink.text.split('\n');
    expect(JSON.parse(first!)).toEqual({
      ...result('jane@x.test', 'valid'),
      input: { name: 'Jane', email: 'jane@x.test', status: 'lead' },
    });
    expect(JSON.parse(second!)).toMatchObject({ email: 'oops', status: 'invalid', error: 'bad row' });
    expect(end).toBe('');
  });

  it('writes a JSON array with one object a line, valid with zero, one or many rows', async () => {
    for (const count of [0, 1, 3]) {
      const sink = memorySink();
      const writer = new ResultWriter(sink, layoutOf('json', TEXT_SHAPE, false, 'always'), undefined);
      for (let index = 0; index < count; index++)
        await writer.add(row(TEXT_SHAPE, [`r${index}@x.test`], 'valid'));
      await writer.finish();
      const parsed = JSON.parse(sink.text) as VerificationResult[];
      expect(parsed.map((entry) => entry.email)).toEqual(
        Array.from({ length: count }, (_, index) => `r${index}@x.test`),
      );
      expect(parsed.every((entry) => !('input' in entry))).toBe(true);
      expect(sink.text.split('\n')).toHaveLength(count + 3);
    }
  });

  it('buffers small rows into large writes', async () => {
    let writes = 0;
    const sink: Sink = {
      async write() {
        writes++;
      },
      async close() {},
    };
    const writer = new ResultWriter(sink, layoutOf('ndjson', TEXT_SHAPE, false, 'always'), undefined);
    for (let index = 0; index < 2000; index++)
      await writer.add(row(TEXT_SHAPE, [`r${index}@x.test`], 'valid'));
    await writer.finish();
    expect(writes).toBeGreaterThan(1);
    expect(writes).toBeLessThan(20);
  });
});

describe('fileSink', () => {
  it('writes a temporary file beside the output and renames it over the output when closed', async () => {
    const path = join(dir, 'sink.csv');
    await writeFile(path, 'old content\n');
    await chmod(path, 0o640);
    const sink = await fileSink(path, false);
    await sink.write('new ');
    // Until the sink is closed, the output is what it was, and the rows are in one hidden file beside it.
    expect(await readFile(path, 'utf8')).toBe('old content\n');
    const beside = (await readdir(dir)).filter(
      (name) => name.startsWith('.sink.csv.') && name.endsWith('.tmp'),
    );
    expect(beside).toHaveLength(1);
    expect(await readFile(join(dir, beside[0]!), 'utf8')).toBe('new ');
    await sink.write('content\n');
    await sink.close();
    expect(await readFile(path, 'utf8')).toBe('new content\n');
    expect((await stat(path)).mode & 0o777).toBe(0o640);
    expect((await readdir(dir)).filter((name) => name.startsWith('.sink.csv.'))).toEqual([]);
  });

  it('follows a symbolic link: the file it points to gets the content, the link stays', async () => {
    const real = join(dir, 'sink-real.csv');
    const link = join(dir, 'sink-link.csv');
    await writeFile(real, 'old\n');
    await symlink(real, link);
    const sink = await fileSink(link, false);
    await sink.write('new\n');
    await sink.close();
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readFile(real, 'utf8')).toBe('new\n');
  });

  it('appends to a copy of the output, and creates a missing one', async () => {
    const path = join(dir, 'sink-append.csv');
    await writeFile(path, 'row 1\n');
    const sink = await fileSink(path, true);
    await sink.write('row 2\n');
    await sink.close();
    expect(await readFile(path, 'utf8')).toBe('row 1\nrow 2\n');
    const fresh = join(dir, 'sink-fresh.csv');
    const created = await fileSink(fresh, true);
    await created.write('row 1\n');
    await created.close();
    expect(await readFile(fresh, 'utf8')).toBe('row 1\n');
  });

  it('fails with a CLI error naming the output when its directory is missing, leaving nothing behind', async () => {
    const path = join(dir, 'no-such-dir', 'out.csv');
    await expect(fileSink(path, false)).rejects.toThrow(
      new CliError(EXIT.io, `cannot write ${path}: no such file or directory`),
    );
  });
});

async function writeRows(path: string, format: OutputFormat, shape: InputShape, statuses: Status[]) {
  const writer = new ResultWriter(
    await fileSink(path, false),
    layoutOf(format, shape, false, 'always'),
    undefined,
  );
  for (const [index, status] of statuses.entries()) {
    const cells = shape.format === 'csv' ? [`N${index}`, `r${index}@x.test`, 's'] : [`r${index}@x.test`];
    await writer.add(row(shape, cells, status));
  }
  await writer.finish();
}

describe('resumeFrom', () => {
  it('returns undefined for a missing or empty output', async () => {
    const layout = layoutOf('csv', CSV_SHAPE, false, 'always');
    expect(await resumeFrom(join(dir, 'missing.csv'), layout)).toBeUndefined();
    await writeFile(join(dir, 'empty.json'), '');
    expect(
      await resumeFrom(join(dir, 'empty.json'), layoutOf('json', TEXT_SHAPE, false, 'always')),
    ).toBeUndefined();
  });

  for (const format of ['csv', 'json', 'ndjson'] as const) {
    it(`counts the complete ${format} rows and their statuses, cutting a row cut short`, async () => {
      const path = join(dir, `cut.${format}`);
      const shape = format === 'csv' ? CSV_SHAPE : TEXT_SHAPE;
      await writeRows(path, format, shape, ['valid', 'invalid', 'valid', 'unknown']);
      const whole = await readFile(path);
      const layout = layoutOf(format, shape, false, 'always');
      // Cut the file in the middle of the last row, as a killed process would leave it.
      const lastRowStart = whole.lastIndexOf(format === 'csv' ? 'N3' : '{');
      await writeFile(path, whole.subarray(0, lastRowStart + 5));
      const point = await resumeFrom(path, layout);
      expect(point).toMatchObject({ done: 3, counts: { valid: 2, invalid: 1, unknown: 0 } });
      expect(sameKey(point!.lastKey!, format === 'csv' ? 'r2@x.test' : 'r2@x.test')).toBe(true);
      // What is left is exactly three rows, and appending continues it validly.
      const writer = new ResultWriter(await fileSink(path, true), layout, point!.done);
      const cells = format === 'csv' ? ['N3', 'r3@x.test', 's'] : ['r3@x.test'];
      await writer.add(row(shape, cells, 'unknown'));
      await writer.finish();
      expect((await readFile(path)).equals(whole)).toBe(true);
    });
  }

  it('resumes a JSON array that was closed, and one with no row yet', async () => {
    const path = join(dir, 'closed.json');
    await writeRows(path, 'json', TEXT_SHAPE, ['valid', 'valid']);
    const layout = layoutOf('json', TEXT_SHAPE, false, 'always');
    expect(await resumeFrom(path, layout)).toMatchObject({ done: 2, lastKey: 'r1@x.test' });
    await writeFile(path, '[\n');
    const point = await resumeFrom(path, layout);
    expect(point).toMatchObject({ done: 0, lastKey: null });
    const writer = new ResultWriter(await fileSink(path, true), layout, point!.done);
    await writer.add(row(TEXT_SHAPE, ['a@x.test'], 'valid'));
    await writer.finish();
    expect(JSON.parse(await readFile(path, 'utf8'))).toHaveLength(1);
  });

  it('refuses to resume an output written for other columns, or not by mailvet', async () => {
    const path = join(dir, 'other.csv');
    await writeRows(path, 'csv', CSV_SHAPE, ['valid']);
    await expect(resumeFrom(path, layoutOf('csv', TEXT_SHAPE, false, 'always'))).rejects.toMatchObject({
      exitCode: EXIT.io,
      message: expect.stringContaining('was written for other columns'),
    });
    const json = join(dir, 'other.json');
    await writeFile(json, '{"not":"an array"}\n');
    await expect(resumeFrom(json, layoutOf('json', TEXT_SHAPE, false, 'always'))).rejects.toBeInstanceOf(
      CliError,
    );
  });

  it('matches keys through the anti-formula quote of CSV', () => {
    const layout = layoutOf('csv', TEXT_SHAPE, false, 'always');
    const record: InputRecord = { line: 1, cells: ['=a@x.test'], email: '=a@x.test', error: null };
    expect(sameKey("'=a@x.test", keyOf(record, layout))).toBe(true);
    expect(sameKey('b@x.test', keyOf(record, layout))).toBe(false);
  });
});
