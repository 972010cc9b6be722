/**
 * The worker fleet's flags, shared by `mailvet serve` (an API node) and `mailvet worker`.
 * @module
 */
import { redactUrl } from '../postgres/open-error.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { type Env, single } from './config.js';
import { CliError, EXIT, quote, usageError } from './io.js';

/** `--redis` and `--prefix`. */
export const FLEET_FLAGS: readonly FlagSpec[] = [
  {
    name: 'redis',
    type: 'string',
    value: '<redis://...>',
    description: 'the Redis of a worker fleet (BullMQ): jobs are verified by `mailvet worker` processes',
  },
  {
    name: 'prefix',
    type: 'string',
    value: '<name>',
    description:
      "with --redis: prefix of the fleet's Redis keys, the same on every process (default mailvet)",
  },
];

/** The fleet's Redis and key prefix, as the flags and environment say; `undefined` without `--redis`. */
export interface FleetChoice {
  readonly url: string;
  readonly prefix: string | undefined;
}

/** Reads `--redis` / MAILVET_REDIS and `--prefix` / MAILVET_PREFIX. */
export function fleetChoiceOf(args: ParsedArgs, env: Env): FleetChoice | undefined {
  const redis = single(args, env, 'redis', 'MAILVET_REDIS');
  const prefix = single(args, env, 'prefix', 'MAILVET_PREFIX');
  if (redis === undefined) {
    if (args.string('prefix') !== undefined) throw usageError('--prefix applies to --redis only');
    return undefined;
  }
  if (!/^rediss?:\/\/\S+$/.test(redis.value)) {
    throw usageError(`${redis.label} must be a redis:// or rediss:// URL, got ${quote(redis.value)}`);
  }
  if (prefix !== undefined && !/^[A-Za-z0-9_.-]{1,64}$/.test(prefix.value)) {
    throw usageError(
      `${prefix.label} must be 1-64 characters of A-Z a-z 0-9 _ - ., got ${quote(prefix.value)}`,
    );
  }
  return { url: redis.value, prefix: prefix?.value };
}

/** The fleet's Redis for messages (its password is not shown). */
export function fleetPlace(choice: FleetChoice): string {
  return `${redactUrl(choice.url)}${choice.prefix === undefined ? '' : ` (prefix ${choice.prefix})`}`;
}

/**
 * Stops with one line and exit 3 when the fleet's Redis cannot be used, before anything else is opened: which
 * Redis (password hidden) and what is wrong (nothing listens, a password is wanted or refused, not Redis).
 */
export async function checkFleetRedis(choice: FleetChoice): Promise<void> {
  const { checkRedis } = await import('../bullmq/index.js');
  try {
    await checkRedis({
      connection: choice.url,
      ...(choice.prefix === undefined ? {} : { prefix: choice.prefix }),
    });
  } catch (error) {
    throw new CliError(EXIT.io, error instanceof Error ? error.message : String(error), { cause: error });
  }
}
