/**
 * Reads a byte stream as lines, with the byte offsets that `--resume` needs to cut a file after its last
 * complete record.
 * @module
 */

import { type Line, LineSplitter } from './line-splitter.js';

export type { Line };

/** Longest line accepted, in bytes. @default 65536 */
export const MAX_LINE_BYTES = 65_536;

/** How many bytes of an over-long line are kept, so that the row can be identified. */
const PREVIEW_BYTES = 200;

/**
 * Reads `source` line by line (through the shared {@link LineSplitter}, a leading BOM dropped). Yields the lines
 * of each chunk as one batch, so that a million-line file does not cost a million promise hops. A line longer
 * than `maxLineBytes` is not buffered: it is yielded with `tooLong` set and its first bytes as `text`.
 */
export async function* readLines(
  source: AsyncIterable<Buffer | string>,
  maxLineBytes: number = MAX_LINE_BYTES,
): AsyncGenerator<Line[]> {
  const splitter = new LineSplitter({ maxLineBytes, previewBytes: PREVIEW_BYTES, stripBom: true });
  for await (const raw of source) {
    const batch = splitter.push(typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw);
    if (batch.length > 0) yield batch;
  }
  const last = splitter.end();
  if (last.length > 0) yield last;
}
