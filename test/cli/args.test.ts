import { describe, expect, it } from 'vitest';
import { type FlagSpec, flagHelp, parseArgs } from '../../src/cli/args.js';
import { CliError, EXIT } from '../../src/cli/io.js';

const SPECS: FlagSpec[] = [
  { name: 'timeout', type: 'string', value: '<s>', description: 'budget' },
  { name: 'dns', type: 'string', multiple: true, description: 'server' },
  { name: 'no-smtp', type: 'boolean', description: 'skip smtp' },
  { name: 'output', short: 'o', type: 'string', description: 'out' },
];

function usage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(EXIT.usage);
    const message = (error as CliError).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a usage error');
}

describe('parseArgs', () => {
  it('reads string, repeatable, boolean and short flags in any order with positionals', () => {
    const args = parseArgs(
      [
        'a@example.com',
        '--timeout',
        '5',
        '--dns=1.1.1.1',
        '--no-smtp',
        '--dns',
        '8.8.8.8',
        '-o',
        'out.csv',
        'b@example.com',
      ],
      SPECS,
      'mailvet test',
    );
    expect(args.positionals).toEqual(['a@example.com', 'b@example.com']);
    expect(args.string('timeout')).toBe('5');
    expect(args.list('dns')).toEqual(['1.1.1.1', '8.8.8.8']);
    expect(args.flag('no-smtp')).toBe(true);
    expect(args.string('output')).toBe('out.csv');
    expect(args.string('dns')).toBe('1.1.1.1');
    expect(args.list('timeout')).toEqual(['5']);
    expect(args.flag('timeout')).toBe(false);
  });

  it('treats a lone - as a positional and everything after -- as positionals', () => {
    const args = parseArgs(['-', '--', '--not-a-flag', '-x'], SPECS, 'mailvet test');
    expect(args.positionals).toEqual(['-', '--not-a-flag', '-x']);
  });

  it('accepts values that start with one dash (checked later by the command)', () => {
    expect(parseArgs(['--timeout', '-5'], SPECS, 'mailvet test').string('timeout')).toBe('-5');
    expect(parseArgs(['-o', '-'], SPECS, 'mailvet test').string('output')).toBe('-');
  });

  it('rejects unknown flags with a one-line error that suggests the nearest flag', () => {
    expect(usage(() => parseArgs(['--timout', '5'], SPECS, 'mailvet test'))).toBe(
      'unknown flag "--timout" for "mailvet test" (did you mean --timeout?); see mailvet test --help',
    );
    // A swap of two letters is one edit (the typo engine's distance), so it is suggested too.
    expect(usage(() => parseArgs(['--tiemout', '5'], SPECS, 'mailvet test'))).toContain(
      'did you mean --timeout?',
    );
    expect(usage(() => parseArgs(['--zzzzzzzz'], SPECS, 'mailvet test'))).not.toContain('did you mean');
    expect(usage(() => parseArgs(['-x'], SPECS, 'mailvet test'))).toContain('"-x"');
  });

  it('bounds the echo of a hostile flag', () => {
    const message = usage(() => parseArgs([`--${'a'.repeat(10_000)}\n`], SPECS, 'mailvet test'));
    expect(message.length).toBeLessThan(200);
  });

  it('rejects a missing value, a value on a boolean flag, and a single flag given twice', () => {
    expect(usage(() => parseArgs(['--timeout'], SPECS, 'mailvet test'))).toBe('--timeout needs a value <s>');
    expect(usage(() => parseArgs(['--timeout', '--no-smtp'], SPECS, 'mailvet test'))).toContain(
      'needs a value',
    );
    expect(usage(() => parseArgs(['--no-smtp=yes'], SPECS, 'mailvet test'))).toBe('--no-smtp takes no value');
    expect(usage(() => parseArgs(['--timeout', '1', '--timeout=2'], SPECS, 'mailvet test'))).toBe(
      '--timeout was given more than once',
    );
  });

  it('reads a short flag with its value attached, and grouped short flags', () => {
    const specs: FlagSpec[] = [...SPECS, { name: 'quiet', short: 'q', type: 'boolean', description: 'q' }];
    expect(parseArgs(['-oout.csv'], specs, 'mailvet test').string('output')).toBe('out.csv');
    const grouped = parseArgs(['-qo', 'out.csv'], specs, 'mailvet test');
    expect(grouped.flag('quiet')).toBe(true);
    expect(grouped.string('output')).toBe('out.csv');
  });

  it('rejects unicode, control-character and look-alike flags with the same one-line error', () => {
    expect(usage(() => parseArgs(['--tіmeout', '5'], SPECS, 'mailvet test'))).toContain(
      'did you mean --timeout?',
    );
    expect(usage(() => parseArgs(['--💥'], SPECS, 'mailvet test'))).toContain('unknown flag "--💥"');
    expect(usage(() => parseArgs(['--time\u0000out'], SPECS, 'mailvet test'))).toContain('unknown flag');
    expect(usage(() => parseArgs(['---timeout', '5'], SPECS, 'mailvet test'))).toContain('unknown flag');
  });

  it('keeps an empty value given with =', () => {
    expect(parseArgs(['--timeout='], SPECS, 'mailvet test').string('timeout')).toBe('');
  });
});

describe('flagHelp', () => {
  it('lists every flag once, aligned, marking repeatable ones', () => {
    const help = flagHelp(SPECS);
    const lines = help.split('\n');
    expect(lines).toHaveLength(SPECS.length);
    expect(help).toContain('-o, --output <value>');
    expect(lines.find((line) => line.includes('--dns'))).toContain('(repeatable)');
    const columns = lines.map((line, index) => line.lastIndexOf(SPECS[index]!.description));
    expect(new Set(columns).size).toBe(1);
  });
});
