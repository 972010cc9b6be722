/**
 * `mailvet bulk <file|-> [-o out]`: verifies a list, streaming it through the verifier in input order.
 * @module
 */
import { resolve } from 'node:path';
import type { InputRecord } from '../io/input.js';
import { FORMULA_ESCAPES, type FormulaEscape } from '../io/result-csv.js';
import { type Status, type SubStatus, type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import { createVerifier, type Verifier } from '../verifier.js';
import { type FlagSpec, flagHelp, type ParsedArgs, parseArgs } from './args.js';
import {
  countRows,
  inputOptions,
  openInput,
  readFailing,
  type Source,
  sameFile,
  skipDone,
  sourceOf,
} from './bulk-input.js';
import { type CliSettings, readSettings, single, VERIFY_FLAGS, verifyOptionsOf } from './config.js';
import { type GreylistRetrier, greylistDelaysOf, greylistRetrier } from './greylist.js';
import { heloWarning } from './helo.js';
import { CliError, type CliIo, EXIT, usageError, write } from './io.js';
import { optionsUsageError } from './options-error.js';
import {
  emptyCounts,
  fileSink,
  formatOf,
  keyOf,
  layoutOf,
  type OutputRow,
  ResultWriter,
  resumeFrom,
  streamSink,
} from './output.js';
import { orderedMap } from './pipeline.js';
import { createProgress, type Progress, rows, summaryTable } from './progress.js';
import { clockTime } from './progress-line.js';
import { colourWanted, createStyle, type Style } from './style.js';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'output',
    short: 'o',
    type: 'string',
    value: '<file>',
    description: 'write results here (default: standard output)',
  },
  {
    name: 'format',
    type: 'string',
    value: '<csv|json|ndjson>',
    description: 'output format (default: by extension, else csv)',
  },
  {
    name: 'column',
    type: 'string',
    value: '<name>',
    description: 'header of the address column (default: found by name)',
  },
  { name: 'resume', type: 'boolean', description: 'go on after the rows already in the output file' },
  {
    name: 'formula-escape',
    type: 'string',
    value: '<auto|always|never>',
    description: "which CSV cells get a ' so spreadsheets do not run them (default: auto)",
  },
  {
    name: 'greylist-delays',
    type: 'string',
    value: '<s,s,...|none>',
    description: 'retry a greylisted address after these delays in seconds (default: none)',
  },
  ...VERIFY_FLAGS,
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** How many rows may be in flight (running or waiting for an earlier row) per unit of `--concurrency`. */
export const WINDOW_PER_CONCURRENCY = 4;

/** Help text of `mailvet bulk`. */
export const BULK_HELP = `Usage: mailvet bulk [flags] <file|-> [-o <out>]

Verifies a list: plain text (one address a line) or CSV (the address column found by its header name, or
--column), from a file or standard input (-). Results keep the input's order: CSV (the input's columns plus
the result's), JSON or NDJSON, chosen by --format or the output's extension. Progress and the summary go to
standard error. Ctrl-C writes what is done; run again with --resume to go on. While rows wait for a
greylisting retry (--greylist-delays), the first Ctrl-C finishes now instead: they keep their greylisted verdict
and the run goes on.

Flags:
${flagHelp(FLAGS)}

Every verification flag also reads MAILVET_<NAME> (MAILVET_TIMEOUT, MAILVET_DNS, ...); flags win.
Exit codes: 0 done, 2 usage error, 3 unreadable or empty input, unwritable output, 130 interrupted.
Example: mailvet bulk contacts.csv -o checked.csv --no-smtp
`;

/** A result for a row that was not verified (unreadable, or the verification failed). */
function resultWithout(email: string, subStatus: SubStatus): VerificationResult {
  return verdictOnlyResult(email.trim(), verdictOf(subStatus));
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
}

/** What the command line asks for, checked. */
interface BulkPlan {
  readonly source: Source;
  /** The output path resolved, or `undefined` for standard output. */
  readonly outPath: string | undefined;
  /** The output as given, for messages. */
  readonly outName: string;
  readonly format: ReturnType<typeof formatOf>;
  readonly column: string | undefined;
  readonly resume: boolean;
  readonly settings: CliSettings;
  readonly formulaEscape: FormulaEscape;
  /** Delays of the greylisting retries, in milliseconds; `[]`: none. */
  readonly greylistDelaysMs: readonly number[];
}

/** The `--formula-escape` mode; `auto` when the flag is absent. */
function formulaEscapeOf(value: string | undefined): FormulaEscape {
  if (value === undefined) return 'auto';
  const mode = FORMULA_ESCAPES.find((candidate) => candidate === value);
  if (mode === undefined) {
    throw usageError(
      `--formula-escape must be auto, always or never, not ${JSON.stringify(value.slice(0, 40))}`,
    );
  }
  return mode;
}

async function planOf(args: ParsedArgs, io: CliIo): Promise<BulkPlan> {
  const [inputArg, ...extra] = args.positionals;
  if (inputArg === undefined) {
    throw usageError('bulk needs an input file, or - for standard input; see mailvet bulk --help');
  }
  if (extra.length > 0) {
    throw usageError(`bulk takes one input, got ${args.positionals.length}; use -o for the output`);
  }
  const settings = readSettings(args, io.env);
  const outArg = args.string('output');
  const outPath =
    outArg === undefined || outArg === '-' ? undefined : resolve(io.cwd ?? process.cwd(), outArg);
  const format = formatOf(args.string('format'), outPath);
  const resume = args.flag('resume');
  if (resume && outPath === undefined) throw usageError('--resume needs an output file: -o <file>');
  const source = await sourceOf(inputArg, io);
  if (outPath !== undefined && (outPath === source.path || sameFile(outPath, source, io))) {
    throw usageError('the output file must not be the input file');
  }
  const outName = outPath === undefined ? 'standard output' : (outArg ?? '');
  const formulaEscape = formulaEscapeOf(args.string('formula-escape'));
  const greylistDelaysMs =
    greylistDelaysOf(single(args, io.env, 'greylist-delays', 'MAILVET_GREYLIST_DELAYS')) ?? [];
  const column = args.string('column');
  return { source, outPath, outName, format, column, resume, settings, formulaEscape, greylistDelaysMs };
}

/** What a run did. */
interface BulkTally {
  readonly counts: Record<Status, number>;
  /** Rows in the output, resumed ones included. */
  done: number;
  /** Rows verified by this run. */
  processed: number;
  /** Rows that could not be read or verified. */
  unreadable: number;
}

/** Verifies the records in order through a bounded window, writing each row as soon as it can. */
async function verifyRows(
  records: AsyncGenerator<InputRecord>,
  verifier: GreylistRetrier,
  writer: ResultWriter,
  tally: BulkTally,
  options: {
    readonly window: number;
    readonly signal: AbortSignal;
    readonly progress: Progress;
    readonly name: string;
  },
): Promise<void> {
  const verify = async (record: InputRecord): Promise<OutputRow> => {
    if (record.error !== null) {
      return { record, result: resultWithout(record.email, 'failed_syntax_check'), error: record.error };
    }
    try {
      return { record, result: await verifier.verify(record.email), error: null };
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      return {
        record,
        result: resultWithout(record.email, 'exception_occurred'),
        error: `verification failed: ${reason}`,
      };
    }
  };
  const rowsInOrder = orderedMap(readFailing(records, options.name), verify, {
    window: options.window,
    signal: options.signal,
  });
  for await (const row of rowsInOrder) {
    await writer.add(row);
    tally.counts[row.result.status]++;
    tally.done++;
    tally.processed++;
    if (row.error !== null) tally.unreadable++;
    options.progress.update(tally.done, tally.counts);
  }
}

function reportOf(
  plan: BulkPlan,
  argv: readonly string[],
  tally: BulkTally,
  run: {
    readonly elapsedMs: number;
    readonly total: number | undefined;
    readonly interrupted: boolean;
    readonly style: Style;
  },
): string {
  let report = summaryTable(
    tally.counts,
    { processed: tally.processed, elapsedMs: run.elapsedMs },
    run.style,
  );
  if (tally.unreadable > 0) {
    const where = plan.format === 'csv' ? 'column' : 'field';
    report += `${rows(tally.unreadable)} could not be read or verified: see the error ${where}\n`;
  }
  if (plan.outPath !== undefined) report += `results: ${plan.outName}\n`;
  if (run.interrupted) {
    const of = run.total === undefined ? '' : ` of ${run.total}`;
    if (plan.outPath === undefined) {
      report += `mailvet: interrupted after ${tally.done}${of} rows\n`;
    } else {
      const again = [...argv.filter((arg) => arg !== '--resume'), '--resume'].map(shellQuote).join(' ');
      report += `mailvet: interrupted; ${tally.done}${of} rows are in ${plan.outName}. Resume with:\n  mailvet bulk ${again}\n`;
    }
  }
  return report;
}

/** What `mailvet bulk` says when Ctrl-C finishes now. */
const FINISHING =
  'finishing now: the rows waiting for a greylisting retry keep their greylisted result (no retry is made); Ctrl-C again stops';

/** What `mailvet bulk` says (once, without a terminal) when a row starts waiting for a greylisting retry. */
function waitHint(nextDueMs: number): string {
  return `a row waits for a greylisting retry at ${clockTime(nextDueMs)}; Ctrl-C (SIGINT) finishes now, keeping its greylisted result`;
}

/** Runs `mailvet bulk`; returns the exit code. */
export async function runBulk(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet bulk');
  if (args.flag('help')) {
    await write(io.stdout, BULK_HELP);
    return EXIT.ok;
  }
  const plan = await planOf(args, io);
  const { source, settings } = plan;
  const counted = source.path === undefined ? undefined : await countRows(source, plan.column);

  const stream = source.open();
  const now = io.now ?? Date.now;
  const started = now();
  try {
    const opened = await openInput(stream, inputOptions(source, plan.column));
    if (opened === undefined) throw new CliError(EXIT.io, `${source.name} is empty`);
    const layout = layoutOf(plan.format, opened.shape, settings.trace, plan.formulaEscape);
    const point =
      plan.outPath !== undefined && plan.resume ? await resumeFrom(plan.outPath, layout) : undefined;
    if (point !== undefined) {
      const names = { input: source.name, output: plan.outName };
      await skipDone(opened.records, point, (record) => keyOf(record, layout), names);
    }

    const built = verifyOptionsOf(settings);
    const controller = new AbortController();
    const abort = (): void => controller.abort();
    io.signal?.addEventListener('abort', abort, { once: true });
    if (io.signal?.aborted) controller.abort();
    let verifier: Verifier;
    try {
      verifier = (io.createVerifier ?? createVerifier)({ ...built.options, signal: controller.signal });
    } catch (error) {
      built.close();
      io.signal?.removeEventListener('abort', abort);
      throw optionsUsageError(error) ?? error;
    }
    const helo = heloWarning(settings, io.hostname);
    if (helo !== undefined) await write(io.stderr, helo);

    const tally: BulkTally = {
      counts: point === undefined ? emptyCounts() : { ...point.counts },
      done: point?.done ?? 0,
      processed: 0,
      unreadable: 0,
    };
    const tty = io.stderrIsTTY ?? false;
    let hinted = false;
    const retrier = greylistRetrier((email) => verifier.verify(email), {
      delaysMs: plan.greylistDelaysMs,
      now,
      signal: controller.signal,
      onWait: (waiting) => {
        // Once, as a plain line (on a terminal the progress line says it, and docs/cli.md says what Ctrl-C does).
        if (tty || hinted || io.interrupts === undefined) return;
        hinted = true;
        void write(io.stderr, `mailvet: ${waitHint(waiting.nextDueMs)}\n`);
      },
    });
    const finishNow = io.interrupts?.take(() => {
      if (!retrier.finish()) return false;
      void write(io.stderr, `\nmailvet: ${FINISHING}\n`);
      return true;
    });
    const style = createStyle(colourWanted(io.stderrIsTTY ?? false, io.env));
    const progress = createProgress({
      retries: () => retrier.waiting(),
      stream: io.stderr,
      tty,
      style,
      total: counted?.rows,
      done: tally.done,
      counts: tally.counts,
      now,
    });
    let writer: ResultWriter | undefined;
    try {
      const sink =
        plan.outPath === undefined
          ? streamSink(io.stdout)
          : await fileSink(plan.outPath, point !== undefined);
      writer = new ResultWriter(sink, layout, point?.done);
      const window = settings.concurrency * WINDOW_PER_CONCURRENCY;
      await verifyRows(opened.records, retrier, writer, tally, {
        window,
        signal: controller.signal,
        progress,
        name: source.name,
      });
    } finally {
      finishNow?.();
      progress.stop();
      io.signal?.removeEventListener('abort', abort);
      try {
        await writer?.finish();
      } finally {
        await verifier.dispose();
        built.close();
      }
    }

    const interrupted = controller.signal.aborted;
    if (tally.done === 0 && !interrupted) {
      throw new CliError(EXIT.io, `${source.name} has a header row but no addresses`);
    }
    const elapsedMs = now() - started;
    await write(
      io.stderr,
      reportOf(plan, argv, tally, { elapsedMs, total: counted?.rows, interrupted, style }),
    );
    return interrupted ? EXIT.interrupted : EXIT.ok;
  } finally {
    if (stream !== io.stdin) stream.destroy();
  }
}
