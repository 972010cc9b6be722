/**
 * Runs `main(argv, io)` in process with captured streams, and helpers for temporary files.
 * @module
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import type { CliIo } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';

/** What a run printed and returned. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@link runCli}: the io fields to set, plus standard input as text. */
export type RunOptions = Partial<Omit<CliIo, 'stdin' | 'stdout' | 'stderr'>> & {
  readonly stdin?: string | Readable;
  /** Sets `isTTY` (and a width) on the captured standard error, as cli-progress checks the stream itself. */
  readonly stderrTerminal?: boolean;
};

function capture(terminal = false): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  if (terminal) Object.assign(stream, { isTTY: true, columns: 200 });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Runs the CLI in process. The environment is empty unless given: the machine's MAILVET_* never leak in. */
export async function runCli(argv: string[], options: RunOptions = {}): Promise<CliRun> {
  const stdout = capture();
  const stderr = capture(options.stderrTerminal);
  const { stdin, stderrTerminal, ...rest } = options;
  const io: CliIo = {
    env: {},
    hostname: () => 'verifier.mailvet-test.net',
    ...rest,
    stdin: stdin instanceof Readable ? stdin : Readable.from(stdin === undefined ? [] : [Buffer.from(stdin)]),
    stdout: stdout.stream,
    stderr: stderr.stream,
    stderrIsTTY: stderrTerminal ?? options.stderrIsTTY ?? false,
  };
  const code = await main(argv, io);
  await new Promise<void>((resolve) => setImmediate(resolve));
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A temporary directory, removed by the returned `remove()`. */
export async function tempDir(
  prefix: string,
): Promise<{ path: string; file: (name: string) => string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, file: (name) => join(path, name), remove: () => rm(path, { recursive: true, force: true }) };
}

/** Parses CSV text written by mailvet (RFC 4180, CRLF) into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index];
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index++;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      index++;
    } else field += char;
  }
  if (field !== '' || row.length > 0) rows.push([...row, field]);
  return rows;
}

/** Starts `mailvet serve` in process; resolves once it prints where it listens. */
export async function serveInProcess(argv: string[], env: Record<string, string>) {
  const controller = new AbortController();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let printed = '';
  let errors = '';
  stderr.on('data', (chunk: Buffer) => {
    errors += chunk.toString();
  });
  const listening = new Promise<string>((resolve) => {
    stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      const url = /listening on (http:\/\/\S+)/.exec(printed)?.[1];
      if (url) resolve(url);
    });
  });
  const exited = main(['serve', ...argv], {
    stdin: new PassThrough(),
    stdout,
    stderr,
    env,
    signal: controller.signal,
  });
  const url = await Promise.race([
    listening,
    exited.then((code) => Promise.reject(new Error(`exited ${code}: ${errors}`))),
  ]);
  return { url, stop: () => controller.abort(), exited, output: () => printed };
}
