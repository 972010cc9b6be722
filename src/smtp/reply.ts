/**
 * Incremental SMTP reply parser (RFC 5321 §4.2, RFC 3463 enhanced status codes), bounded in line length,
 * line count and total size, so that a hostile server cannot make it hold more than a few kilobytes.
 * @module
 */
import { CONTROL_CHARACTERS } from '../classify/printable.js';
import { SmtpError } from '../errors.js';
import type { SmtpReply, SmtpStage } from './types.js';

/** Bounds of one reply. */
export interface ReplyLimits {
  /** Longest reply line, in characters, code included. @default 2048 */
  readonly maxLineLength?: number;
  /** Most lines in one (multi-line) reply. @default 100 */
  readonly maxLines?: number;
  /** Most characters in one reply, all lines together. @default 16384 */
  readonly maxReplyLength?: number;
  /** Longest `text` kept in the parsed reply, in characters (longer text is cut). @default 1024 */
  readonly maxTextLength?: number;
}

/** The default {@link ReplyLimits}. */
export const DEFAULT_REPLY_LIMITS = Object.freeze({
  maxLineLength: 2048,
  maxLines: 100,
  maxReplyLength: 16_384,
  maxTextLength: 1024,
}) satisfies Required<ReplyLimits>;

/** A reply parser that takes one line at a time. */
export interface ReplyParser {
  /**
   * Takes the next line (without CRLF). Returns the complete reply when `line` was its last line, else `null`.
   * Throws `SmtpError` kind `protocol` on a malformed or over-long reply; the parser is then spent.
   */
  push(line: string): SmtpReply | null;
}

const LINE = /^([2-5][0-5][0-9])([ -]|$)/;
const ENHANCED = /^([245])\.(\d{1,3})\.(\d{1,3})(?=[ \t]|$)/;

/** The RFC 3463 code at the start of `text`, if its class matches the reply code's first digit. */
export function enhancedCodeOf(code: number, text: string): string | null {
  const match = ENHANCED.exec(text);
  if (match === null || Number(match[1]) !== Math.floor(code / 100)) return null;
  return `${match[1]}.${Number(match[2])}.${Number(match[3])}`;
}

/**
 * Creates a parser for one reply. `stage` is recorded on errors.
 * @example
 * const parser = createReplyParser();
 * parser.push('250-mx.example.com'); // null
 * parser.push('250 SMTPUTF8');       // { code: 250, lines: ['mx.example.com', 'SMTPUTF8'], ... }
 */
export function createReplyParser(limits: ReplyLimits = {}, stage?: SmtpStage): ReplyParser {
  return new LineParser(limits, stage);
}

/** {@link createReplyParser}'s parser: one object per reply (a session reads one reply per address). */
class LineParser implements ReplyParser {
  readonly #maxLineLength: number;
  readonly #maxLines: number;
  readonly #maxReplyLength: number;
  readonly #maxTextLength: number;
  readonly #stage: SmtpStage | undefined;
  readonly #lines: string[] = [];
  #code = 0;
  #size = 0;
  #spent = false;

  constructor(limits: ReplyLimits, stage: SmtpStage | undefined) {
    this.#maxLineLength = limits.maxLineLength ?? DEFAULT_REPLY_LIMITS.maxLineLength;
    this.#maxLines = limits.maxLines ?? DEFAULT_REPLY_LIMITS.maxLines;
    this.#maxReplyLength = limits.maxReplyLength ?? DEFAULT_REPLY_LIMITS.maxReplyLength;
    this.#maxTextLength = limits.maxTextLength ?? DEFAULT_REPLY_LIMITS.maxTextLength;
    this.#stage = stage;
  }

  #fail(message: string): never {
    this.#spent = true;
    throw new SmtpError('protocol', message, this.#stage === undefined ? {} : { stage: this.#stage });
  }

  push(line: string): SmtpReply | null {
    const lines = this.#lines;
    if (this.#spent) this.#fail('reply parser used after a complete or failed reply');
    if (line.length > this.#maxLineLength)
      this.#fail(`reply line longer than ${this.#maxLineLength} characters`);
    this.#size += line.length;
    if (this.#size > this.#maxReplyLength) this.#fail(`reply longer than ${this.#maxReplyLength} characters`);
    if (lines.length >= this.#maxLines) this.#fail(`reply with more than ${this.#maxLines} lines`);
    const match = LINE.exec(line);
    if (match === null) return this.#fail(`malformed reply line: ${JSON.stringify(line.slice(0, 80))}`);
    const lineCode = Number(match[1]);
    if (lines.length > 0 && lineCode !== this.#code) {
      this.#fail(`reply code changed from ${this.#code} to ${lineCode}`);
    }
    this.#code = lineCode;
    lines.push(line.slice(4).replace(CONTROL_CHARACTERS, ' '));
    if (match[2] === '-') return null;
    this.#spent = true;
    const text = lines.length === 1 ? lines[0]! : lines.join(' ');
    return {
      code: lineCode,
      enhanced: enhancedCodeOf(lineCode, lines[0]!),
      lines,
      text: text.length > this.#maxTextLength ? text.slice(0, this.#maxTextLength) : text,
    };
  }
}

/**
 * Parses a whole reply given as lines (for tests and scripted peers).
 * Throws `SmtpError` kind `protocol` when the lines do not make exactly one reply.
 */
export function parseReply(lines: readonly string[], limits: ReplyLimits = {}): SmtpReply {
  const parser = createReplyParser(limits);
  for (const [index, line] of lines.entries()) {
    const reply = parser.push(line);
    if (reply !== null) {
      if (index !== lines.length - 1) throw new SmtpError('protocol', 'lines after the last line of a reply');
      return reply;
    }
  }
  throw new SmtpError('protocol', 'incomplete reply');
}
