import { describe, expect, it } from 'vitest';
import { printable } from '../../src/classify/printable.js';
import { isSmtpError } from '../../src/errors.js';
import { createReplyParser, enhancedCodeOf, parseReply } from '../../src/smtp/reply.js';

function protocolFailure(run: () => unknown): string {
  try {
    run();
    return 'no failure';
  } catch (error) {
    return isSmtpError(error) ? error.kind : String(error);
  }
}

describe('parseReply', () => {
  it('parses a single-line reply with an enhanced code', () => {
    expect(parseReply(['550 5.1.1 <bob@example.com>: user unknown'])).toEqual({
      code: 550,
      enhanced: '5.1.1',
      lines: ['5.1.1 <bob@example.com>: user unknown'],
      text: '5.1.1 <bob@example.com>: user unknown',
    });
  });

  it('parses a multi-line reply and joins its text', () => {
    const reply = parseReply(['250-mx.example.com hello', '250-PIPELINING', '250 SMTPUTF8']);
    expect(reply.code).toBe(250);
    expect(reply.enhanced).toBeNull();
    expect(reply.lines).toEqual(['mx.example.com hello', 'PIPELINING', 'SMTPUTF8']);
    expect(reply.text).toBe('mx.example.com hello PIPELINING SMTPUTF8');
  });

  it('accepts a bare code and a code followed by nothing else', () => {
    expect(parseReply(['250']).lines).toEqual(['']);
    expect(parseReply(['354 ']).code).toBe(354);
  });

  it('replaces control characters in server text', () => {
    expect(parseReply(['550 a\u0000b\u001bc\u2028d']).text).toBe('a b c d');
  });

  it('cuts text to maxTextLength but keeps every line', () => {
    const reply = parseReply(['250-aaaa', '250 bbbb'], { maxTextLength: 6 });
    expect(reply.text).toBe('aaaa b');
    expect(reply.lines).toEqual(['aaaa', 'bbbb']);
  });

  it.each([
    ['garbage', ['\u0016\u0003\u0001 binary']],
    ['a code out of range', ['650 nope']],
    ['a second digit out of range', ['270 nope']],
    ['a missing separator', ['250x nope']],
    ['a short code', ['25 ok']],
    ['an empty line', ['']],
    ['HTTP', ['HTTP/1.1 400 Bad Request']],
    ['changing codes', ['250-a', '550 b']],
    ['an incomplete reply', ['250-a']],
    ['lines after the end', ['250 a', '250 b']],
  ])('rejects %s with kind protocol', (_, lines) => {
    expect(protocolFailure(() => parseReply(lines))).toBe('protocol');
  });

  it('bounds line length, line count and total size', () => {
    expect(protocolFailure(() => parseReply([`250 ${'x'.repeat(100)}`], { maxLineLength: 50 }))).toBe(
      'protocol',
    );
    const many = [...Array.from({ length: 10 }, () => '250-x'), '250 end'];
    expect(protocolFailure(() => parseReply(many, { maxLines: 10 }))).toBe('protocol');
    expect(parseReply(many, { maxLines: 11 }).lines).toHaveLength(11);
    const wide = [...Array.from({ length: 5 }, () => `250-${'y'.repeat(30)}`), '250 end'];
    expect(protocolFailure(() => parseReply(wide, { maxReplyLength: 100 }))).toBe('protocol');
  });
});

describe('createReplyParser', () => {
  it('returns null until the last line, then the reply', () => {
    const parser = createReplyParser();
    expect(parser.push('220-first')).toBeNull();
    expect(parser.push('220 second')).toMatchObject({ code: 220, lines: ['first', 'second'] });
  });

  it('records the stage on its errors and refuses use after a reply', () => {
    const parser = createReplyParser({}, 'rcpt');
    try {
      parser.push('nonsense');
      expect.unreachable();
    } catch (error) {
      expect(isSmtpError(error) && error.stage).toBe('rcpt');
    }
    const done = createReplyParser();
    done.push('250 ok');
    expect(protocolFailure(() => done.push('250 again'))).toBe('protocol');
  });
});

describe('enhancedCodeOf', () => {
  it.each([
    [550, '5.1.1 user unknown', '5.1.1'],
    [450, '4.2.0 greylisted', '4.2.0'],
    [250, '2.1.5 ok', '2.1.5'],
    [550, '5.7.606 Access denied', '5.7.606'],
    [550, '5.01.001 padded', '5.1.1'],
    [550, '4.1.1 class mismatch', null],
    [550, '5.1.1user no space', null],
    [550, 'user 5.1.1 unknown', null],
    [550, '5.1 short', null],
    [550, '5.1.1234 too long', null],
    [550, '5.1.1\tafter a tab', '5.1.1'],
    [550, '5.1.1', '5.1.1'],
  ])('%i %j gives %j', (code, text, expected) => {
    expect(enhancedCodeOf(code, text)).toBe(expected);
  });
});

describe('printable', () => {
  it('replaces controls, tabs and line separators with spaces', () => {
    expect(printable('a\rb\nc\u0000d\te\u2029f')).toBe('a b c d e f');
  });
});
