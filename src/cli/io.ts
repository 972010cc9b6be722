/**
 * What the CLI needs from its process, so that `main(argv, io)` runs in-process in tests.
 * @module
 */
import type { Readable, Writable } from 'node:stream';
import type { DiagnoseOptions } from '../doctor/options.js';
import type { DiagnosticsReport } from '../doctor/types.js';
import type { VerifyOptions } from '../options.js';
import type { Verifier } from '../verifier.js';

/** The process-facing side of the CLI: streams, environment, terminal flags, interruption. */
export interface CliIo {
  /** Standard input (read by `mailvet bulk -`). */
  readonly stdin: Readable;
  /** Standard output: results. */
  readonly stdout: Writable;
  /** Standard error: progress, summaries and error lines. */
  readonly stderr: Writable;
  /** Environment variables (`MAILVET_*`, `NO_COLOR`). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Standard output is a terminal (colour in `verify`). @default false */
  readonly stdoutIsTTY?: boolean;
  /** Standard error is a terminal (progress bar in `bulk`). @default false */
  readonly stderrIsTTY?: boolean;
  /** Aborted on Ctrl-C (SIGINT) or SIGTERM: `bulk` writes what is done, `serve` stops. */
  readonly signal?: AbortSignal;
  /**
   * Where a command may take a Ctrl-C (SIGINT) before it aborts `signal`: `bulk` takes it while rows wait for a
   * greylisting retry (finish now). Absent: every Ctrl-C aborts `signal`.
   */
  readonly interrupts?: InterruptTakers;
  /** Directory that relative paths are resolved against. @default process.cwd() */
  readonly cwd?: string;
  /** Clock in milliseconds, for rates and the pace of progress lines. @default Date.now */
  readonly now?: () => number;
  /** This machine's host name, the default EHLO name. @default os.hostname */
  readonly hostname?: () => string;
  /** Builds the verifier from the options the flags and environment gave. @default createVerifier */
  readonly createVerifier?: (options: VerifyOptions) => Verifier;
  /** Runs `mailvet doctor`'s diagnosis from the options the flags gave. @default diagnose */
  readonly diagnose?: (options: DiagnoseOptions) => Promise<DiagnosticsReport>;
}

/** The commands that may take a Ctrl-C before it stops them (see {@link CliIo.interrupts}). */
export interface InterruptTakers {
  /**
   * Adds `taker`, asked at each Ctrl-C before `signal` is aborted: it returns true when it took the Ctrl-C (then
   * nothing else happens). Returns a function that removes it.
   */
  take(taker: () => boolean): () => void;
}

/** The documented exit codes (docs/cli.md). */
export const EXIT = Object.freeze({
  /** Success; for `verify`: every address is `valid`. */
  ok: 0,
  /** `verify`: at least one address is not `valid`; `doctor`: a check failed, or readiness is not known. */
  notValid: 1,
  /** Usage error: unknown command or flag, bad value, missing argument. */
  usage: 2,
  /** Input or output error: unreadable or empty input, unwritable output, an output that cannot be resumed. */
  io: 3,
  /** Unexpected internal error. */
  internal: 4,
  /** Interrupted (Ctrl-C or SIGTERM); `bulk` wrote what was done. */
  interrupted: 130,
});

/** An exit code of the CLI. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A user-facing error: one line on standard error, then exit with `exitCode`. Never shows a stack trace. */
export class CliError extends Error {
  override name = 'CliError';
  readonly exitCode: ExitCode;

  constructor(exitCode: ExitCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.exitCode = exitCode;
  }
}

/** A usage error (exit code 2). */
export function usageError(message: string): CliError {
  return new CliError(EXIT.usage, message);
}

/** Writes `text` and waits while the stream's buffer is full. */
export async function write(stream: Writable, text: string): Promise<void> {
  if (stream.write(text)) return;
  await new Promise<void>((resolve, reject) => {
    const done = (error?: Error): void => {
      stream.off('drain', done);
      stream.off('error', done);
      if (error) reject(error);
      else resolve();
    };
    stream.on('drain', done);
    stream.on('error', done);
  });
}

/** Quotes a user-supplied value for an error line, bounded in length. */
export function quote(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
}
