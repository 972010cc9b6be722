/**
 * The built `mailvet bulk` on a real pseudo-terminal (util-linux `script`), so the progress line is fitted to the
 * width the terminal reports through `process.stderr.columns`, as a user's terminal does.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockTime } from '../../src/cli/progress-line.js';
import { plain } from '../../src/cli/style.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { startDnsServer } from '../support/dns-server.js';
import { BIN } from '../support/mailvet-bin.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { parseCsv, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  dir = await tempDir('mailvet-spawn-progress-');
});
afterAll(async () => {
  await dir.remove();
});

/** Runs `mailvet bulk <list> -o <out> ...flags` on a pseudo-terminal `columns` wide; returns what it showed. */
async function onTerminal(columns: number, list: string, out: string, flags = ['--no-dns']): Promise<string> {
  const quoted = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;
  const argv = [process.execPath, BIN, 'bulk', list, '-o', out, ...flags].map(quoted).join(' ');
  const command = `stty cols ${columns} rows 24; exec ${argv}`;
  const { stdout } = await promisify(execFile)('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH ?? '', TERM: 'xterm' },
  });
  return stdout;
}

/** The progress frames: cli-progress starts each at column 1 (ESC [1G) and clears the rest (ESC [0K). */
function frames(terminal: string): string[] {
  return terminal
    .split('\u001b[1G')
    .slice(1)
    .map((frame) => plain(frame.split('\u001b[0K')[0] ?? ''));
}

describe('mailvet bulk on a terminal (spawned)', () => {
  it.each([40, 60])(
    'fits every frame of the progress line to %i columns without cutting a count',
    async (columns) => {
      const list = dir.file(`list-${columns}.csv`);
      await writeFile(
        list,
        'email\nbad@@x\na@example.com\nx@mailinator.com\nno-at-sign\nb@example.com\ny@mailinator.com\n',
      );
      const shown = frames(await onTerminal(columns, list, dir.file(`out-${columns}.csv`)));
      expect(shown.length).toBeGreaterThan(0);
      for (const frame of shown) expect(frame.length).toBeLessThan(columns);
      expect(shown.at(-1)).toMatch(/^6\/6 .*\| inv 2 unk 2 dnm 2$/);
    },
  );

  it("says while a greylisted address waits for its retry, then writes the retry's answer", async () => {
    const dns = await startDnsServer({
      'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
      'mx.grey.test': { a: ['127.0.0.2'] },
    });
    const smtp = await startSmtpServer({ host: '127.0.0.2', greylist: true, mailboxes: { alice: 'ok' } });
    try {
      const list = dir.file('grey.txt');
      await writeFile(list, 'alice@grey.test\n');
      const out = dir.file('grey.csv');
      const before = Date.now();
      const network = [
        '--dns',
        dns.address,
        '--smtp-port',
        String(smtp.port),
        '--allow-address',
        '127.0.0.0/8',
      ];
      const flags = [...network, '--allow-tld', 'test', '--helo', 'spawn.mailvet-test.net'];
      const shown = frames(await onTerminal(100, list, out, [...flags, '--greylist-delays', '1']));
      const times = new Set([clockTime(before + 1000), clockTime(Date.now())]);
      const waiting = shown.filter((frame) => frame.includes('(greylisting)'));
      expect(waiting.length, shown.join('\n')).toBeGreaterThan(0);
      for (const frame of waiting) {
        expect(frame).toMatch(/^0\/1 .*ETA \d+ms \| .* \| 1 address retries at \d\d:\d\d \(greylisting\)$/);
        expect(times).toContain(/at (\d\d:\d\d)/.exec(frame)?.[1]);
      }
      const rows = parseCsv(await readFile(out, 'utf8'));
      expect(rows[1]?.[0]).toBe('alice@grey.test');
      expect(rows[1]?.[rows[0]?.indexOf('status') ?? -1]).toBe('valid');
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  });
});
