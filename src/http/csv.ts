/**
 * CSV of verification results: RFC 4180 (comma, CRLF, fields quoted when needed, quotes doubled), safe to
 * open in a spreadsheet.
 * @module
 */
import { RESULT_FIELDS, type VerificationResult } from '../result.js';

/** The columns, in order: every field of `VerificationResult` except the optional `smtp_transcript`. */
export const CSV_COLUMNS = RESULT_FIELDS;

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/**
 * One CSV field. `null` is an empty field; numbers and booleans are written as is. A string that starts
 * with `=`, `+`, `-`, `@`, TAB or CR gets a `'` in front, so that no spreadsheet evaluates it (the OWASP
 * rule; the price is that such a value, e.g. the legal address `-a@example.com`, reads `'-a@example.com`);
 * then the field is quoted when it holds `"`, `,`, CR or LF, with inner quotes doubled.
 * @example
 * csvField('=1+1'); // "'=1+1"
 * csvField('a,b'); // '"a,b"'
 */
export function csvField(value: string | number | boolean | null): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The header row, with its CRLF. */
export function csvHeader(): string {
  return `${CSV_COLUMNS.join(',')}\r\n`;
}

/** One result as a row, with its CRLF. */
export function csvRow(result: VerificationResult): string {
  return `${CSV_COLUMNS.map((column) => csvField(result[column])).join(',')}\r\n`;
}
