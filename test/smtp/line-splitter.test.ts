import { describe, expect, it } from 'vitest';
import { isSmtpError } from '../../src/errors.js';
import { createLineSplitter } from '../../src/smtp/line-splitter.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('createLineSplitter', () => {
  it('splits CRLF and bare LF lines and keeps the remainder', () => {
    const split = createLineSplitter(100);
    expect(split.push(bytes('220 a\r\n250-b\n250 c'))).toEqual(['220 a', '250-b']);
    expect(split.pendingBytes).toBe(5);
    expect(split.push(bytes('\r\n'))).toEqual(['250 c']);
    expect(split.pendingBytes).toBe(0);
  });

  it('reassembles a line and a multi-byte character split across chunks', () => {
    const split = createLineSplitter(100);
    const all = bytes('250 Jörg\r\n');
    expect(split.push(all.subarray(0, 6))).toEqual([]);
    expect(split.push(all.subarray(6))).toEqual(['250 Jörg']);
  });

  it('decodes invalid UTF-8 as replacement characters', () => {
    expect(createLineSplitter(100).push(Uint8Array.of(0x32, 0x35, 0x30, 0x20, 0xff, 0x0a))).toEqual([
      '250 \ufffd',
    ]);
  });

  it('accepts a line of exactly maxLineLength bytes and refuses one byte more', () => {
    expect(createLineSplitter(10).push(bytes(`${'x'.repeat(10)}\r\n`))).toEqual(['x'.repeat(10)]);
    expect(() => createLineSplitter(10).push(bytes(`${'x'.repeat(11)}\r\n`))).toThrow(/longer than 10/);
    expect(() => createLineSplitter(10).push(bytes(`${'x'.repeat(11)}\n`))).toThrow(/longer than 10/);
  });

  it('fails an endless line as soon as the limit is passed, holding at most the limit', () => {
    const split = createLineSplitter(2048);
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    let failure: unknown;
    let pushed = 0;
    try {
      for (; pushed < 160; pushed += 1) {
        split.push(chunk.subarray(0, 1000));
        expect(split.pendingBytes).toBeLessThanOrEqual(2049);
      }
    } catch (error) {
      failure = error;
    }
    expect(isSmtpError(failure) && failure.kind).toBe('protocol');
    expect(pushed).toBe(2);
  });
});
