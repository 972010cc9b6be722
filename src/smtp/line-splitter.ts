/**
 * Splits a byte stream into lines without ever holding more than one line's worth of bytes: a line longer than
 * the limit fails as soon as the limit is passed, however large the peer's line.
 * @module
 */
import { SmtpError } from '../errors.js';

/** Splits chunks of bytes into lines (without CRLF or a bare LF), decoded as UTF-8 (invalid bytes become U+FFFD). */
export interface LineSplitter {
  /** Takes a chunk; returns the lines it completed. Throws `SmtpError` kind `protocol` on an over-long line. */
  push(chunk: Uint8Array): string[];
  /** Bytes held of an incomplete line. */
  readonly pendingBytes: number;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Creates a splitter that accepts lines of at most `maxLineLength` bytes (CRLF not counted).
 * @example
 * const split = createLineSplitter(512);
 * split.push(new TextEncoder().encode('250-a\r\n250 b\r\n')); // ['250-a', '250 b']
 */
export function createLineSplitter(maxLineLength: number): LineSplitter {
  const decoder = new TextDecoder('utf-8');
  let parts: Uint8Array[] = [];
  let pending = 0;
  const tooLong = () =>
    new SmtpError('protocol', `the server sent a line longer than ${maxLineLength} bytes`);

  const take = (tail: Uint8Array): string => {
    const bytes = new Uint8Array(pending + tail.byteLength);
    let offset = 0;
    for (const part of [...parts, tail]) {
      bytes.set(part, offset);
      offset += part.byteLength;
    }
    parts = [];
    pending = 0;
    const end =
      bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === CR ? bytes.byteLength - 1 : bytes.byteLength;
    if (end > maxLineLength) throw tooLong();
    return decoder.decode(bytes.subarray(0, end));
  };

  return {
    get pendingBytes() {
      return pending;
    },
    push(chunk) {
      const lines: string[] = [];
      let start = 0;
      for (let index = chunk.indexOf(LF); index >= 0; index = chunk.indexOf(LF, start)) {
        const piece = chunk.subarray(start, index);
        // +1: the CR before the LF is not part of the line
        if (pending + piece.byteLength > maxLineLength + 1) throw tooLong();
        lines.push(take(piece));
        start = index + 1;
      }
      const rest = chunk.subarray(start);
      if (pending + rest.byteLength > maxLineLength + 1) throw tooLong();
      if (rest.byteLength > 0) {
        parts.push(rest.slice());
        pending += rest.byteLength;
      }
      return lines;
    },
  };
}
