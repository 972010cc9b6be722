/**
 * An incremental RFC 4180 record reader that survives malformed rows: a bad row becomes one malformed
 * record (its first physical line), and reading resumes on the next line instead of failing the file.
 * @module
 */
import type { Line } from './line-splitter.js';

/** A record read from CSV: its fields, or why its line could not be read. */
export type CsvRecord =
  | {
      readonly kind: 'row';
      readonly fields: string[];
      /** Line number of the record's first line. */
      readonly line: number;
      /** The record's last physical line (for byte offsets). */
      readonly last: Line;
    }
  | {
      readonly kind: 'malformed';
      /** What is wrong, for the row's `error` cell. */
      readonly reason: string;
      /** The first physical line of the bad record, as read. */
      readonly raw: string;
      readonly line: number;
      readonly last: Line;
    };

/** Limits of one record. */
export interface CsvLimits {
  /** Most characters in one record, across its lines. @default 65536 */
  readonly maxRecordChars?: number;
  /** Most physical lines one record (a quoted field with line breaks) may span. @default 100 */
  readonly maxRecordLines?: number;
}

type Scan =
  | { readonly kind: 'complete' }
  | { readonly kind: 'open' }
  | { readonly kind: 'bad'; readonly reason: string };

/**
 * Reads CSV records from lines pushed one at a time. Quoted fields may span lines (keeping each line's LF or
 * CRLF); `""` is a quote inside a quoted field; a quote inside an unquoted field is kept as is. A closing quote
 * followed by anything but the delimiter, an over-long line, or a quote still open after `maxRecordLines` lines
 * or at the end makes the record's first line a malformed record; the lines after it are read again.
 * @example
 * const reader = new CsvReader(',');
 * reader.push(line); // CsvRecord[]
 * reader.end();      // CsvRecord[]
 */
export class CsvReader {
  readonly #delimiter: string;
  readonly #maxChars: number;
  readonly #maxLines: number;
  #lines: Line[] = [];
  #chars = 0;
  #fields: string[] = [];
  #field = '';
  #inQuotes = false;

  constructor(delimiter: string, limits: CsvLimits = {}) {
    this.#delimiter = delimiter;
    this.#maxChars = limits.maxRecordChars ?? 65_536;
    this.#maxLines = limits.maxRecordLines ?? 100;
  }

  /** Feeds one physical line; returns the records it completes (none, one, or several after a recovery). */
  push(line: Line): CsvRecord[] {
    const out: CsvRecord[] = [];
    this.#feed(line, out);
    return out;
  }

  /** Ends the input: a record still open becomes malformed and the lines after its first are read again. */
  end(): CsvRecord[] {
    const out: CsvRecord[] = [];
    while (this.#lines.length > 0) this.#recover('a quoted field is not closed', out);
    return out;
  }

  #feed(line: Line, out: CsvRecord[]): void {
    const starting = this.#lines.length === 0;
    if (starting && line.text.trim() === '' && !line.tooLong) return;
    this.#lines.push(line);
    if (line.tooLong) {
      this.#recover(starting ? 'the line is longer than the limit' : 'a quoted field is not closed', out);
      return;
    }
    this.#chars += line.text.length;
    const scan =
      starting && !line.text.includes('"')
        ? this.#fast(line.text)
        : this.#scan(line.text, line.crlf ? '\r\n' : '\n');
    if (scan.kind === 'complete') {
      const first = this.#lines[0] ?? line;
      out.push({ kind: 'row', fields: this.#fields, line: first.number, last: line });
      this.#reset();
    } else if (scan.kind === 'bad') {
      this.#recover(scan.reason, out);
    } else if (this.#lines.length >= this.#maxLines || this.#chars > this.#maxChars) {
      this.#recover('a quoted field is not closed', out);
    }
  }

  /** Emits the first pending line as malformed and reads the lines after it again. */
  #recover(reason: string, out: CsvRecord[]): void {
    const [first, ...rest] = this.#lines;
    this.#reset();
    if (first === undefined) return;
    out.push({
      kind: 'malformed',
      reason: `malformed CSV row at line ${first.number}: ${reason}`,
      raw: first.text,
      line: first.number,
      last: first,
    });
    for (const line of rest) this.#feed(line, out);
  }

  #reset(): void {
    this.#lines = [];
    this.#chars = 0;
    this.#fields = [];
    this.#field = '';
    this.#inQuotes = false;
  }

  #fast(text: string): Scan {
    this.#fields = text.split(this.#delimiter);
    return { kind: 'complete' };
  }

  /** Reads `text`; a quoted field still open at its end continues after `lineBreak`, the line's own. */
  #scan(text: string, lineBreak: string): Scan {
    const delimiter = this.#delimiter;
    let field = this.#field;
    let atStart = !this.#inQuotes && field === '';
    let closed = false;
    for (let index = 0; index < text.length; index++) {
      const char = text[index];
      if (this.#inQuotes) {
        if (char !== '"') {
          field += char;
        } else if (text[index + 1] === '"') {
          field += '"';
          index++;
        } else {
          this.#inQuotes = false;
          closed = true;
        }
      } else if (closed) {
        if (char !== delimiter)
          return { kind: 'bad', reason: `${JSON.stringify(char)} after a closing quote` };
        this.#fields.push(field);
        field = '';
        closed = false;
        atStart = true;
      } else if (char === delimiter) {
        this.#fields.push(field);
        field = '';
        atStart = true;
      } else if (char === '"' && atStart) {
        this.#inQuotes = true;
        atStart = false;
      } else {
        field += char;
        atStart = false;
      }
    }
    if (this.#inQuotes) {
      this.#field = `${field}${lineBreak}`;
      return { kind: 'open' };
    }
    this.#fields.push(field);
    this.#field = '';
    return { kind: 'complete' };
  }
}

/**
 * Guesses the delimiter of a CSV header line: the most frequent of `,`, `;` and TAB outside quotes, or
 * `undefined` when the line has none.
 */
export function sniffDelimiter(line: string): string | undefined {
  const counts = new Map<string, number>([
    [',', 0],
    [';', 0],
    ['\t', 0],
  ]);
  let inQuotes = false;
  for (const char of line) {
    if (char === '"') inQuotes = !inQuotes;
    else if (!inQuotes && counts.has(char)) counts.set(char, (counts.get(char) ?? 0) + 1);
  }
  let best: string | undefined;
  let most = 0;
  for (const [delimiter, count] of counts) {
    if (count > most) {
      best = delimiter;
      most = count;
    }
  }
  return best;
}
