/** The batched file-descriptor destination of the logs, on a temporary file. */
import { closeSync, openSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FdWriter } from '../../src/cli/fd-writer.js';
import { createLogger } from '../../src/cli/logger.js';
import { utf8Bytes, writeBytes } from '../../src/io/json-bytes.js';
import { waitFor } from '../support/wait-for.js';
import { tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
let fd: number;
let file: string;
beforeEach(async () => {
  dir = await tempDir('mailvet-fd-writer-');
  file = dir.file('log');
  fd = openSync(file, 'w');
});
afterEach(async () => {
  closeSync(fd);
  await dir.remove();
});

const flushed = (writer: FdWriter) => new Promise<void>((resolve) => writer.flush(() => resolve()));

describe('FdWriter', () => {
  it('gathers lines and writes them all, in order, by flush()', async () => {
    const writer = new FdWriter(fd, { intervalMs: 60_000 });
    const lines = Array.from({ length: 1000 }, (_, i) => `line ${i} ünïcödé\n`);
    for (const line of lines) writer.write(line);
    expect(readFileSync(file, 'utf8')).toBe(''); // nothing written on the write's path
    await flushed(writer);
    expect(readFileSync(file, 'utf8')).toBe(lines.join(''));
  });

  it('writes a full batch without a flush, and a quiet one after its interval', async () => {
    const writer = new FdWriter(fd, { batchBytes: 100, intervalMs: 20 });
    writer.write('x'.repeat(150));
    await waitFor(() => readFileSync(file, 'utf8').length === 150, { what: 'the full batch' });
    writer.write('tail\n');
    await waitFor(() => readFileSync(file, 'utf8').endsWith('tail\n'), { what: 'the interval' });
  });

  it('flushSync writes what is gathered', () => {
    const writer = new FdWriter(fd, { intervalMs: 60_000 });
    writer.write('a\n');
    writer.write('b\n');
    writer.flushSync();
    expect(readFileSync(file, 'utf8')).toBe('a\nb\n');
  });

  it('writes encoded lines in order with text lines, across batches and past a batch', async () => {
    const writer = new FdWriter(fd, { batchBytes: 64, intervalMs: 60_000 });
    const expected: string[] = [];
    for (let i = 0; i < 200; i++) {
      const line = i % 50 === 7 ? `long ${'é'.repeat(100)} ${i}\n` : `line ${i}\n`;
      expected.push(line);
      const bytes = utf8Bytes(line);
      if (i % 2 === 0) writer.write(line);
      else writer.writeEncoded(bytes.length + 10, (buffer, at) => writeBytes(buffer, at, bytes));
    }
    await flushed(writer);
    expect(readFileSync(file, 'utf8')).toBe(expected.join(''));
  });

  it('a failed descriptor drops lines and still calls flush back', async () => {
    const writer = new FdWriter(999_999, { intervalMs: 60_000 });
    writer.write('lost\n');
    await flushed(writer);
    writer.write('dropped\n');
    await flushed(writer);
  });
});

describe('the logger on a file descriptor', () => {
  it("writes the request line's fast path in pino's format, with the time as toISOString writes it", async () => {
    const stream = { fd, write: () => true } as unknown as NodeJS.WritableStream;
    const logger = createLogger({ level: 'info', format: 'json', addresses: false }, { stream });
    const before = Date.now();
    const members = utf8Bytes('"a":1,"b":"x"');
    logger.log.infoBytes(members.length, (buffer, at) => writeBytes(buffer, at, members), 'fast');
    logger.log.info({ a: 1, b: 'x' }, 'pino');
    await logger.flush();
    const [fast, slow] = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(fast).toEqual({ ...slow, time: fast!.time, msg: 'fast' });
    expect(new Date(fast!.time as string).toISOString()).toBe(fast!.time);
    expect(Date.parse(fast!.time as string)).toBeGreaterThanOrEqual(before);
    const quiet = createLogger({ level: 'warn', format: 'json', addresses: false }, { stream });
    quiet.log.infoBytes(5, (buffer, at) => writeBytes(buffer, at, utf8Bytes('"a":1')), 'not written');
    await quiet.flush();
    expect(readFileSync(file, 'utf8')).not.toContain('not written');
  });
});
