/**
 * How a mail server's words are shown: its reply text and error messages go into transcripts, logs and the
 * result's `reason` with their control characters replaced, so that a hostile server cannot break a line or a
 * terminal. Pure; the reply parser (smtp/reply.ts) and the SMTP check share it.
 * @module
 */

/** Control characters (tab aside) and Unicode line separators: never shown as they are. */
export const CONTROL_CHARACTERS = /[\x00-\x08\x0a-\x1f\x7f\u0085\u2028\u2029]/g;

/**
 * `line` with control characters and Unicode line separators replaced by spaces (for transcripts and logs).
 * @example
 * printable('550 no\r\nsuch user'); // '550 no  such user'
 */
export function printable(line: string): string {
  return line.replace(CONTROL_CHARACTERS, ' ').replace(/\t/g, ' ');
}
