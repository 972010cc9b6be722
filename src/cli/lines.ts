/**
 * Splits a byte stream into lines without holding more than one line in memory, with the byte offsets that
 * `--resume` needs to cut a file after its last complete record.
 * @module
 */

/** One physical line of input. */
export interface Line {
  /** The line as UTF-8 text (invalid bytes become U+FFFD), without its LF or CRLF, and without a leading BOM. */
  readonly text: string;
  /** 1-based line number. */
  readonly number: number;
  /** Byte offset of the line's first byte. */
  readonly start: number;
  /** Byte offset just after the line's LF (or after its last byte when it has none). */
  readonly end: number;
  /** The line ended with LF (false only for the last line of an input that does not end with one). */
  readonly terminated: boolean;
  /** The line was longer than the limit: `text` holds only its first bytes. */
  readonly tooLong: boolean;
}

/** Longest line accepted, in bytes. @default 65536 */
export const MAX_LINE_BYTES = 65_536;

/** How many bytes of an over-long line are kept, so that the row can be identified. */
const PREVIEW_BYTES = 200;

function decode(bytes: Buffer, first: boolean): string {
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (first && text.startsWith('\uFEFF')) text = text.slice(1);
  return text;
}

/**
 * Reads `source` line by line. Yields the lines of each chunk as one batch, so that a million-line file does
 * not cost a million promise hops. A line longer than `maxLineBytes` is not buffered: it is yielded with
 * `tooLong` set and its first bytes as `text`.
 */
export async function* readLines(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<Line[]> {
  let carry: Buffer[] = [];
  let carried = 0; // bytes of the current line seen so far (kept or not)
  let tooLong = false;
  let start = 0;
  let number = 0;

  const finish = (piece: Buffer, terminated: boolean): Line => {
    const length = carried + piece.length;
    let text: string;
    if (tooLong || length > maxLineBytes) {
      const head = Buffer.concat([...carry, piece.subarray(0, PREVIEW_BYTES)]);
      text = decode(head.subarray(0, PREVIEW_BYTES), number === 0);
      tooLong = true;
    } else {
      text = decode(carry.length > 0 ? Buffer.concat([...carry, piece]) : piece, number === 0);
    }
    number++;
    const end = start + length + (terminated ? 1 : 0);
    const line: Line = { text, number, start, end, terminated, tooLong };
    start = end;
    carry = [];
    carried = 0;
    tooLong = false;
    return line;
  };

  for await (const raw of source) {
    const chunk = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
    const batch: Line[] = [];
    let position = 0;
    for (;;) {
      const newline = chunk.indexOf(10, position);
      if (newline === -1) {
        const rest = chunk.subarray(position);
        if (rest.length > 0) {
          if (!tooLong && carried + rest.length > maxLineBytes) {
            // Keep only a preview of an over-long line.
            carry = [Buffer.concat([...carry, rest]).subarray(0, PREVIEW_BYTES)];
            tooLong = true;
          } else if (!tooLong) {
            carry.push(Buffer.from(rest));
          }
          carried += rest.length;
        }
        break;
      }
      batch.push(finish(chunk.subarray(position, newline), true));
      position = newline + 1;
    }
    if (batch.length > 0) yield batch;
  }
  if (carried > 0) yield [finish(Buffer.alloc(0), false)];
}
