import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isSmtpError } from '../../src/errors.js';
import { commands, MAX_COMMAND_LENGTH, needsSmtpUtf8, safeArgument } from '../../src/smtp/sanitize.js';

function kindOf(run: () => unknown): string {
  try {
    run();
    return 'no failure';
  } catch (error) {
    return isSmtpError(error) ? error.kind : String(error);
  }
}

describe('commands', () => {
  it('builds each command', () => {
    expect(commands.ehlo('probe.example.org')).toBe('EHLO probe.example.org');
    expect(commands.helo('probe.example.org')).toBe('HELO probe.example.org');
    expect(commands.startTls()).toBe('STARTTLS');
    expect(commands.mailFrom('verify@probe.example.org')).toBe('MAIL FROM:<verify@probe.example.org>');
    expect(commands.mailFrom('verify@probe.example.org', true)).toBe(
      'MAIL FROM:<verify@probe.example.org> SMTPUTF8',
    );
    expect(commands.mailFrom('')).toBe('MAIL FROM:<>');
    expect(commands.rcptTo('alice@example.com')).toBe('RCPT TO:<alice@example.com>');
    expect(commands.rcptTo('"john doe"@example.com')).toBe('RCPT TO:<"john doe"@example.com>');
    expect(commands.rcptTo('jörg@bücher.example')).toBe('RCPT TO:<jörg@bücher.example>');
    expect(commands.reset()).toBe('RSET');
    expect(commands.quit()).toBe('QUIT');
  });

  it.each([
    ['CRLF', 'a@b.example\r\nDATA'],
    ['bare LF', 'a@b.example\nRSET'],
    ['bare CR', 'a@b.example\rRSET'],
    ['NUL', 'a\u0000@b.example'],
    ['another C0 control', 'a\u001b@b.example'],
    ['DEL', 'a\u007f@b.example'],
    ['NEL', 'a\u0085@b.example'],
    ['a Unicode line separator', 'a\u2028@b.example'],
    ['a closing bracket', 'a@b.example> NOTIFY=NEVER'],
    ['an opening bracket', '<a@b.example'],
    ['a space outside quotes', 'a b@c.example'],
    ['an empty recipient', ''],
    ['a path over 254 bytes', `${'a'.repeat(64)}@${'b'.repeat(190)}.example`],
    ['a path over 254 bytes in UTF-8', `${'ü'.repeat(64)}@${'b'.repeat(120)}.example`],
  ])('refuses a recipient with %s, sending nothing', (_, recipient) => {
    expect(kindOf(() => commands.rcptTo(recipient))).toBe('unsafe_argument');
  });

  it.each([
    ['a space', 'probe example'],
    ['CRLF', 'probe\r\nMAIL FROM:<x@y>'],
    ['nothing', ''],
    ['256 bytes', 'a'.repeat(256)],
  ])('refuses a HELO name with %s', (_, name) => {
    expect(kindOf(() => commands.ehlo(name))).toBe('unsafe_argument');
    expect(kindOf(() => commands.helo(name))).toBe('unsafe_argument');
  });

  it('refuses a sender with a line break, and non-strings', () => {
    expect(kindOf(() => commands.mailFrom('x@y\r\nRCPT TO:<z@w>'))).toBe('unsafe_argument');
    expect(kindOf(() => commands.rcptTo(42 as unknown as string))).toBe('unsafe_argument');
    expect(kindOf(() => safeArgument(null, 'x', 10))).toBe('unsafe_argument');
  });

  it('names the argument in the error', () => {
    expect(() => commands.mailFrom('a\nb')).toThrow(/mailFrom/);
    expect(() => commands.ehlo('a b')).toThrow(/heloHost/);
  });
});

describe('path length', () => {
  it('refuses a path of 255 bytes made of 2-byte characters, accepts 254', () => {
    const local = 'é'.repeat(120); // 240 bytes
    expect(kindOf(() => commands.rcptTo(`${local}@${'a'.repeat(14)}`))).toBe('unsafe_argument'); // 255 bytes
    expect(commands.rcptTo(`${local}@${'a'.repeat(13)}`)).toBe(`RCPT TO:<${local}@${'a'.repeat(13)}>`);
  });
});

describe('needsSmtpUtf8', () => {
  it('is true exactly for non-ASCII text', () => {
    expect(needsSmtpUtf8('alice@example.com')).toBe(false);
    expect(needsSmtpUtf8('jörg@example.com')).toBe(true);
    expect(needsSmtpUtf8('用户@例子.广告')).toBe(true);
  });
});

describe('command fuzz', () => {
  const any = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 80 }),
    fc
      .tuple(
        fc.string({ maxLength: 40 }),
        fc.constantFrom('\r', '\n', '\r\n', '\u0000', '\u2028', '>', ' '),
        fc.string({ maxLength: 40 }),
      )
      .map(([a, b, c]) => `${a}${b}${c}@example.com`),
  );

  it('never builds a line with CR, LF, NUL or over 510 bytes: it returns a safe line or throws unsafe_argument', () => {
    const builders = [
      (value: string) => commands.rcptTo(value),
      (value: string) => commands.mailFrom(value),
      (value: string) => commands.mailFrom(value, true),
      (value: string) => commands.ehlo(value),
      (value: string) => commands.helo(value),
    ];
    fc.assert(
      fc.property(any, fc.integer({ min: 0, max: builders.length - 1 }), (value, which) => {
        let line: string;
        try {
          line = builders[which]!(value);
        } catch (error) {
          return isSmtpError(error) && error.kind === 'unsafe_argument';
        }
        return !/[\r\n\0]/.test(line) && new TextEncoder().encode(line).byteLength <= MAX_COMMAND_LENGTH;
      }),
      { numRuns: 2_000 },
    );
  });
});
