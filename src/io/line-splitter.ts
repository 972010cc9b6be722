/**
 * The one line splitter of mailvet: bytes in, lines out, never holding more than one line's worth of bytes. The
 * CLI reads input files through it (with byte offsets for `--resume`); the SMTP client reads replies through it
 * (failing at the first over-long line).
 * @module
 */

/** One physical line. */
export interface Line {
  /** The line as UTF-8 text (invalid bytes become U+FFFD), without its LF or CRLF (and BOM, when asked). */
  readonly text: string;
  /** 1-based line number. */
  readonly number: number;
  /** Byte offset of the line's first byte. */
  readonly start: number;
  /** Byte offset just after the line's LF (or after its last byte when it has none). */
  readonly end: number;
  /** The line ended with LF (false only for the last line of an input that does not end with one). */
  readonly terminated: boolean;
  /** The line ended with CR LF (its CR is not in `text`): a quoted CSV field that spans it keeps the CRLF. */
  readonly crlf: boolean;
  /** The line was longer than the limit: `text` holds only its first bytes. */
  readonly tooLong: boolean;
}

/** Options of {@link LineSplitter}. */
export interface LineSplitterOptions {
  /** Longest line, in bytes, without its LF or CRLF. */
  readonly maxLineBytes: number;
  /** Bytes of an over-long line kept as its `text`, so that it can be identified. @default 200 */
  readonly previewBytes?: number;
  /** Drop a byte-order mark at the start of the first line (files do; a protocol must not). @default false */
  readonly stripBom?: boolean;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits chunks of bytes into lines. A line over the limit is not buffered: once it passes the limit only its
 * first `previewBytes` are kept, and it comes out with `tooLong` set.
 * @example
 * const split = new LineSplitter({ maxLineBytes: 512 });
 * split.push(Buffer.from('250-a\r\n250 b\r\n')).map((line) => line.text); // ['250-a', '250 b']
 */
export class LineSplitter {
  readonly #max: number;
  readonly #preview: number;
  readonly #stripBom: boolean;
  #carry: Buffer[] = [];
  /** Bytes of the current line seen so far, kept or not. */
  #carried = 0;
  #tooLong = false;
  #start = 0;
  #number = 0;

  constructor(options: LineSplitterOptions) {
    this.#max = options.maxLineBytes;
    this.#preview = options.previewBytes ?? 200;
    this.#stripBom = options.stripBom ?? false;
  }

  /** Bytes of the current, unterminated line seen so far. */
  get pendingBytes(): number {
    return this.#carried;
  }

  /** True when the current, unterminated line is already over the limit, whatever ends it. */
  get pendingTooLong(): boolean {
    return this.#tooLong;
  }

  /** Takes a chunk; returns the lines it completed, in order. */
  push(chunk: Uint8Array): Line[] {
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const lines: Line[] = [];
    let position = 0;
    for (;;) {
      const newline = bytes.indexOf(LF, position);
      if (newline === -1) {
        this.#hold(bytes.subarray(position));
        return lines;
      }
      // A line wholly inside this chunk is decoded in place (no view of it is made): most lines are.
      const whole = this.#carried === 0 && (this.#number > 0 || !this.#stripBom);
      lines.push(
        whole ? this.#whole(bytes, position, newline) : this.#finish(bytes.subarray(position, newline), true),
      );
      position = newline + 1;
    }
  }

  /** The last line when the input ended without an LF after it (none when nothing is pending). */
  end(): Line[] {
    return this.#carried > 0 ? [this.#finish(Buffer.alloc(0), false)] : [];
  }

  #hold(rest: Buffer): void {
    if (rest.length === 0) return;
    // +1: a CR at the end may still turn out to be the CR of a CRLF, which is not part of the line.
    if (!this.#tooLong && this.#carried + rest.length > this.#max + 1) {
      this.#carry = [Buffer.concat([...this.#carry, rest]).subarray(0, this.#preview)];
      this.#tooLong = true;
    } else if (!this.#tooLong) {
      this.#carry.push(Buffer.from(rest));
    }
    this.#carried += rest.length;
  }

  /** The terminated line `bytes[from, to)` when nothing of it was carried from an earlier chunk. */
  #whole(bytes: Buffer, from: number, to: number): Line {
    const length = to - from;
    const crlf = length > 0 && bytes[to - 1] === CR;
    const content = crlf ? length - 1 : length;
    if (content > this.#max) return this.#finish(bytes.subarray(from, to), true);
    const text = bytes.toString('utf8', from, from + content);
    this.#number++;
    const end = this.#start + length + 1;
    const line: Line = {
      text,
      number: this.#number,
      start: this.#start,
      end,
      terminated: true,
      crlf,
      tooLong: false,
    };
    this.#start = end;
    return line;
  }

  #finish(piece: Buffer, terminated: boolean): Line {
    const length = this.#carried + piece.length;
    const last = piece.length > 0 ? piece[piece.length - 1] : this.#carry.at(-1)?.at(-1);
    const crlf = terminated && last === CR;
    const content = crlf ? length - 1 : length;
    let text: string;
    const tooLong = this.#tooLong || content > this.#max;
    if (tooLong) {
      const head = Buffer.concat([...this.#carry, piece.subarray(0, this.#preview)]);
      text = this.#decode(head.subarray(0, this.#preview));
    } else {
      text = this.#decode(this.#carry.length > 0 ? Buffer.concat([...this.#carry, piece]) : piece);
    }
    this.#number++;
    const end = this.#start + length + (terminated ? 1 : 0);
    const line: Line = { text, number: this.#number, start: this.#start, end, terminated, crlf, tooLong };
    this.#start = end;
    this.#carry = [];
    this.#carried = 0;
    this.#tooLong = false;
    return line;
  }

  #decode(bytes: Buffer): string {
    let text = bytes.toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (this.#stripBom && this.#number === 0 && text.startsWith('\uFEFF')) text = text.slice(1);
    return text;
  }
}
