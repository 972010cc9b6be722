import { describe, expect, it } from 'vitest';
import { findEmailColumn, InputError, type InputRecord, openInput } from '../../src/io/input.js';

async function* chunks(text: string): AsyncGenerator<string> {
  yield text;
}

async function open(text: string, options: { column?: string; text?: boolean } = {}) {
  const opened = await openInput(chunks(text), { name: 'list.csv', ...options });
  if (opened === undefined) return undefined;
  const records: InputRecord[] = [];
  for await (const record of opened.records) records.push(record);
  return { shape: opened.shape, records };
}

async function failure(text: string, options: { column?: string } = {}): Promise<InputError> {
  try {
    await open(text, options);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return error as InputError;
  }
  throw new Error('expected an error');
}

describe('findEmailColumn', () => {
  it('finds the address column by its usual names, ignoring case, spaces, - and _', () => {
    expect(findEmailColumn(['Name', 'E-Mail'])).toBe(1);
    expect(findEmailColumn(['id', 'Email Address'])).toBe(1);
    expect(findEmailColumn(['email_address', 'x'])).toBe(0);
    expect(findEmailColumn(['first', 'MAIL'])).toBe(1);
    expect(findEmailColumn(['first', 'work_email'])).toBe(1);
    expect(findEmailColumn(['first', 'last'])).toBe(-1);
    expect(findEmailColumn(['email@x.test'])).toBe(-1);
  });
});

describe('openInput', () => {
  it('reads plain text as one address a line, trimmed, skipping blank lines', async () => {
    const read = await open('a@x.test\n\n  b@x.test  \r\n');
    expect(read?.shape).toMatchObject({
      format: 'text',
      columns: ['email'],
      emailIndex: 0,
      hasHeader: false,
    });
    expect(read?.records.map((record) => [record.line, record.email, record.cells])).toEqual([
      [1, 'a@x.test', ['a@x.test']],
      [3, 'b@x.test', ['b@x.test']],
    ]);
  });

  it('keeps a quoted local part with a comma in plain text when told the input is text', async () => {
    const read = await open('"a,b"@x.test\nc@x.test\n', { text: true });
    expect(read?.records.map((record) => record.email)).toEqual(['"a,b"@x.test', 'c@x.test']);
  });

  it('finds the address column of a CSV by its header and keeps the other columns', async () => {
    const read = await open('Name,E-mail,Company\nJane,jane@x.test,"Acme, Inc."\n');
    expect(read?.shape).toMatchObject({
      format: 'csv',
      columns: ['Name', 'E-mail', 'Company'],
      emailIndex: 1,
      hasHeader: true,
    });
    expect(read?.records).toEqual([
      { line: 2, cells: ['Jane', 'jane@x.test', 'Acme, Inc.'], email: 'jane@x.test', error: null },
    ]);
  });

  it('reads a one-column CSV with an email header, and semicolon or TAB CSVs', async () => {
    expect((await open('Email\na@x.test\n'))?.shape).toMatchObject({ format: 'csv', hasHeader: true });
    expect((await open('name;email\nA;a@x.test\n'))?.records[0]?.email).toBe('a@x.test');
    expect((await open('name\temail\nA\ta@x.test\n'))?.records[0]?.email).toBe('a@x.test');
  });

  it('uses --column, matching without case', async () => {
    const read = await open('work,home\nw@x.test,h@x.test\n', { column: 'HOME' });
    expect(read?.records[0]?.email).toBe('h@x.test');
  });

  it('reads a CSV without a header when a first-row cell holds an address', async () => {
    const read = await open('Jane,jane@x.test\nJoe,joe@x.test\n');
    expect(read?.shape).toMatchObject({ columns: ['column1', 'email'], emailIndex: 1, hasHeader: false });
    expect(read?.records.map((record) => record.email)).toEqual(['jane@x.test', 'joe@x.test']);
  });

  it('pads short rows and reports long or malformed rows as records with an error', async () => {
    const read = await open(
      'email,name,city\na@x.test\nb@x.test,B,C,extra\n"bad"x,1,2\nc@x.test,"C",Paris\n',
    );
    expect(read?.records.map((record) => [record.email, record.cells, record.error])).toEqual([
      ['a@x.test', ['a@x.test', '', ''], null],
      [
        'b@x.test,B,C,extra',
        ['b@x.test,B,C,extra', '', ''],
        'malformed CSV row at line 3: 4 fields, the header has 3',
      ],
      ['"bad"x,1,2', ['"bad"x,1,2', '', ''], 'malformed CSV row at line 4: "x" after a closing quote'],
      ['c@x.test', ['c@x.test', 'C', 'Paris'], null],
    ]);
  });

  it('reports an over-long line as a record with an error, not a crash', async () => {
    const read = await open(`a@x.test\n${'x'.repeat(70_000)}@x.test\nb@x.test\n`);
    expect(read?.records.map((record) => record.error === null)).toEqual([true, false, true]);
    expect(read?.records[1]?.error).toContain('longer than the limit');
    expect(read?.records[1]?.email.length).toBeLessThanOrEqual(200);
  });

  it('reads unicode addresses and a BOM', async () => {
    const read = await open('\uFEFFemail,名前\n用户@例子.广告,王\n');
    expect(read?.shape.columns).toEqual(['email', '名前']);
    expect(read?.records[0]?.email).toBe('用户@例子.广告');
  });

  it('counts the records it would read, malformed ones included, without building them', async () => {
    const inputs = [
      `a@x.test\n\n b@x.test\n${'x'.repeat(70_000)}\n`,
      'email,name\na@x.test,A\n"bad"x,1\nc@x.test,"open\nd@x.test,D\n\ne@x.test,"two\nlines"\n',
      'Jane,jane@x.test\nJoe,joe@x.test',
    ];
    for (const text of inputs) {
      const counted = await openInput(chunks(text), { name: 'x' });
      const read = await open(text);
      expect(await counted?.count()).toBe(read?.records.length);
    }
  });

  it('returns undefined for an input with no non-blank line', async () => {
    expect(await open('')).toBeUndefined();
    expect(await open('\n  \n\r\n')).toBeUndefined();
  });

  it('fails in one line when the column is missing or none can be found', async () => {
    const missing = await failure('work,home\nw@x.test,h@x.test\n', { column: 'email' });
    expect(missing.kind).toBe('usage');
    expect(missing.message).toBe('column "email" is not in the header of list.csv: "work", "home"');
    const none = await failure('first,last\nJane,Doe\n');
    expect(none.message).toBe(
      'no email column in the header of list.csv ("first", "last"); name it with --column',
    );
    const twice = await failure('Email,name,email\na@x.test,A,b@x.test\n', { column: 'email' });
    expect(twice.kind).toBe('usage');
    expect(twice.message).toBe(
      'column "email" names columns 1, 3 of the header of list.csv; rename all but one',
    );
    const header = await failure('"email,name\nx\n');
    expect(header.kind).toBe('unreadable');
  });
});
