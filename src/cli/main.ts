/**
 * The `mailvet` command: `main(argv, io)` dispatches to `verify`, `bulk`, `serve` or `doctor` and turns every user
 * error into one line on standard error and an exit code. It never calls `process.exit`.
 * @module
 */
import { readFileSync } from 'node:fs';
import { CliError, type CliIo, EXIT, usageError, write } from './io.js';
import { optionsUsageError } from './options-error.js';

export type { CliIo } from './io.js';
export { CliError, EXIT } from './io.js';

type Command = (argv: readonly string[], io: CliIo) => Promise<number>;

/** The commands, loaded on first use so that `--help` and `--version` do not load the engine's data. */
const COMMANDS: Readonly<Record<string, () => Promise<Command>>> = {
  verify: async () => (await import('./verify.js')).runVerify,
  bulk: async () => (await import('./bulk.js')).runBulk,
  serve: async () => (await import('./serve.js')).runServe,
  doctor: async () => (await import('./doctor.js')).runDoctor,
  worker: async () => (await import('./worker.js')).runWorker,
  keys: async () => (await import('./keys.js')).runKeys,
};

/** The top-level help text. */
export const MAIN_HELP = `Usage: mailvet <command> [flags]

Commands:
  verify <email...>        verify addresses and print a summary of each (or --json)
  bulk <file|-> [-o out]   verify a CSV or text list, streaming, with progress and --resume
  serve [--port --host]    run the HTTP API (keys from MAILVET_API_KEYS)
  doctor                   check this host: port 25, reverse DNS, HELO, SPF, blocklists
  worker --redis --store   verify bulk jobs of a worker fleet (API nodes: serve --redis --store)
  keys <create|list|...>   manage the API keys in the job store: scopes, limits, revoke, rotate

Flags:
  -h, --help               show help (also: mailvet <command> --help)
  -v, --version            show the version

Configuration: flags, else MAILVET_* environment variables (see docs/cli.md).
Example: mailvet verify --no-smtp someone@example.com
`;

/** The package version, read from package.json next to src/ or dist/. */
export function version(): string {
  const text = readFileSync(new URL('../../package.json', import.meta.url), 'utf8');
  const parsed = JSON.parse(text) as { version?: unknown };
  return typeof parsed.version === 'string' ? parsed.version : 'unknown';
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    if (command === undefined) {
      await write(io.stderr, MAIN_HELP);
      return EXIT.usage;
    }
    await write(io.stdout, MAIN_HELP);
    return EXIT.ok;
  }
  if (command === '--version' || command === '-v') {
    await write(io.stdout, `mailvet ${version()}\n`);
    return EXIT.ok;
  }
  const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (load === undefined) {
    const shown = JSON.stringify(command.slice(0, 40));
    throw usageError(
      `unknown ${command.startsWith('-') ? 'flag' : 'command'} ${shown}; commands: verify, bulk, serve, doctor, worker, keys (see mailvet --help)`,
    );
  }
  const run = await load();
  return run(rest, io);
}

/**
 * Runs the `mailvet` command line in process and resolves with its exit code (docs/cli.md): 0 success,
 * 1 `verify` found an address that is not valid (`doctor`: a check failed), 2 usage error, 3 input/output error, 4 internal error,
 * 130 interrupted. Errors are written to `io.stderr` as one line; a stack trace only with `MAILVET_DEBUG=1`.
 * @example
 * const code = await main(['verify', '--no-smtp', 'someone@example.com'], {
 *   stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env,
 * });
 */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (caught) {
    const error = optionsUsageError(caught) ?? caught;
    if (error instanceof CliError) {
      await write(io.stderr, `mailvet: ${error.message}\n`);
      return error.exitCode;
    }
    const message = error instanceof Error ? error.message : String(error);
    const debug = io.env.MAILVET_DEBUG === '1' && error instanceof Error ? `\n${error.stack ?? ''}` : '';
    const hint = debug === '' ? ' (set MAILVET_DEBUG=1 for details)' : '';
    await write(io.stderr, `mailvet: unexpected error: ${message.split('\n')[0]}${hint}${debug}\n`);
    return EXIT.internal;
  }
}
