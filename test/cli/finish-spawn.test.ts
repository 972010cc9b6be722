/**
 * Finish now with the built `mailvet` against a loopback SMTP server that answers 451 (greylisting) for the whole
 * test, with retries an hour away: Ctrl-C (SIGINT) in `mailvet bulk` while a row waits ends the run at once with
 * exit 0; `POST /v1/bulk/{id}/finish` on `mailvet serve --data DIR` completes the job at once, and a restart on the
 * same directory finds it complete (the ended retry is not brought back).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { startDnsServer } from '../support/dns-server.js';
import { serverCaller } from '../support/http-call.js';
import { BIN, start } from '../support/mailvet-bin.js';
import { startSmtpServer } from '../support/smtp-server.js';
import { outputMatch, waitFor } from '../support/wait-for.js';
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

  it('mailvet serve --data: POST /v1/bulk/{id}/finish completes the job at once; a restart keeps it complete', async () => {
    const KEY = 'finish-key';
    const api = serverCaller(KEY);
    const dns = await startDnsServer({
      'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
      'mx.grey.test': { a: ['127.0.0.5'] },
    });
    const smtp = await startSmtpServer({
      host: '127.0.0.5',
      greylistClientMs: 3_600_000,
      mailboxes: { carol: 'ok' },
    });
    const data = dir.file('data');
    const flags = [
      ...['--dns', dns.address, '--smtp-port', String(smtp.port), '--allow-address', '127.0.0.0/8'],
      ...['--allow-tld', 'test', '--helo', 'spawn.mailvet-test.net', '--greylist-delays', '3600,3600'],
    ];
    const serve = async (): Promise<{ child: ChildProcess; url: string }> => {
      const child = spawn(
        process.execPath,
        [BIN, 'serve', '--port', '0', '--no-console', '--data', data, ...flags],
        {
          env: { PATH: process.env.PATH ?? '', MAILVET_API_KEYS: KEY },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      const { match } = await outputMatch(child, /listening on (http:\/\/\S+)/, {
        what: 'mailvet serve',
        timeoutMs: 60_000,
      });
      return { child, url: match[1]! };
    };
    const stop = async (child: ChildProcess) => {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    };
    interface WireJob {
      id: string;
      status: string;
      completed: number;
      retries: { waiting: number; next_retry_at: string | null; delays_ms: number[] };
    }
    try {
      const first = await serve();
      let id = '';
      let finished: WireJob;
      try {
        const created = (await api(first.url, '/v1/bulk', {
          method: 'POST',
          body: JSON.stringify({ emails: ['carol@grey.test', 'not-an-address'] }),
        })) as WireJob;
        id = created.id;
        await waitFor(
          async () => ((await api(first.url, `/v1/bulk/${id}`)) as WireJob).retries.waiting === 1,
          {
            what: 'the greylisted address to wait',
            timeoutMs: 30_000,
          },
        );
        const before = Date.now();
        finished = (await api(first.url, `/v1/bulk/${id}/finish`, { method: 'POST' })) as WireJob;
        expect(Date.now() - before).toBeLessThan(5_000);
        expect(finished).toMatchObject({
          status: 'complete',
          completed: 2,
          retries: { waiting: 0, next_retry_at: null, delays_ms: [] },
        });
      } finally {
        await stop(first.child);
      }
      const second = await serve();
      try {
        expect(await api(second.url, `/v1/bulk/${id}`)).toEqual(finished);
        const { results } = (await api(second.url, `/v1/bulk/${id}/results`)) as {
          results: { email: string; sub_status: string | null; reason?: string }[];
        };
        expect(results[0]).toMatchObject({ email: 'carol@grey.test', sub_status: 'greylisted' });
        expect(results[0]!.reason).toMatch(
          /; not retried: the job was finished before the retry due at \d\d:\d\d UTC$/,
        );
        const again = await fetch(`${second.url}/v1/bulk/${id}/finish`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}` },
        });
        expect(again.status).toBe(200);
        const unknown = await fetch(`${second.url}/v1/bulk/no-such-job/finish`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}` },
        });
        expect(unknown.status).toBe(404);
      } finally {
        await stop(second.child);
      }
      expect(smtp.rcptClients().map((seen) => seen.recipient)).toEqual(['carol@grey.test']);
    } finally {
      await Promise.all([dns.close(), smtp.close()]);
    }
  }, 120_000);
});
