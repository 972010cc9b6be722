/**
 * A small strict argument parser: every flag is declared, unknown flags and malformed values are usage errors.
 * @module
 */

import { osaDistance } from '../typo/distance.js';
import { usageError } from './io.js';

/** One declared flag of a command. */
export interface FlagSpec {
  /** Long name without dashes: `timeout` for `--timeout`. */
  readonly name: string;
  /** `boolean` flags take no value; `string` flags take one (`--name value` or `--name=value`). */
  readonly type: 'boolean' | 'string';
  /** The flag may be given several times; its values are collected in order. @default false */
  readonly multiple?: boolean;
  /** One-letter alias: `o` for `-o`. */
  readonly short?: string;
  /** Placeholder of the value in help text, e.g. `<s>`. */
  readonly value?: string;
  /** One line for the help text. */
  readonly description: string;
}

/** The outcome of parsing: flag values by name and the positional arguments. */
export interface ParsedArgs {
  /** Arguments that are not flags, in order. `-` (standard input) is one. */
  readonly positionals: readonly string[];
  /** The value of a string flag, or `undefined` when it was not given. */
  string(name: string): string | undefined;
  /** The values of a repeatable flag, in order; empty when it was not given. */
  list(name: string): readonly string[];
  /** True when the boolean flag was given. */
  flag(name: string): boolean;
}

function unknownFlag(arg: string, specs: readonly FlagSpec[], command: string): Error {
  const name = arg.replace(/^-+/, '').split('=')[0] ?? '';
  let best: FlagSpec | undefined;
  let bestDistance = 3;
  for (const spec of name.length > 40 ? [] : specs) {
    const d = osaDistance(name, spec.name, bestDistance - 1);
    if (d < bestDistance) {
      best = spec;
      bestDistance = d;
    }
  }
  const shown = arg.split('=')[0]?.slice(0, 40) ?? '';
  const hint = best === undefined ? '' : ` (did you mean --${best.name}?)`;
  return usageError(`unknown flag ${JSON.stringify(shown)} for "${command}"${hint}; see ${command} --help`);
}

/**
 * Parses `argv` against the declared `specs`. `--` ends the flags; a lone `-` is a positional.
 * Throws a usage error (exit code 2) naming the flag for an unknown flag, a missing or unexpected value,
 * or a non-repeatable flag given twice.
 * @example
 * const args = parseArgs(['--timeout', '5', 'a@example.com'], [{ name: 'timeout', type: 'string', description: '' }], 'mailvet verify');
 * args.string('timeout'); // '5'
 */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], command: string): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const byShort = new Map(specs.flatMap((spec) => (spec.short === undefined ? [] : [[spec.short, spec]])));
  const values = new Map<string, string[] | true>();
  const positionals: string[] = [];

  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? '';
    if (arg === '--') {
      positionals.push(...argv.slice(index + 1));
      break;
    }
    if (arg === '-' || !arg.startsWith('-')) {
      positionals.push(arg);
      continue;
    }
    const long = arg.startsWith('--');
    const equals = arg.indexOf('=');
    const key = long ? arg.slice(2, equals === -1 ? undefined : equals) : arg.slice(1);
    const spec = long ? byName.get(key) : byShort.get(key);
    if (spec === undefined) throw unknownFlag(arg, specs, command);
    const label = `--${spec.name}`;
    if (spec.type === 'boolean') {
      if (long && equals !== -1) throw usageError(`${label} takes no value`);
      values.set(spec.name, true);
      continue;
    }
    let value: string | undefined;
    if (long && equals !== -1) {
      value = arg.slice(equals + 1);
    } else {
      const next = argv[index + 1];
      if (next === undefined || next.startsWith('--'))
        throw usageError(`${label} needs a value ${spec.value ?? ''}`.trimEnd());
      value = next;
      index++;
    }
    const previous = values.get(spec.name);
    if (Array.isArray(previous)) {
      if (!spec.multiple) throw usageError(`${label} was given more than once`);
      previous.push(value);
    } else {
      values.set(spec.name, [value]);
    }
  }

  return {
    positionals,
    string(name) {
      const value = values.get(name);
      return Array.isArray(value) ? value[0] : undefined;
    },
    list(name) {
      const value = values.get(name);
      return Array.isArray(value) ? value : [];
    },
    flag(name) {
      return values.get(name) === true;
    },
  };
}

/** Formats the flag table of a help text: one flag a line, descriptions aligned. */
export function flagHelp(specs: readonly FlagSpec[]): string {
  const heads = specs.map((spec) => {
    const short = spec.short === undefined ? '    ' : `-${spec.short}, `;
    const value = spec.type === 'string' ? ` ${spec.value ?? '<value>'}` : '';
    return `  ${short}--${spec.name}${value}`;
  });
  const width = Math.max(...heads.map((head) => head.length)) + 2;
  return specs
    .map((spec, index) => {
      const repeat = spec.multiple ? ' (repeatable)' : '';
      return `${(heads[index] ?? '').padEnd(width)}${spec.description}${repeat}`;
    })
    .join('\n');
}
