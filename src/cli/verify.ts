/**
 * `mailvet verify <email...>`: verifies addresses given on the command line.
 * @module
 */

import type { VerificationResult } from '../result.js';
import { createVerifier } from '../verifier.js';
import { type FlagSpec, flagHelp, parseArgs } from './args.js';
import { readSettings, VERIFY_FLAGS, verifyOptionsOf } from './config.js';
import { heloWarning } from './helo.js';
import { type CliIo, EXIT, usageError, write } from './io.js';
import { optionsUsageError } from './options-error.js';
import { orderedMap } from './pipeline.js';
import { renderResult } from './render.js';
import { colourWanted, createStyle } from './style.js';

const FLAGS: readonly FlagSpec[] = [
  { name: 'json', type: 'boolean', description: 'print the results as a JSON array' },
  ...VERIFY_FLAGS,
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet verify`. */
export const VERIFY_HELP = `Usage: mailvet verify [flags] <email...>

Verifies each address (syntax, typo, lists, MX, SMTP probe) and prints a summary per address.

Flags:
${flagHelp(FLAGS)}

Every verification flag also reads MAILVET_<NAME> (MAILVET_TIMEOUT, MAILVET_DNS, ...); flags win.
Exit codes: 0 every address is valid, 1 at least one is not, 2 usage error, 130 interrupted.
Example: mailvet verify --no-smtp someone@example.com
`;

async function* each(addresses: readonly string[]): AsyncGenerator<string> {
  yield* addresses;
}

/** Runs `mailvet verify`; returns the exit code. */
export async function runVerify(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs(argv, FLAGS, 'mailvet verify');
  if (args.flag('help')) {
    await write(io.stdout, VERIFY_HELP);
    return EXIT.ok;
  }
  if (args.positionals.length === 0)
    throw usageError('verify needs at least one address; see mailvet verify --help');
  const settings = readSettings(args, io.env);
  const built = verifyOptionsOf(settings);
  const controller = new AbortController();
  const abort = (): void => controller.abort();
  io.signal?.addEventListener('abort', abort, { once: true });
  if (io.signal?.aborted) controller.abort();
  let verifier: ReturnType<typeof createVerifier>;
  try {
    verifier = (io.createVerifier ?? createVerifier)({ ...built.options, signal: controller.signal });
  } catch (error) {
    built.close();
    throw optionsUsageError(error) ?? error;
  }
  const helo = heloWarning(settings, io.hostname);
  if (helo !== undefined) await write(io.stderr, helo);
  const results: VerificationResult[] = [];
  try {
    const verifications = orderedMap(each(args.positionals), (email) => verifier.verify(email), {
      window: settings.concurrency,
      signal: controller.signal,
    });
    for await (const result of verifications) results.push(result);
  } finally {
    io.signal?.removeEventListener('abort', abort);
    await verifier.dispose();
    built.close();
  }
  if (args.flag('json')) {
    await write(io.stdout, `${JSON.stringify(results, null, 2)}\n`);
  } else {
    const style = createStyle(colourWanted(io.stdoutIsTTY ?? false, io.env));
    await write(io.stdout, results.map((result) => renderResult(result, style)).join('\n'));
  }
  if (controller.signal.aborted) {
    await write(
      io.stderr,
      `mailvet: interrupted after ${results.length} of ${args.positionals.length} addresses\n`,
    );
    return EXIT.interrupted;
  }
  return results.every((result) => result.status === 'valid') ? EXIT.ok : EXIT.notValid;
}
