/**
 * The built `mailvet` executable (dist/cli/bin.js, built when stale by ensureBuiltDist), run as a real process.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import type { VerificationResult } from '../../src/result.js';
import { createVerifier } from '../../src/verifier.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { startDnsServer } from '../support/dns-server.js';
import { BIN, run, start } from '../support/mailvet-bin.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { outputMatch, waitFor } from '../support/wait-for.js';
import { parseCsv, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
beforeAll(async () => {
  dir = await tempDir('mailvet-spawn-');
});
afterAll(async () => {
  await dir.remove();
});

/** The temporary file that `mailvet bulk -o <name>` writes in the test directory, or a path that is none. */
async function temporaryOf(name: string): Promise<string> {
  const found = (await readdir(dir.path)).find(
    (entry) => entry.startsWith(`.${name}.`) && entry.endsWith('.tmp'),
  );
  return dir.file(found ?? `.${name}.none`);
}

describe('mailvet (spawned)', () => {
  it('verify prints a summary and exits 1 for an address that is not valid', async () => {
    const result = await run(['verify', '--no-dns', 'someone@example.com']);
    expect(result.code).toBe(EXIT.notValid);
    expect(result.stdout).toMatch(
      /^someone@example\.com {2}unknown {2}score \d+\n {2}sub_status {2}smtp_not_checked\n/,
    );
    const json = await run(['verify', '--no-dns', '--json', 'a@example.com', 'bad@@x']);
    expect((JSON.parse(json.stdout) as VerificationResult[]).map((entry) => entry.status)).toEqual([
      'unknown',
      'invalid',
    ]);
  });

  it('prints one line and no stack trace for a user error', async () => {
    const result = await run(['verify', '--timeout', 'never', 'a@example.com']);
    expect(result).toEqual({
      code: EXIT.usage,
      stdout: '',
      stderr: 'mailvet: --timeout must be a number of seconds above 0 and at most 600, got "never"\n',
    });
    const missing = await run(['bulk', dir.file('nope.csv')]);
    expect(missing).toMatchObject({
      code: EXIT.io,
      stderr: `mailvet: cannot read ${dir.file('nope.csv')}: no such file\n`,
    });
  });

  it('refuses bulk - -o in.txt < in.txt: standard input redirected from the output file', async () => {
    const input = dir.file('stdin-self.txt');
    await writeFile(input, 'a@example.com\nb@example.com\n');
    const fd = openSync(input, 'r');
    try {
      const child = spawn(process.execPath, [BIN, 'bulk', '-', '-o', input, '--no-dns'], {
        env: { PATH: process.env.PATH ?? '' },
        stdio: [fd, 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(code).toBe(EXIT.usage);
      expect(stderr).toBe('mailvet: the output file must not be the input file\n');
    } finally {
      closeSync(fd);
    }
    expect(await readFile(input, 'utf8')).toBe('a@example.com\nb@example.com\n');
  });

  it('cat list.txt | bulk - -o list.txt reads the whole list, then writes the results over it', async () => {
    const list = dir.file('piped-self.txt');
    // Far more than cat reads and a pipe holds before mailvet opens its output (2.6 MB): written in place,
    // the output would cut the list short and feed mailvet its own rows.
    const emails = Array.from({ length: 100_000 }, (_, index) => `user${index}@example.com`);
    await writeFile(list, `${emails.join('\n')}\n`);
    const cat = spawn('cat', [list], { stdio: ['ignore', 'pipe', 'ignore'] });
    const child = spawn(process.execPath, [BIN, 'bulk', '-', '-o', list, '--no-dns'], {
      env: { PATH: process.env.PATH ?? '' },
      stdio: [cat.stdout, 'pipe', 'pipe'],
    });
    onTestFinished(() => {
      child.kill();
      cat.kill();
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(EXIT.ok);
    const rows = parseCsv(await readFile(list, 'utf8'));
    expect(rows).toHaveLength(emails.length + 1);
    expect(rows.slice(1).map((row) => row[0])).toEqual(emails);
    expect((await readdir(dir.path)).filter((name) => name.startsWith('.piped-self.txt.'))).toEqual([]);
  });

  it('prints nothing on standard error but its own lines when many addresses share one signal and one MX', async () => {
    const dns = await startDnsServer({
      'good.test': { mx: [{ priority: 10, exchange: 'mx.good.test' }] },
      'mx.good.test': { a: ['127.0.0.2'] },
    });
    const smtp = await startSmtpServer({ host: '127.0.0.2', catchAll: true, delayMs: 20 });
    try {
      const input = dir.file('shared-signal.txt');
      await writeFile(input, Array.from({ length: 60 }, (_, i) => `user${i}@good.test\n`).join(''));
      const network = [
        '--dns',
        dns.address,
        '--smtp-port',
        String(smtp.port),
        '--allow-address',
        '127.0.0.0/8',
      ];
      const result = await run([
        'bulk',
        input,
        '-o',
        dir.file('shared-signal.csv'),
        ...network,
        '--allow-tld',
        'test',
        '--helo',
        'spawn.mailvet-test.net',
        '--concurrency',
        '32',
      ]);
      expect(result.code, result.stderr).toBe(EXIT.ok);
      // Only mailvet's own progress and summary lines: no MaxListenersExceededWarning, no other warning.
      expect(result.stderr).not.toMatch(/Warning|\(node:\d+\)/);
      expect(result.stderr).toContain('60 rows verified in');
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  }, 60_000);

  it('bulk turns a CSV into a CSV with the result columns, row by row', async () => {
    const emails = ['jane@example.com', 'info@mailinator.com', 'x@', 'Bob@gmial.com', 'josé@exämple.com'];
    const input = dir.file('in.csv');
    await writeFile(
      input,
      `id;email;note\n${emails.map((email, index) => `${index};${email};"a;b"`).join('\n')}\n`,
    );
    const out = dir.file('out.csv');
    const result = await run(['bulk', input, '-o', out, '--no-dns']);
    expect(result.code).toBe(EXIT.ok);
    expect(result.stderr).toMatch(/total +5 +100\.0%\n5 rows verified in/);
    const rows = parseCsv(await readFile(out, 'utf8'));
    const header = rows[0]!;
    expect(header.slice(0, 4)).toEqual(['id', 'email', 'note', 'normalized']);
    const verifier = createVerifier({ dns: false, smtp: false });
    for (const [index, email] of emails.entries()) {
      const row = rows[index + 1]!;
      const expected = await verifier.verify(email);
      expect(row.slice(0, 3)).toEqual([String(index), email, 'a;b']);
      const cell = (name: keyof VerificationResult) => row[header.indexOf(name)];
      expect([
        cell('status'),
        cell('sub_status'),
        cell('score'),
        cell('did_you_mean'),
        cell('normalized'),
      ]).toEqual([
        expected.status,
        expected.sub_status ?? '',
        String(expected.score),
        expected.did_you_mean ?? '',
        expected.normalized ?? '',
      ]);
    }
    await verifier.dispose();
    expect(rows).toHaveLength(emails.length + 1);
  });

  it('bulk on Ctrl-C writes what is done, exits 130, and --resume finishes the same file', async () => {
    const lines = Array.from({ length: 3000 }, (_, index) => `user${index}@example.com`);
    const out = dir.file('interrupted.csv');
    const args = ['bulk', '-', '-o', out, '--no-dns'];
    const first = start(args);
    first.child.stdin.write(`${lines.slice(0, 2000).join('\n')}\n`); // stdin stays open: the run waits for more
    // The rows go to a temporary file beside the output, renamed over it when the run ends.
    await waitFor(
      async () =>
        ((await stat(await temporaryOf('interrupted.csv')).catch(() => undefined))?.size ?? 0) > 1000,
      {
        what: 'the first rows in the temporary output file',
      },
    );
    expect(await stat(out).catch(() => undefined)).toBeUndefined();
    first.child.kill('SIGINT');
    const interrupted = await first.exited;
    expect(interrupted.code).toBe(EXIT.interrupted);
    const done = Number(/interrupted; (\d+) rows are in/.exec(interrupted.stderr)?.[1]);
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThanOrEqual(2000);
    expect(interrupted.stderr).toContain(`Resume with:\n  mailvet bulk - -o ${out} --no-dns --resume\n`);
    expect(parseCsv(await readFile(out, 'utf8'))).toHaveLength(done + 1);

    const resumed = await run([...args, '--resume'], { stdin: `${lines.join('\n')}\n` });
    expect(resumed.code).toBe(EXIT.ok);
    expect(resumed.stderr).toContain(`${3000 - done} rows verified in`);
    const fresh = await run(['bulk', '-', '--no-dns'], { stdin: `${lines.join('\n')}\n` });
    expect(await readFile(out, 'utf8')).toBe(fresh.stdout);
  });

  it('serve listens, answers, and stops on SIGTERM', async () => {
    const server = start(['serve', '--port', '0', '--no-dns'], { env: { MAILVET_API_KEYS: 'spawned-key' } });
    const { match } = await outputMatch(server.child, /listening on (http:\/\/\S+)/, { what: 'the server' });
    const url = match[1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${url}/v1/verify?email=someone@example.com`, {
      headers: { authorization: 'Bearer spawned-key' },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as VerificationResult).sub_status).toBe('smtp_not_checked');
    server.child.kill('SIGTERM');
    const stopped = await server.exited;
    expect(stopped.code).toBe(EXIT.ok);
    expect(stopped.stdout).toMatch(/"msg":"mailvet API stopped"}\n$/);
  });
});
