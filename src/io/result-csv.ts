/**
 * CSV of verification results: RFC 4180 (comma, CRLF, fields quoted when needed, quotes doubled), safe to
 * open in a spreadsheet.
 * @module
 */
import { RESULT_FIELDS, type VerificationResult } from '../result.js';

/**
 * The columns, in order: every field a `VerificationResult` always has, then `reason` (empty when the result
 * has none); the optional `smtp_transcript` is left out.
 */
export const CSV_COLUMNS = Object.freeze([...RESULT_FIELDS, 'reason'] as const);

/**
 * When a CSV cell gets a `'` in front so that no spreadsheet evaluates it:
 * - `always`: every cell starting with `=`, `+`, `-`, `@`, TAB or CR (the OWASP "CSV injection" rule; the
 *   HTTP API's CSV uses it). The price: `-5.20`, `+44 20 7946 0958` and `@vip` come back as `'-5.20`, ...
 * - `auto`: only cells a spreadsheet would run as a formula: any starting with `=`, TAB or CR; one starting
 *   with `+` or `-` unless it is a number or a phone number (digits with spaces, `.`, `,`, `/`, `-` and
 *   parentheses); one starting with `@` that holds a `(` (`@SUM(A1)`, but not `@vip`).
 * - `never`: cells are written as they are.
 */
export type FormulaEscape = 'auto' | 'always' | 'never';

/** Every {@link FormulaEscape}. */
export const FORMULA_ESCAPES: readonly FormulaEscape[] = Object.freeze(['auto', 'always', 'never']);

/** Characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** A number or phone number after a sign: `-5.20`, `+44 20 7946 0958`, `+1 (555) 123-4567`, `-1,234.50`. */
const SIGNED_NUMBER = /^[+-][\d\s.,/()-]*\d[\d\s.,/()-]*$/;
const NEEDS_QUOTES = /[",\r\n]/;

/** True when `value` gets the anti-formula `'` under `mode` (see {@link FormulaEscape}). */
export function needsFormulaEscape(value: string, mode: FormulaEscape): boolean {
  if (mode === 'never' || !FORMULA_START.test(value)) return false;
  if (mode === 'always') return true;
  const first = value[0];
  if (first === '+' || first === '-') return !SIGNED_NUMBER.test(value);
  if (first === '@') return value.includes('(');
  return true;
}

/**
 * One CSV field. `null` is an empty field; numbers and booleans are written as is. A string that could run
 * as a formula gets a `'` in front, by `mode` (see {@link FormulaEscape}; `always` by default, under which
 * the legal address `-a@example.com` reads `'-a@example.com`); then the field is quoted when it holds `"`,
 * `,`, CR or LF, with inner quotes doubled.
 * @example
 * csvField('=1+1'); // "'=1+1"
 * csvField('-5.20', 'auto'); // '-5.20'
 * csvField('a,b'); // '"a,b"'
 */
export function csvField(value: string | number | boolean | null, mode: FormulaEscape = 'always'): string {
  if (value === null) return '';
  if (typeof value !== 'string') return String(value);
  const safe = needsFormulaEscape(value, mode) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/**
 * The result columns written after a file's own columns (an uploaded CSV's download, `mailvet bulk` on a CSV): the
 * {@link CSV_COLUMNS} but `email`, which the file's address column already holds (the address is not repeated).
 */
export const SOURCED_CSV_COLUMNS = Object.freeze(CSV_COLUMNS.filter((name) => name !== 'email'));

/**
 * The names of the result columns after `sourceColumns`: {@link SOURCED_CSV_COLUMNS}, then `extra` (the CLI's
 * `error`, `smtp_transcript`), each one whose name the file has (ignoring case and surrounding space) named
 * `mailvet_<name>`. The one rule of both the HTTP API's and the CLI's CSV, so that the two cannot differ.
 * @example
 * sourcedResultColumns(['id', 'Status']); // ['normalized', 'user', 'domain', 'mailvet_status', ...]
 */
export function sourcedResultColumns(
  sourceColumns: readonly string[],
  extra: readonly string[] = [],
): string[] {
  const taken = new Set(sourceColumns.map((name) => name.trim().toLowerCase()));
  return [...SOURCED_CSV_COLUMNS, ...extra].map((name) => (taken.has(name) ? `mailvet_${name}` : name));
}

/**
 * The header row, with its CRLF: the {@link CSV_COLUMNS} alone, or, after the `sourceColumns` of the file the job
 * was made from (written under the `auto` formula rule), the {@link sourcedResultColumns}.
 * @example
 * csvHeader(['id', 'email']); // 'id,email,normalized,user,...\r\n'
 */
export function csvHeader(sourceColumns: readonly string[] = []): string {
  if (sourceColumns.length === 0) return `${CSV_COLUMNS.join(',')}\r\n`;
  const names = [
    ...sourceColumns.map((name) => csvField(name, 'auto')),
    ...sourcedResultColumns(sourceColumns),
  ];
  return `${names.join(',')}\r\n`;
}

/**
 * One result as a row, with its CRLF: the {@link CSV_COLUMNS}, or, after the cells of its source row when given
 * (written under the `auto` formula rule: `+44 20 7946 0958` and `-5.20` stay as they are, `=cmd()` is escaped),
 * the {@link SOURCED_CSV_COLUMNS} (the address is in the row's own cells).
 */
export function csvRow(result: VerificationResult, sourceCells?: readonly string[]): string {
  if (sourceCells === undefined) {
    return `${CSV_COLUMNS.map((column) => csvField(result[column] ?? null)).join(',')}\r\n`;
  }
  let line = '';
  for (const cell of sourceCells) line += `${csvField(cell, 'auto')},`;
  return `${line}${SOURCED_CSV_COLUMNS.map((column) => csvField(result[column] ?? null)).join(',')}\r\n`;
}
