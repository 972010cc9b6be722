/**
 * `mailvet serve [--port --host]`: runs the HTTP API on node:http until Ctrl-C or SIGTERM.
 * @module
 */
import { keysFromEnv } from '../http/auth.js';
import { createServer, type RunningServer } from '../http/node.js';
import { type FlagSpec, flagHelp, parseArgs } from './args.js';
import { integer, optionsUsageError, readSettings, single, VERIFY_FLAGS, verifyOptionsOf } from './config.js';
import { heloWarning } from './helo.js';
import { CliError, type CliIo, EXIT, usageError, write } from './io.js';

const FLAGS: readonly FlagSpec[] = [
  {
    name: 'port',
    type: 'string',
    value: '<port>',
    description: 'TCP port, 0 for any free one (default 8080)',
  },
  {
    name: 'host',
    type: 'string',
    value: '<address>',
    description: 'interface to listen on (default 127.0.0.1)',
  },
  ...VERIFY_FLAGS,
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet serve`. */
export const SERVE_HELP = `Usage: mailvet serve [flags]

Runs the HTTP API (/v1/verify, /v1/bulk, /v1/openapi.json, /healthz) until Ctrl-C or SIGTERM.
API keys come from MAILVET_API_KEYS (comma-separated); clients send "Authorization: Bearer <key>".
The verification flags below set how the server verifies.

Flags:
${flagHelp(FLAGS)}

Environment: MAILVET_API_KEYS (required), MAILVET_PORT, MAILVET_HOST, and the MAILVET_* of the flags.
Exit codes: 0 stopped, 2 usage error (no API keys, bad flag), 3 cannot listen.
Example: MAILVET_API_KEYS=secret mailvet serve --port 8080
`;

/** Runs `mailvet serve`; resolves with the exit code once the server has stopped. */
export async function runServe(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet serve');
  if (args.flag('help')) {
    await write(io.stdout, SERVE_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length > 0)
    throw usageError(`serve takes no arguments, got ${JSON.stringify(args.positionals[0])}`);
  const portSource = single(args, io.env, 'port', 'MAILVET_PORT');
  const port = portSource === undefined ? 8080 : integer(portSource, 0, 65_535);
  const host = single(args, io.env, 'host', 'MAILVET_HOST')?.value ?? '127.0.0.1';
  const apiKeys = keysFromEnv(io.env);
  if (apiKeys.length === 0) throw usageError('serve needs API keys: set MAILVET_API_KEYS=key1,key2');
  const settings = readSettings(args, io.env);
  const built = verifyOptionsOf(settings);

  let running: RunningServer;
  try {
    running = await createServer({
      port,
      host,
      apiKeys,
      verifierOptions: built.options,
      logger: {
        error: (message, details) => {
          const reason = details.error instanceof Error ? details.error.message : String(details.error);
          io.stderr.write(`mailvet: ${message} (request ${details.requestId}): ${reason}\n`);
        },
      },
    });
  } catch (error) {
    built.close();
    const usage = optionsUsageError(error);
    if (usage !== undefined) throw usage;
    const code = (error as { code?: unknown } | null)?.code;
    const reason =
      code === 'EADDRINUSE'
        ? 'the address is in use'
        : code === 'EACCES'
          ? 'permission denied'
          : String(code ?? error);
    throw new CliError(EXIT.io, `cannot listen on ${host}:${port}: ${reason}`, { cause: error });
  }
  const helo = heloWarning(settings, io.hostname);
  if (helo !== undefined) await write(io.stderr, helo);

  await write(
    io.stdout,
    `mailvet API listening on ${running.url} (${apiKeys.length} API key${apiKeys.length === 1 ? '' : 's'}); Ctrl-C stops it\n`,
  );
  await new Promise<void>((resolve) => {
    if (io.signal === undefined) return;
    if (io.signal.aborted) resolve();
    else io.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await running.close();
  built.close();
  await write(io.stdout, 'mailvet API stopped\n');
  return EXIT.ok;
}
