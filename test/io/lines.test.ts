import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type Line, readLines } from '../../src/io/lines.js';

async function* chunks(parts: (string | Buffer)[]): AsyncGenerator<Buffer | string> {
  yield* parts;
}

async function collect(parts: (string | Buffer)[], max?: number): Promise<Line[]> {
  const out: Line[] = [];
  for await (const batch of readLines(chunks(parts), max)) out.push(...batch);
  return out;
}

describe('readLines', () => {
  it('splits LF and CRLF lines across chunk boundaries, with byte offsets', async () => {
    const lines = await collect(['a@x.test\r', '\nb@', 'x.test\nc@x.test']);
    expect(lines.map((line) => line.text)).toEqual(['a@x.test', 'b@x.test', 'c@x.test']);
    expect(lines.map((line) => [line.start, line.end, line.terminated])).toEqual([
      [0, 10, true],
      [10, 19, true],
      [19, 27, false],
    ]);
    expect(lines.map((line) => line.number)).toEqual([1, 2, 3]);
  });

  it('decodes UTF-8 split inside a character, strips a leading BOM, and counts offsets in bytes', async () => {
    const bytes = Buffer.from('\uFEFFjosé@exämple.test\n用户@例子.广告\n', 'utf8');
    const parts = [...bytes].map((byte) => Buffer.from([byte]));
    const lines = await collect(parts);
    expect(lines.map((line) => line.text)).toEqual(['josé@exämple.test', '用户@例子.广告']);
    expect(lines[1]!.end).toBe(bytes.length);
    expect(lines[1]!.start).toBe(Buffer.byteLength('\uFEFFjosé@exämple.test\n'));
  });

  it('turns invalid UTF-8 into U+FFFD instead of failing', async () => {
    const lines = await collect([Buffer.from([0x61, 0xff, 0x40, 0x62, 0x0a])]);
    expect(lines[0]!.text).toBe('a\uFFFD@b');
  });

  it('marks an over-long line without buffering it, and goes on with the next', async () => {
    const long = 'x'.repeat(5000);
    const lines = await collect(
      [long.slice(0, 1000), long.slice(1000), '\nnext@x.test\n', 'y'.repeat(300)],
      256,
    );
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ tooLong: true, start: 0, end: 5001 });
    expect(lines[0]!.text.length).toBeLessThanOrEqual(200);
    expect(lines[1]).toMatchObject({ text: 'next@x.test', tooLong: false });
    expect(lines[2]).toMatchObject({ tooLong: true, terminated: false });
  });

  it('yields nothing for an empty input and one empty line for a lone newline', async () => {
    expect(await collect([])).toEqual([]);
    expect((await collect(['\n'])).map((line) => line.text)).toEqual(['']);
  });

  it('gives the same lines however the input is chunked (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc
            .string({ unit: 'grapheme', maxLength: 12 })
            .filter((s) => !s.includes('\n') && !s.includes('\r')),
          {
            maxLength: 12,
          },
        ),
        fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }),
        async (rows, cuts) => {
          const bytes = Buffer.from(rows.map((row) => `${row}\n`).join(''), 'utf8');
          const parts: Buffer[] = [];
          let at = 0;
          for (let index = 0; at < bytes.length; index++) {
            const size = cuts[index % cuts.length]!;
            parts.push(bytes.subarray(at, at + size));
            at += size;
          }
          const lines = await collect(parts);
          expect(lines.map((line) => line.text)).toEqual(
            rows.map((row, index) => (index === 0 ? row.replace(/^\uFEFF/, '') : row)),
          );
          expect(lines.at(-1)?.end ?? 0).toBe(bytes.length);
        },
      ),
    );
  });
});
