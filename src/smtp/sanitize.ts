/**
 * The one place where values become SMTP command lines. Every argument passes {@link safeArgument}: no CR, LF,
 * NUL or other control character, no Unicode line separator, bounded length; the finished line is checked
 * again. A value that fails is never sent: the caller gets an `SmtpError` of kind `unsafe_argument`.
 * @module
 */
import { SmtpError } from '../errors.js';
import { utf8Length } from '../syntax/limits.js';

/** Longest command line, in UTF-8 bytes without CRLF (RFC 5321 §4.5.3.1.4: 512 with CRLF). */
export const MAX_COMMAND_LENGTH = 510;
/** Longest path (address) between `<` and `>`, in UTF-8 bytes (RFC 5321 §4.5.3.1.3: 256 with brackets). */
export const MAX_PATH_LENGTH = 254;
/** Longest EHLO/HELO domain, in UTF-8 bytes (RFC 1035 name length). */
export const MAX_DOMAIN_LENGTH = 255;

const FORBIDDEN = /[\x00-\x1f\x7f\u0085\u2028\u2029]/;
const NON_ASCII = /[^\x00-\x7f]/;

function unsafe(what: string, problem: string): never {
  throw new SmtpError('unsafe_argument', `${what} ${problem}; nothing was sent`);
}

/**
 * Checks one value meant for a command line and returns it unchanged. Throws `SmtpError` kind
 * `unsafe_argument` when it is not a string, contains a control character (CR, LF, NUL, ...) or a Unicode line
 * separator, or is longer than `maxBytes` UTF-8 bytes.
 */
export function safeArgument(value: unknown, what: string, maxBytes: number): string {
  if (typeof value !== 'string') unsafe(what, 'must be a string');
  if (FORBIDDEN.test(value as string)) unsafe(what, 'contains a control character or line break');
  if (utf8Length(value as string) > maxBytes) unsafe(what, `is longer than ${maxBytes} bytes`);
  return value as string;
}

/** True when `value` has characters outside ASCII (an address that needs SMTPUTF8). */
export function needsSmtpUtf8(value: string): boolean {
  return NON_ASCII.test(value);
}

/**
 * An RFC 5321 Quoted-string local part: `"` then qtextSMTP (printable ASCII but `"` and `\`, space included, and
 * UTF-8 for SMTPUTF8) or quoted-pairSMTP (`\` and a printable ASCII character), then `"`. Inside it `<`, `>`,
 * spaces and escaped quotes are plain characters of the mailbox name.
 */
const QUOTED_LOCAL = /^"(?:[\x20\x21\x23-\x5b\x5d-\x7e\u0080-\uffff]|\\[\x20-\x7e])*"$/;

function path(value: unknown, what: string): string {
  const address = safeArgument(value, what, MAX_PATH_LENGTH);
  const at = address.lastIndexOf('@');
  const local = at === -1 ? address : address.slice(0, at);
  if (/[<>\s"\\]/.test(address.slice(at + 1))) unsafe(what, 'has <, >, a quote or white space in its domain');
  if (local.startsWith('"')) {
    if (!QUOTED_LOCAL.test(local)) unsafe(what, 'has a malformed quoted local part');
  } else if (/[<>\s"]/.test(local)) {
    unsafe(what, 'contains <, >, a quote or white space outside a quoted local part');
  }
  return address;
}

function domain(value: unknown, what: string): string {
  const name = safeArgument(value, what, MAX_DOMAIN_LENGTH);
  if (name.length === 0 || /\s/.test(name)) unsafe(what, 'must be one non-empty word');
  return name;
}

function line(text: string): string {
  return safeArgument(text, 'command line', MAX_COMMAND_LENGTH);
}

/**
 * Builders of every command the probe sends. Each checks its arguments and the finished line.
 * @example
 * commands.rcptTo('alice@example.com'); // 'RCPT TO:<alice@example.com>'
 * commands.rcptTo('a@b>\r\nDATA');      // throws SmtpError kind 'unsafe_argument'
 */
export const commands = Object.freeze({
  /** `EHLO <domain>`. */
  ehlo: (heloHost: string): string => line(`EHLO ${domain(heloHost, 'heloHost')}`),
  /** `HELO <domain>`. */
  helo: (heloHost: string): string => line(`HELO ${domain(heloHost, 'heloHost')}`),
  /** `STARTTLS`. */
  startTls: (): string => 'STARTTLS',
  /** `MAIL FROM:<sender>` (empty sender: `<>`), with ` SMTPUTF8` when asked. */
  mailFrom: (sender: string, smtpUtf8 = false): string => {
    const address = sender === '' ? '' : path(sender, 'mailFrom');
    return line(`MAIL FROM:<${address}>${smtpUtf8 ? ' SMTPUTF8' : ''}`);
  },
  /** `RCPT TO:<recipient>`. */
  rcptTo: (recipient: string): string => {
    const address = path(recipient, 'recipient');
    if (address === '') unsafe('recipient', 'is empty');
    return line(`RCPT TO:<${address}>`);
  },
  /** `RSET`. */
  reset: (): string => 'RSET',
  /** `QUIT`. */
  quit: (): string => 'QUIT',
});
