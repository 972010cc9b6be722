/**
 * Options errors of the engine turned into usage errors that name the flag or variable a user set. Kept apart
 * from config.ts, which builds the seams, so that `main` can turn any error into its line without loading them.
 * @module
 */
import { isMailvetError, OptionsError } from '../errors.js';
import { type CliError, usageError } from './io.js';

/** The flag each verifier option is set by, for error lines. */
const FLAG_OF: Readonly<Record<string, string>> = {
  heloHost: '--helo',
  mailFrom: '--from',
  smtpPort: '--smtp-port',
  timeoutMs: '--timeout',
  concurrency: '--concurrency',
  allowAddresses: '--allow-address',
  allowTlds: '--allow-tld',
  resolver: '--dns',
  transport: '--proxy',
  proxy: '--proxy',
  port: '--port',
  apiKeys: 'MAILVET_API_KEYS',
  ip: '--ip',
  probeDomain: '--probe-domain',
  blocklists: '--blocklist',
};

/**
 * Turns an options error of the verifier (or of a seam factory) into a usage error that names the flag.
 * Returns `undefined` for any other error.
 */
export function optionsUsageError(error: unknown): CliError | undefined {
  if (!isMailvetError(error) || error.code !== 'invalid_option') return undefined;
  const option = error instanceof OptionsError ? error.option : (error.message.split(' ')[0] ?? '');
  const flag = FLAG_OF[option.split(/[.[]/)[0] ?? ''];
  const rest = error.message.startsWith(option) ? error.message.slice(option.length).trim() : error.message;
  return usageError(`${flag ?? option} ${rest}`);
}
