/**
 * The built `mailvet bulk` against a loopback SMTP server that answers 451 (greylisting): Ctrl-C (SIGINT) while the
 * row waits for its retry an hour away finishes now, and the run ends at once with exit 0; a second SIGINT then would
 * stop it.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { startDnsServer } from '../support/dns-server.js';
import { start } from '../support/mailvet-bin.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { outputMatch } from '../support/wait-for.js';
import { parseCsv, tempDir } from './support.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  dir = await tempDir('mailvet-finish-spawn-');
});
afterAll(async () => {
  await dir.remove();
});

describe('mailvet bulk: finish now (spawned)', () => {
  it('the first SIGINT while a greylisted row waits writes it as greylisted with no retry and exits 0', async () => {
    const dns = await startDnsServer({
      'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
      'mx.grey.test': { a: ['127.0.0.2'] },
    });
    const smtp = await startSmtpServer({
      host: '127.0.0.2',
      greylistClientMs: 3_600_000,
      mailboxes: { alice: 'ok' },
    });
    try {
      const list = dir.file('grey.txt');
      await writeFile(list, 'alice@grey.test\nnot-an-address\n');
      const out = dir.file('grey.csv');
      const flags = [
        '--dns',
        dns.address,
        '--smtp-port',
        String(smtp.port),
        '--allow-address',
        '127.0.0.0/8',
      ];
      const started = Date.now();
      const bulk = start([
        'bulk',
        list,
        '-o',
        out,
        ...flags,
        '--allow-tld',
        'test',
        '--helo',
        'spawn.mailvet-test.net',
        '--greylist-delays',
        '3600,3600',
      ]);
      await outputMatch(
        bulk.child,
        /a row waits for a greylisting retry at \d\d:\d\d; Ctrl-C \(SIGINT\) finishes now/,
        {
          what: 'the hint that a row waits',
          timeoutMs: 30_000,
        },
      );
      bulk.child.kill('SIGINT');
      const exit = await bulk.exited;
      expect(exit.code, exit.stderr).toBe(EXIT.ok);
      expect(Date.now() - started).toBeLessThan(60_000);
      expect(exit.stderr).toContain('mailvet: finishing now:');
      expect(exit.stderr).toContain('2 rows verified in');
      const rows = parseCsv(await readFile(out, 'utf8'));
      const header = rows[0]!;
      expect(
        rows
          .slice(1)
          .map((row) => [row[0], row[header.indexOf('status')], row[header.indexOf('sub_status')]]),
      ).toEqual([
        ['alice@grey.test', 'unknown', 'greylisted'],
        ['not-an-address', 'invalid', 'failed_syntax_check'],
      ]);
      expect(rows[1]![header.indexOf('reason')]).toMatch(
        /^mx\.grey\.test \[127\.0\.0\.2\] answered RCPT TO .*; not retried: the job was finished before the retry due at \d\d:\d\d UTC$/,
      );
      // The address was asked once: no retry was made.
      expect(smtp.rcptClients().map((seen) => seen.recipient)).toEqual(['alice@grey.test']);
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  }, 90_000);
});
