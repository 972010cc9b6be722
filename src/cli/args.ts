/**
 * A strict argument parser on `node:util` `parseArgs`: every flag is declared, unknown flags and malformed
 * values are usage errors with a "did you mean" hint.
 * @module
 */

import { parseArgs as parseTokens } from 'node:util';
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
 * Parses `argv` against the declared `specs` with `node:util` `parseArgs` (its tokens; the checks are ours).
 * `--` ends the flags; a lone `-` is a positional; short flags may be grouped (`-qo out.csv`).
 * Throws a usage error (exit code 2) naming the flag for an unknown flag, a missing or unexpected value,
 * or a non-repeatable flag given twice.
 * @example
 * const args = parseArgs(['--timeout', '5', 'a@example.com'], [{ name: 'timeout', type: 'string', description: '' }], 'mailvet verify');
 * args.string('timeout'); // '5'
 */
export function parseArgs(argv: readonly string[], specs: readonly FlagSpec[], command: string): ParsedArgs {
  const byName = new Map(specs.map((spec) => [spec.name, spec]));
  const { tokens } = parseTokens({
    args: [...argv],
    options: Object.fromEntries(
      specs.map((spec) => [
        spec.name,
        spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short },
      ]),
    ),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values = new Map<string, string[] | true>();
  const positionals: string[] = [];

  for (const token of tokens) {
    if (token.kind === 'positional') {
      positionals.push(token.value);
      continue;
    }
    if (token.kind === 'option-terminator') continue;
    const spec = byName.get(token.name);
    if (spec === undefined) throw unknownFlag(token.rawName, specs, command);
    const label = `--${spec.name}`;
    if (spec.type === 'boolean') {
      if (token.value !== undefined) throw usageError(`${label} takes no value`);
      values.set(spec.name, true);
      continue;
    }
    // A separate value that looks like a flag is a forgotten value; one dash (`-`, `-5`) is a value.
    const value = token.value;
    if (value === undefined || (token.inlineValue === false && value.startsWith('--')))
      throw usageError(`${label} needs a value ${spec.value ?? ''}`.trimEnd());
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
