/**
 * Splits the byte stream of an SMTP connection into reply lines, through the shared line splitter: a line longer
 * than the limit fails the connection as soon as the limit is passed, however large the peer's line, and no more
 * than one line's worth of bytes is ever held.
 * @module
 */
import { SmtpError } from '../errors.js';
import { LineSplitter as ByteLineSplitter } from '../io/line-splitter.js';

/** Splits chunks of bytes into lines (without CRLF or a bare LF), decoded as UTF-8 (invalid bytes become U+FFFD). */
export interface LineSplitter {
  /** Takes a chunk; returns the lines it completed. Throws `SmtpError` kind `protocol` on an over-long line. */
  push(chunk: Uint8Array): string[];
  /** Bytes held of an incomplete line. */
  readonly pendingBytes: number;
}

/**
 * Creates a splitter that accepts lines of at most `maxLineLength` bytes (CRLF not counted).
 * @example
 * const split = createLineSplitter(512);
 * split.push(new TextEncoder().encode('250-a\r\n250 b\r\n')); // ['250-a', '250 b']
 */
export function createLineSplitter(maxLineLength: number): LineSplitter {
  const bytes = new ByteLineSplitter({ maxLineBytes: maxLineLength, previewBytes: 0 });
  const tooLong = () =>
    new SmtpError('protocol', `the server sent a line longer than ${maxLineLength} bytes`);
  return {
    get pendingBytes() {
      return bytes.pendingBytes;
    },
    push(chunk) {
      const lines = bytes.push(chunk);
      if (bytes.pendingTooLong || lines.some((line) => line.tooLong)) throw tooLong();
      return lines.map((line) => line.text);
    },
  };
}
