import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { runCli } from './support.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

function oneLine(text: string): void {
  expect(text.endsWith('\n')).toBe(true);
  expect(text.trimEnd()).not.toContain('\n');
  expect(text).not.toMatch(/\bat .*:\d+:\d+/); // no stack frame
}

describe('mailvet', () => {
  it('prints the help with --help, -h and help, and on stderr with exit 2 when no command is given', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const run = await runCli([flag]);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stdout).toContain('Usage: mailvet <command> [flags]');
      expect(run.stdout).toMatch(/verify <email\.\.\.>[\s\S]*bulk <file\|->[\s\S]*serve/);
    }
    const bare = await runCli([]);
    expect(bare.code).toBe(EXIT.usage);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toContain('Usage: mailvet');
  });

  it('prints the version of package.json', async () => {
    for (const flag of ['--version', '-v']) {
      const run = await runCli([flag]);
      expect(run).toEqual({ code: EXIT.ok, stdout: `mailvet ${VERSION}\n`, stderr: '' });
    }
  });

  it('has a --help for every command, listing every shared flag', async () => {
    for (const command of ['verify', 'bulk', 'serve']) {
      const run = await runCli([command, '--help']);
      expect(run.code).toBe(EXIT.ok);
      expect(run.stdout).toContain(`Usage: mailvet ${command}`);
      for (const flag of [
        '--timeout',
        '--dns',
        '--smtp-port',
        '--helo',
        '--from',
        '--proxy',
        '--allow-address',
        '--allow-tld',
        '--no-smtp',
        '--no-dns',
        '--concurrency',
        '--trace',
      ]) {
        expect(run.stdout).toContain(flag);
      }
    }
    expect((await runCli(['bulk', '-h'])).stdout).toMatch(
      /-o, --output <file>[\s\S]*--format[\s\S]*--column[\s\S]*--resume/,
    );
    expect((await runCli(['serve', '--help'])).stdout).toMatch(/--port[\s\S]*--host[\s\S]*MAILVET_API_KEYS/);
  });

  it('rejects an unknown command or top-level flag in one line with exit 2', async () => {
    const run = await runCli(['verfy', 'a@b.test']);
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toBe(
      'mailvet: unknown command "verfy"; commands: verify, bulk, serve, doctor, worker, keys (see mailvet --help)\n',
    );
    const flag = await runCli(['--frobnicate']);
    expect(flag.code).toBe(EXIT.usage);
    expect(flag.stderr).toContain('unknown flag "--frobnicate"');
    oneLine(flag.stderr);
  });

  it('rejects unknown flags of each command in one line with exit 2', async () => {
    for (const command of ['verify', 'bulk', 'serve']) {
      const run = await runCli([command, '--no-smpt', 'x']);
      expect(run.code).toBe(EXIT.usage);
      expect(run.stderr).toBe(
        `mailvet: unknown flag "--no-smpt" for "mailvet ${command}" (did you mean --no-smtp?); see mailvet ${command} --help\n`,
      );
      expect(run.stdout).toBe('');
    }
  });

  it('rejects bad flag values and bad MAILVET_* values in one line with exit 2, naming them', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [['verify', '--timeout', 'soon', 'a@b.test'], {}, /^mailvet: --timeout must be a number of seconds/],
      [['verify', 'a@b.test'], { MAILVET_TIMEOUT: '0' }, /^mailvet: MAILVET_TIMEOUT must be/],
      [['bulk', '--concurrency', '-3', '-'], {}, /^mailvet: --concurrency must be an integer 1-10000/],
      [['verify', '--dns', 'resolver.example', 'a@b.test'], {}, /^mailvet: --dns must be an IP address/],
      [
        ['verify', '--from', 'has space@x.test', 'a@b.test'],
        {},
        /^mailvet: --from must not contain white space, < or >/,
      ],
      [['verify', '--helo', 'x'.repeat(300), 'a@b.test'], {}, /^mailvet: --helo must be/],
      [['verify', '--proxy', 'ftp://127.0.0.1', 'a@b.test'], {}, /^mailvet: --proxy must use socks5:/],
      [
        ['serve', '--port', '99999'],
        { MAILVET_API_KEYS: 'k1' },
        /^mailvet: --port must be an integer 0-65535/,
      ],
      [['bulk', '--format', 'xlsx', '-'], {}, /^mailvet: --format must be csv, json or ndjson/],
    ];
    for (const [argv, env, pattern] of cases) {
      const run = await runCli(argv, { env });
      expect(run.code, argv.join(' ')).toBe(EXIT.usage);
      expect(run.stderr).toMatch(pattern);
      oneLine(run.stderr);
    }
  });

  it('reports an unexpected error in one line with exit 4, and its stack only with MAILVET_DEBUG=1', async () => {
    const failing = () => {
      throw new TypeError('kaboom');
    };
    const run = await runCli(['verify', 'a@b.test'], { createVerifier: failing });
    expect(run.code).toBe(EXIT.internal);
    expect(run.stderr).toBe('mailvet: unexpected error: kaboom (set MAILVET_DEBUG=1 for details)\n');
    const debug = await runCli(['verify', 'a@b.test'], {
      createVerifier: failing,
      env: { MAILVET_DEBUG: '1' },
    });
    expect(debug.stderr).toContain('TypeError: kaboom\n    at ');
  });
});
