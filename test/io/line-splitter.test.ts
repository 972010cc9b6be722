import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/io/line-splitter.js';

describe('LineSplitter (shared by the CLI and the SMTP client)', () => {
  it('counts the limit without the line terminator: exactly max bytes before CRLF or LF is fine', () => {
    const split = new LineSplitter({ maxLineBytes: 4 });
    const lines = split.push(Buffer.from('abcd\r\nabcd\nabcde\r\n'));
    expect(lines.map((line) => [line.text, line.tooLong])).toEqual([
      ['abcd', false],
      ['abcd', false],
      ['abcde', true], // over the limit: its text is the preview (200 bytes by default)
    ]);
    expect(lines.map((line) => [line.start, line.end])).toEqual([
      [0, 6],
      [6, 11],
      [11, 18],
    ]);
    expect(lines.map((line) => line.crlf)).toEqual([true, false, true]);
  });

  it('says a line ended with CRLF also when its CR and LF came in different chunks', () => {
    const split = new LineSplitter({ maxLineBytes: 100 });
    expect(split.push(Buffer.from('a,"b\r'))).toEqual([]);
    expect(split.push(Buffer.from('\nc"\r'))).toMatchObject([{ text: 'a,"b', crlf: true }]);
    expect(split.end()).toMatchObject([{ text: 'c"', terminated: false, crlf: false }]);
  });

  it('marks a pending line too long as soon as it passes the limit, keeping only the preview', () => {
    const split = new LineSplitter({ maxLineBytes: 8, previewBytes: 3 });
    expect(split.push(Buffer.from('x'.repeat(9)))).toEqual([]);
    expect(split.pendingTooLong).toBe(false); // 9 bytes may still be 8 and a CR
    split.push(Buffer.from('y'));
    expect(split.pendingTooLong).toBe(true);
    expect(split.pendingBytes).toBe(10);
    expect(split.push(Buffer.from('\nok\n')).map((line) => [line.text, line.tooLong])).toEqual([
      ['xxx', true],
      ['ok', false],
    ]);
  });

  it('keeps a BOM unless asked to drop it, and ends an unterminated last line', () => {
    const kept = new LineSplitter({ maxLineBytes: 100 });
    expect(kept.push(Buffer.from('\uFEFF220 hi\r\n'))[0]?.text).toBe('\uFEFF220 hi');
    const dropped = new LineSplitter({ maxLineBytes: 100, stripBom: true });
    expect(dropped.push(Buffer.from('\uFEFFa\nb'))[0]?.text).toBe('a');
    expect(dropped.end()).toMatchObject([{ text: 'b', terminated: false, number: 2 }]);
    expect(dropped.end()).toEqual([]);
  });
});
