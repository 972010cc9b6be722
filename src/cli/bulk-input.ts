/**
 * The input side of `mailvet bulk`: the file or standard input to read (checked once, readable twice), whether
 * the output would overwrite it, the row count for the progress bar, and the rows an earlier run wrote (`--resume`).
 * @module
 */
import { createReadStream, fstatSync, type Stats, statSync } from 'node:fs';
import { access, constants, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Readable } from 'node:stream';
import {
  InputError,
  type InputOptions,
  type InputRecord,
  type InputShape,
  openInput as openList,
} from '../io/input.js';
import { CliError, type CliIo, EXIT, quote } from './io.js';
import { KeyDigest, type ResumePoint, sameKey } from './output.js';

/** An input that can be read (twice for a file: once to count its rows, once to verify them). */
export interface Source {
  /** `standard input` or the path as given. */
  readonly name: string;
  /** The resolved path, or `undefined` for standard input. */
  readonly path: string | undefined;
  open(): Readable;
}

/** The input named on the command line (`-`: standard input), checked to be a readable file. */
export async function sourceOf(arg: string, io: CliIo): Promise<Source> {
  if (arg === '-') return { name: 'standard input', path: undefined, open: () => io.stdin };
  const path = resolve(io.cwd ?? process.cwd(), arg);
  try {
    if ((await stat(path)).isDirectory())
      throw new CliError(EXIT.io, `cannot read ${arg}: it is a directory`);
    await access(path, constants.R_OK);
  } catch (error) {
    if (error instanceof CliError) throw error;
    const code = (error as { code?: unknown }).code;
    const reason =
      code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(code ?? error);
    throw new CliError(EXIT.io, `cannot read ${arg}: ${reason}`);
  }
  return { name: arg, path, open: () => createReadStream(path) };
}

/**
 * True when `outPath` is the input under another name: the same device and inode as the input file (a symlink,
 * a hard link, `./in.txt`), or as the file standard input is redirected from (`bulk - -o in.txt < in.txt`).
 * Writing it would read back what is written, and grow it without end.
 */
export function sameFile(outPath: string, source: Source, io: CliIo): boolean {
  // Synchronous on purpose: no turn of the event loop between opening standard input and reading it.
  let out: Stats;
  try {
    out = statSync(outPath);
  } catch {
    return false; // no output file yet: nothing to compare
  }
  let input: Stats | undefined;
  if (source.path !== undefined) input = statSync(source.path);
  else {
    const fd = (io.stdin as { fd?: unknown }).fd;
    if (typeof fd === 'number') {
      try {
        input = fstatSync(fd);
      } catch {
        input = undefined;
      }
    }
  }
  return input?.isFile() === true && input.dev === out.dev && input.ino === out.ino;
}

/** How {@link openInput} reads `source`: a `.txt` file is plain text, whatever its first line looks like. */
export function inputOptions(source: Source, column: string | undefined): InputOptions {
  return { name: source.name, column, text: source.path?.toLowerCase().endsWith('.txt') ?? false };
}

/** Counts the rows of a file input (a first, streaming pass), for the progress bar's total. */
export async function countRows(
  source: Source,
  column: string | undefined,
): Promise<{ shape: InputShape; rows: number }> {
  const stream = source.open();
  try {
    const opened = await openInput(stream, inputOptions(source, column));
    if (opened === undefined) throw new CliError(EXIT.io, `${source.name} is empty`);
    const rows = await opened.count();
    if (rows === 0) throw new CliError(EXIT.io, `${source.name} has a header row but no addresses`);
    return { shape: opened.shape, rows };
  } finally {
    stream.destroy();
  }
}

/** Passes records through, turning a read error of the input (EIO, ...) into a one-line I/O error. */
export async function* readFailing(
  records: AsyncGenerator<InputRecord>,
  name: string,
): AsyncGenerator<InputRecord> {
  try {
    yield* records;
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    if (error instanceof CliError || typeof code !== 'string') throw error;
    throw new CliError(EXIT.io, `cannot read ${name}: ${code}`, { cause: error });
  }
}

/** Skips the rows an earlier run wrote, checking that the last of them is the output's last row. */
export async function skipDone(
  records: AsyncGenerator<InputRecord>,
  point: ResumePoint,
  check: (record: InputRecord) => string,
  names: { input: string; output: string },
): Promise<void> {
  let last: InputRecord | undefined;
  const keys = new KeyDigest();
  for (let index = 0; index < point.done; index++) {
    const next = await records.next();
    if (next.done) {
      throw new CliError(
        EXIT.io,
        `cannot resume: ${names.output} has more rows (${point.done}) than ${names.input}`,
      );
    }
    last = next.value;
    keys.add(check(last));
  }
  if (last !== undefined && point.lastKey !== null && !sameKey(point.lastKey, check(last))) {
    throw new CliError(
      EXIT.io,
      `cannot resume: row ${point.done} of ${names.output} (${quote(point.lastKey)}) is not row ${point.done} of ${names.input} (${quote(check(last))}); remove ${names.output} or pick another -o`,
    );
  }
  if (keys.digest() !== point.keysDigest) {
    throw new CliError(
      EXIT.io,
      `cannot resume: the ${point.done} rows of ${names.output} were not written for the first ${point.done} rows of ${names.input} (their addresses differ); remove ${names.output} or pick another -o`,
    );
  }
}

/** Opens a list as {@link openList} does, its shape errors as the CLI's (usage: exit 2, unreadable: exit 3). */
export async function openInput(stream: Parameters<typeof openList>[0], options: InputOptions) {
  try {
    return await openList(stream, options);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    throw new CliError(error.kind === 'usage' ? EXIT.usage : EXIT.io, error.message, { cause: error });
  }
}
