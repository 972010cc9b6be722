/**
 * The flags of the logs and of shutdown that `serve` and `worker` share: `--log-level`, `--log-format`,
 * `--log-addresses` and `--shutdown-timeout`, read and checked once.
 * @module
 */
import type { FlagSpec, ParsedArgs } from './args.js';
import { integer, single, switched } from './config.js';
import { quote, usageError } from './io.js';

/** The levels `--log-level` takes (pino's), most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A level of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The formats `--log-format` takes: one JSON object per line, or pino-pretty's coloured text. */
export const LOG_FORMATS = ['json', 'pretty'] as const;

/** A format of {@link LOG_FORMATS}. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** How `serve` and `worker` log. */
export interface LogSettings {
  /** The least severe level written. @default 'info' */
  readonly level: LogLevel;
  /** `pretty` when standard output is a terminal, else `json`. */
  readonly format: LogFormat;
  /** Whether a log line may carry an email address (`--log-addresses`). @default false */
  readonly addresses: boolean;
}

/** The default `--shutdown-timeout`, in seconds. */
export const DEFAULT_SHUTDOWN_TIMEOUT_S = 10;
/** The longest `--shutdown-timeout`, in seconds. */
const MAX_SHUTDOWN_TIMEOUT_S = 3600;

/** The flags of the logs, for `serve` and `worker`. */
export const LOG_FLAGS: readonly FlagSpec[] = [
  {
    name: 'log-level',
    type: 'string',
    value: '<level>',
    description: `least severe log line written: ${LOG_LEVELS.join(', ')} (default info)`,
  },
  {
    name: 'log-format',
    type: 'string',
    value: '<json|pretty>',
    description: 'log lines as JSON, or as coloured text (default pretty on a terminal, json otherwise)',
  },
  {
    name: 'log-addresses',
    type: 'boolean',
    description: 'let log lines carry the email addresses verified (never, without it)',
  },
  {
    name: 'shutdown-timeout',
    type: 'string',
    value: '<s>',
    description: `on SIGTERM, how long requests and chunks in flight may take to finish (default ${DEFAULT_SHUTDOWN_TIMEOUT_S})`,
  },
];

type Env = Readonly<Record<string, string | undefined>>;

function oneOf<T extends string>(label: string, value: string, allowed: readonly T[]): T {
  const found = allowed.find((each) => each === value);
  if (found === undefined)
    throw usageError(`${label} must be one of ${allowed.join(', ')}, got ${quote(value)}`);
  return found;
}

/** The log settings of the flags, else of `MAILVET_LOG_LEVEL`, `MAILVET_LOG_FORMAT`, `MAILVET_LOG_ADDRESSES`. */
export function logSettingsOf(args: ParsedArgs, env: Env, stdoutIsTTY: boolean): LogSettings {
  const level = single(args, env, 'log-level', 'MAILVET_LOG_LEVEL');
  const format = single(args, env, 'log-format', 'MAILVET_LOG_FORMAT');
  return {
    level: level === undefined ? 'info' : oneOf(level.label, level.value, LOG_LEVELS),
    format:
      format === undefined
        ? stdoutIsTTY
          ? 'pretty'
          : 'json'
        : oneOf(format.label, format.value, LOG_FORMATS),
    addresses: switched(args, env, 'log-addresses', 'MAILVET_LOG_ADDRESSES'),
  };
}

/** `--shutdown-timeout` (else `MAILVET_SHUTDOWN_TIMEOUT`) in milliseconds: 0-3600 s, 10 s by default. */
export function shutdownTimeoutMsOf(args: ParsedArgs, env: Env): number {
  const source = single(args, env, 'shutdown-timeout', 'MAILVET_SHUTDOWN_TIMEOUT');
  return (
    (source === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_S : integer(source, 0, MAX_SHUTDOWN_TIMEOUT_S)) * 1000
  );
}
