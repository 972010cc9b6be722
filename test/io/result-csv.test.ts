import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CSV_COLUMNS,
  csvField,
  csvHeader,
  csvRow,
  needsFormulaEscape,
  SOURCED_CSV_COLUMNS,
  sourcedResultColumns,
} from '../../src/io/result-csv.js';
import type { VerificationResult } from '../../src/result.js';

const RESULT: VerificationResult = {
  email: 'Ann@Example.com',
  normalized: 'Ann@example.com',
  user: 'Ann',
  domain: 'example.com',
  status: 'valid',
  sub_status: null,
  score: 95,
  disposable: false,
  role: false,
  free: true,
  accept_all: false,
  did_you_mean: null,
  mx_record: 'mx.example.com',
  smtp_provider: null,
};

describe('needsFormulaEscape', () => {
  it.each([
    // cell, auto, always
    ['=1+1', true, true],
    ['\t=1+1', true, true],
    ['\r=1+1', true, true],
    ['+A1', true, true],
    ['-a@example.com', true, true],
    ["-2+3+cmd|' /C calc'!A0", true, true],
    ['@SUM(A1)', true, true],
    ['+44 20 7946 0958', false, true],
    ['+1 (555) 123-4567', false, true],
    ['-5.20', false, true],
    ['-1,234.50', false, true],
    ['@vip', false, true],
    ['+', true, true],
    ['-', true, true],
    ['plain', false, false],
    ['a=b', false, false],
  ])('%j: auto %s, always %s, never false', (cell, auto, always) => {
    expect(needsFormulaEscape(cell, 'auto')).toBe(auto);
    expect(needsFormulaEscape(cell, 'always')).toBe(always);
    expect(needsFormulaEscape(cell, 'never')).toBe(false);
  });

  it('is what csvField applies', () => {
    expect(csvField('-5.20', 'auto')).toBe('-5.20');
    expect(csvField('-5.20')).toBe("'-5.20");
    expect(csvField('=1,2', 'auto')).toBe('"\'=1,2"');
    expect(csvField('=1,2', 'never')).toBe('"=1,2"');
  });
});

describe('csvField', () => {
  it('writes null as an empty field and numbers and booleans as is', () => {
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvField(true)).toBe('true');
  });

  it('quotes fields with a comma, a quote, CR or LF, doubling quotes (RFC 4180)', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"@x.com')).toBe('"say ""hi""@x.com"');
    expect(csvField('a\nb')).toBe('"a\nb"');
    expect(csvField('plain@example.com')).toBe('plain@example.com');
  });

  it.each([
    ['=HYPERLINK("http://evil")', `"'=HYPERLINK(""http://evil"")"`],
    ['+1+2@x.com', "'+1+2@x.com"],
    ['-a@example.com', "'-a@example.com"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tcmd', "'\tcmd"],
    ['\r=1', `"'\r=1"`],
  ])('defuses the formula-looking %j', (value, expected) => {
    expect(csvField(value)).toBe(expected);
  });

  it('leaves unicode as is', () => {
    expect(csvField('用户@例子.广告')).toBe('用户@例子.广告');
  });
});

describe('rows', () => {
  it('writes a header and rows with CRLF in the documented column order', () => {
    expect(csvHeader()).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
    expect(csvRow(RESULT)).toBe(
      'Ann@Example.com,Ann@example.com,Ann,example.com,valid,,95,false,false,true,false,,mx.example.com,,\r\n',
    );
    const refused = { ...RESULT, status: 'invalid' as const, reason: 'the mail host said "no", really' };
    expect(csvRow(refused).endsWith(',"the mail host said ""no"", really"\r\n')).toBe(true);
  });

  it("after a file's columns: the address is not repeated, a taken name gets mailvet_, cells come first", () => {
    expect(SOURCED_CSV_COLUMNS).toEqual(CSV_COLUMNS.filter((name) => name !== 'email'));
    expect(csvHeader(['id', ' Email ', 'STATUS'])).toBe(
      `id, Email ,STATUS,${SOURCED_CSV_COLUMNS.map((name) => (name === 'status' ? 'mailvet_status' : name)).join(',')}\r\n`,
    );
    expect(sourcedResultColumns(['error', 'x'], ['error', 'smtp_transcript']).slice(-2)).toEqual([
      'mailvet_error',
      'smtp_transcript',
    ]);
    expect(csvRow(RESULT, ['7', '=cmd()', 'Ann@Example.com'])).toBe(
      "7,'=cmd(),Ann@Example.com,Ann@example.com,Ann,example.com,valid,,95,false,false,true,false,,mx.example.com,,\r\n",
    );
    expect(csvRow(RESULT, [])).toBe(`${csvRow(RESULT).slice('Ann@Example.com,'.length)}`);
  });

  it('round-trips any string through a real CSV parser (with the formula prefix as the only change)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (email) => {
        const text = csvHeader() + csvRow({ ...RESULT, email });
        const rows = parse(text, { columns: true }) as Record<string, string>[];
        expect(rows).toHaveLength(1);
        const expected = /^[=+\-@\t\r]/.test(email) ? `'${email}` : email;
        expect(rows[0]?.email).toBe(expected);
        expect(rows[0]?.score).toBe('95');
      }),
    );
  });
});
