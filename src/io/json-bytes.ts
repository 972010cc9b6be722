/**
 * JSON values written as UTF-8 bytes straight into a byte array, for log lines on the hot path: no string is made
 * for a line, so a line leaves no garbage. Each writer takes the array and the index to write at and answers the
 * index after what it wrote; the caller makes sure there is room (see each writer's bound).
 * @module
 */

/**
 * Writes the members of a line (`"a":1,"b":"x"`) as UTF-8 bytes into `buffer` from index `at`, answering the index
 * after them.
 */
export type MembersWriter = (buffer: Uint8Array, at: number) => number;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const DOT = 0x2e;
const encoder = new TextEncoder();

/** `text` as UTF-8 bytes, for the constant parts of a line (encoded once, copied per line). */
export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** Longest run of bytes copied by a loop: `set` costs a call into the engine's runtime, more than a short loop. */
const LOOP_COPY_BYTES = 64;

/** Copies `bytes` to `buffer` at `at`. Room: `bytes.length`. */
export function writeBytes(buffer: Uint8Array, at: number, bytes: Uint8Array): number {
  const length = bytes.length;
  if (length > LOOP_COPY_BYTES) buffer.set(bytes, at);
  else for (let i = 0; i < length; i++) buffer[at + i] = bytes[i] as number;
  return at + length;
}

/** Most bytes {@link writeJsonString} writes for a text of `length` UTF-16 units. */
export function jsonStringRoom(length: number): number {
  return 6 * length + 2; // a control character or a lone surrogate is written \uXXXX
}

/**
 * `text` as a JSON string, quotes included, as `JSON.stringify(text)` writes it. Room: {@link jsonStringRoom}.
 * Printable ASCII is copied unit by unit; anything else takes `JSON.stringify`'s own escaping and UTF-8.
 */
export function writeJsonString(buffer: Uint8Array, at: number, text: string): number {
  let end = at;
  buffer[end++] = QUOTE;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || unit > 0x7e || unit === QUOTE || unit === BACKSLASH)
      return at + encoder.encodeInto(JSON.stringify(text), buffer.subarray(at)).written;
    buffer[end++] = unit;
  }
  buffer[end++] = QUOTE;
  return end;
}

/** Most bytes {@link writeNonNegativeInteger} and {@link writeHundredths} write. */
export const NUMBER_ROOM = 32;

/** Largest integer written digit by digit (beyond it, and for anything else, `String` writes the number). */
const MAX_DIGITS_VALUE = 1e15;

/** Largest number of hundredths written digit by digit (the digits of its whole part and `String`'s agree). */
const MAX_HUNDREDTHS = 1e12;

/** The text `String(value)` of a number that is not a whole number in 0..1e15, as JSON (`null` when not finite). */
function writeOtherNumber(buffer: Uint8Array, at: number, value: number): number {
  const text = Number.isFinite(value) ? String(value) : 'null';
  for (let i = 0; i < text.length; i++) buffer[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/** A whole number 0..1e15 in decimal digits (no allocation). Room: {@link NUMBER_ROOM}. */
export function writeDigits(buffer: Uint8Array, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let rest = value;
  for (let i = digits - 1; i >= 0; i--) {
    const next = Math.floor(rest / 10);
    buffer[at + i] = ZERO + (rest - next * 10);
    rest = next;
  }
  return at + digits;
}

/** `value` as JSON writes it (`null` when not finite); whole numbers 0..1e15 digit by digit. Room: {@link NUMBER_ROOM}. */
export function writeNonNegativeInteger(buffer: Uint8Array, at: number, value: number): number {
  if (Number.isInteger(value) && value >= 0 && value <= MAX_DIGITS_VALUE)
    return writeDigits(buffer, at, value);
  return writeOtherNumber(buffer, at, value);
}

/**
 * `value` rounded to hundredths, as `String(Math.round(value * 100) / 100)` writes it (`null` when not finite),
 * from whole numbers (a double's shortest form costs more than two integers'). Room: {@link NUMBER_ROOM}.
 */
export function writeHundredths(buffer: Uint8Array, at: number, value: number): number {
  if (!Number.isFinite(value)) return writeOtherNumber(buffer, at, value);
  const hundredths = Math.round(value * 100);
  if (!(hundredths >= 0 && hundredths <= MAX_HUNDREDTHS))
    return writeOtherNumber(buffer, at, hundredths / 100);
  const whole = Math.floor(hundredths / 100);
  const fraction = hundredths - whole * 100;
  let end = writeDigits(buffer, at, whole);
  if (fraction === 0) return end;
  buffer[end++] = DOT;
  const tenths = Math.floor(fraction / 10);
  const last = fraction - tenths * 10;
  buffer[end++] = ZERO + tenths;
  if (last !== 0) buffer[end++] = ZERO + last;
  return end;
}
