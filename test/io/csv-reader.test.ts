import { describe, expect, it } from 'vitest';
import { CsvReader, type CsvRecord, sniffDelimiter } from '../../src/io/csv-reader.js';
import type { Line } from '../../src/io/line-splitter.js';

function linesOf(text: string): Line[] {
  let start = 0;
  return text.split('\n').map((part, index, all) => {
    const terminated = index < all.length - 1;
    const end = start + Buffer.byteLength(part) + (terminated ? 1 : 0);
    const crlf = terminated && part.endsWith('\r');
    const text = crlf ? part.slice(0, -1) : part;
    const line: Line = { text, number: index + 1, start, end, terminated, crlf, tooLong: false };
    start = end;
    return line;
  });
}

function read(text: string, delimiter = ',', limits = {}): CsvRecord[] {
  const reader = new CsvReader(delimiter, limits);
  const out: CsvRecord[] = [];
  for (const line of linesOf(text)) out.push(...reader.push(line));
  out.push(...reader.end());
  return out;
}

function shape(records: CsvRecord[]): (string[] | string)[] {
  return records.map((record) => (record.kind === 'row' ? record.fields : `! ${record.raw}`));
}

describe('CsvReader', () => {
  it('reads plain and quoted fields, doubled quotes, and quoted delimiters', () => {
    expect(shape(read('email,name\na@x.test,"Doe, Jane"\n"b""q@x.test",""\n'))).toEqual([
      ['email', 'name'],
      ['a@x.test', 'Doe, Jane'],
      ['b"q@x.test', ''],
    ]);
  });

  it('reads a quoted field across lines, and reports where the record starts and ends', () => {
    const records = read('a@x.test,"line one\nline two"\nb@x.test,z\n');
    expect(shape(records)).toEqual([
      ['a@x.test', 'line one\nline two'],
      ['b@x.test', 'z'],
    ]);
    expect(records[0]).toMatchObject({ line: 1, last: { number: 2 } });
  });

  it('skips blank lines between records', () => {
    expect(shape(read('a@x.test\n\n   \nb@x.test\n'))).toEqual([['a@x.test'], ['b@x.test']]);
  });

  it('keeps a quote inside an unquoted field', () => {
    expect(shape(read('x"y@x.test,1\n'))).toEqual([['x"y@x.test', '1']]);
  });

  it('reports a closing quote followed by text as a malformed row and goes on', () => {
    const records = read('a@x.test,1\n"bad"x@x.test,2\nc@x.test,3\n');
    expect(shape(records)).toEqual([['a@x.test', '1'], '! "bad"x@x.test,2', ['c@x.test', '3']]);
    const bad = records[1]!;
    expect(bad.kind === 'malformed' && bad.reason).toBe(
      'malformed CSV row at line 2: "x" after a closing quote',
    );
  });

  it('recovers the rows after an unclosed quote instead of swallowing the file', () => {
    const records = read('a@x.test,"unterminated\nb@x.test,2\nc@x.test,3\n');
    expect(shape(records)).toEqual(['! a@x.test,"unterminated', ['b@x.test', '2'], ['c@x.test', '3']]);
    expect(records[0]!.kind === 'malformed' && records[0]!.reason).toContain('not closed');
  });

  it('gives up on a quoted field after the line limit, then rereads the lines after it', () => {
    const text = `"open\n${Array.from({ length: 10 }, (_, index) => `r${index}@x.test`).join('\n')}\n`;
    const records = read(text, ',', { maxRecordLines: 4 });
    expect(shape(records)).toEqual([
      '! "open',
      ...Array.from({ length: 10 }, (_, index) => [`r${index}@x.test`]),
    ]);
  });

  it('gives up on a record over the character limit', () => {
    const records = read(`"${'x'.repeat(50)}\n${'y'.repeat(50)}\nok@x.test\n`, ',', { maxRecordChars: 60 });
    expect(shape(records)).toEqual([`! "${'x'.repeat(50)}`, ['y'.repeat(50)], ['ok@x.test']]);
  });

  it('loses only the bad line when an unclosed quote opens a long file', () => {
    const text = `"open\n${Array.from({ length: 20_000 }, (_, index) => `r${index}@x.test`).join('\n')}`;
    const records = read(text);
    expect(records).toHaveLength(20_001);
    expect(records[0]!.kind).toBe('malformed');
    expect(records.slice(1).every((record) => record.kind === 'row')).toBe(true);
  });

  it("keeps each line's own line break inside a quoted field: CRLF stays CRLF, LF stays LF", () => {
    const records = read('email,note\r\na@x.test,"one\r\ntwo"\r\nb@x.test,"three\nfour\r\nfive"\n');
    expect(shape(records)).toEqual([
      ['email', 'note'],
      ['a@x.test', 'one\r\ntwo'],
      ['b@x.test', 'three\nfour\r\nfive'],
    ]);
  });

  it('pairs lines of lone quotes into records of one line break', () => {
    const records = read(Array.from({ length: 6 }, () => '"').join('\n'));
    expect(shape(records)).toEqual([['\n'], ['\n'], ['\n']]);
  });

  it('reports an over-long line as malformed', () => {
    const reader = new CsvReader(',');
    const records = reader.push({
      text: 'xxx',
      number: 7,
      start: 0,
      end: 99_999,
      terminated: true,
      crlf: false,
      tooLong: true,
    });
    expect(records).toMatchObject([{ kind: 'malformed', line: 7, raw: 'xxx' }]);
  });

  it('reads other delimiters', () => {
    expect(shape(read('email;name\na@x.test;"A;B"\n', ';'))).toEqual([
      ['email', 'name'],
      ['a@x.test', 'A;B'],
    ]);
    expect(shape(read('email\tname\na@x.test\tA\n', '\t'))).toEqual([
      ['email', 'name'],
      ['a@x.test', 'A'],
    ]);
  });
});

describe('sniffDelimiter', () => {
  it('picks the most frequent delimiter outside quotes', () => {
    expect(sniffDelimiter('email,name,company')).toBe(',');
    expect(sniffDelimiter('email;name;"a,b,c,d"')).toBe(';');
    expect(sniffDelimiter('email\tname')).toBe('\t');
    expect(sniffDelimiter('a@x.test')).toBeUndefined();
  });
});
