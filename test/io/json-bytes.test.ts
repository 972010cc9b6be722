/** JSON values written as UTF-8 bytes: the same text as JSON.stringify / String would make. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  jsonStringRoom,
  NUMBER_ROOM,
  writeHundredths,
  writeJsonString,
  writeNonNegativeInteger,
} from '../../src/io/json-bytes.js';

/** What `write` writes into a fresh buffer of `room` bytes (guarded: nothing may be written past the end). */
function written(room: number, write: (buffer: Uint8Array, at: number) => number): string {
  const buffer = new Uint8Array(room + 8).fill(0xff);
  const end = write(buffer, 3);
  expect(end).toBeLessThanOrEqual(3 + room);
  expect(buffer.subarray(end).every((byte) => byte === 0xff)).toBe(true);
  return new TextDecoder().decode(buffer.subarray(3, end));
}

describe('writeJsonString', () => {
  it('writes what JSON.stringify writes, within its room, for any text', () => {
    const texts = ['', 'req-1', 'a"b', 'a\\b', '\u0001\n\t', 'é', '😀', '\ud800', 'x\udc00y', '\u007f'];
    for (const text of texts)
      expect(written(jsonStringRoom(text.length), (b, at) => writeJsonString(b, at, text))).toBe(
        JSON.stringify(text),
      );
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const out = written(jsonStringRoom(text.length), (b, at) => writeJsonString(b, at, text));
        return out === new TextDecoder().decode(new TextEncoder().encode(JSON.stringify(text)));
      }),
    );
  });
});

describe('writeNonNegativeInteger', () => {
  it('writes what JSON.stringify writes for any number', () => {
    const values = [
      0,
      1,
      9,
      10,
      99,
      100,
      412,
      65_536,
      1e15,
      1e15 + 2,
      -1,
      1.5,
      Number.NaN,
      Infinity,
      2 ** 53,
    ];
    for (const value of values)
      expect(written(NUMBER_ROOM, (b, at) => writeNonNegativeInteger(b, at, value))).toBe(
        JSON.stringify(value),
      );
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.double()), (value) => {
        return (
          written(NUMBER_ROOM, (b, at) => writeNonNegativeInteger(b, at, value)) === JSON.stringify(value)
        );
      }),
    );
  });
});

describe('writeHundredths', () => {
  it('writes what String(Math.round(ms * 100) / 100) writes, as JSON', () => {
    const values = [
      0,
      0.004,
      0.005,
      0.01,
      0.1,
      0.41,
      0.999,
      1,
      1.05,
      1.5,
      12.345,
      99.995,
      1e6 + 0.07,
      1e10,
      1e11,
    ];
    for (let i = 0; i < 2000; i++) values.push(i / 7, i * 1.013, i / 100);
    values.push(-1.5, Number.NaN, Infinity, 1e300);
    for (const value of values)
      expect(written(NUMBER_ROOM, (b, at) => writeHundredths(b, at, value))).toBe(
        JSON.stringify(Math.round(value * 100) / 100),
      );
    fc.assert(
      fc.property(fc.double({ min: 0, max: 1e7, noNaN: true }), (value) => {
        return (
          written(NUMBER_ROOM, (b, at) => writeHundredths(b, at, value)) ===
          JSON.stringify(Math.round(value * 100) / 100)
        );
      }),
    );
  });
});
