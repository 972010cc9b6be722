/**
 * Budgets that are honest (issue 32): an address whose budget ran out while it waited for a free session says it
 * was not tried; a budget shorter than the reply timeout still leaves time for the backup MX; a tarpit that never
 * greets is `mail_server_did_not_respond` whichever wait ran out first. Loopback servers: smtp-server harnesses on
 * 127.0.0.11-15 (one port), and raw servers on 127.0.0.21 (greets, then stalls), .22 (never greets), .23 (answers).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { VerifyOptions } from '../../src/options.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import type { ZoneEntry } from '../../src/testing/zone.js';
import { createVerifier } from '../../src/verifier.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const SLOW_HOSTS = ['127.0.0.11', '127.0.0.12', '127.0.0.13', '127.0.0.14', '127.0.0.15'];

const sockets = new Set<Socket>();
let slow: SmtpServerHarness[] = [];
let raw: Server[] = [];
let rawPort: number;

function listen(server: Server, host: string, on: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(on, host, () => resolve((server.address() as { port: number }).port));
  });
}

/**
 * A raw server that answers the first `RCPT TO` of each session and then stalls (`pipelining`: it advertises
 * PIPELINING, so the pool sends its `RCPT TO`s as groups).
 */
function stallsAfterOneRcpt(pipelining: boolean): Server {
  return createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.write('220 once.budget.test ESMTP\r\n');
    let buffer = '';
    let rcpts = 0;
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end).toUpperCase();
        buffer = buffer.slice(end + 2);
        if (line.startsWith('EHLO')) {
          socket.write(
            pipelining ? '250-once.budget.test\r\n250 PIPELINING\r\n' : '250 once.budget.test\r\n',
          );
        } else if (line.startsWith('RCPT')) {
          rcpts += 1;
          if (rcpts === 1) socket.write('250 2.1.5 ok\r\n');
        } else if (line.startsWith('QUIT')) socket.end('221 bye\r\n');
        else socket.write('250 2.0.0 ok\r\n');
      }
    });
  });
}

/** A raw server: `greet` says whether it sends `220`, `answer` whether it then answers every command. */
function rawServer(greet: boolean, answer: boolean): Server {
  return createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    if (greet) socket.write('220 raw.budget.test ESMTP\r\n');
    if (!answer) return;
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString();
      for (let end = buffer.indexOf('\r\n'); end !== -1; end = buffer.indexOf('\r\n')) {
        const line = buffer.slice(0, end).toUpperCase();
        buffer = buffer.slice(end + 2);
        if (line.startsWith('QUIT')) socket.end('221 bye\r\n');
        else socket.write('250 2.0.0 ok\r\n');
      }
    });
  });
}

beforeAll(async () => {
  const [firstHost, ...otherHosts] = SLOW_HOSTS;
  const first = await startSmtpServer({ host: firstHost!, delayMs: 150, mailboxes: { alice: 'ok' } });
  slow = [first];
  for (const host of otherHosts) {
    slow.push(await startSmtpServer({ host, port: first.port, delayMs: 150, mailboxes: { alice: 'ok' } }));
  }
  raw = [
    rawServer(true, false),
    rawServer(false, false),
    rawServer(true, true),
    stallsAfterOneRcpt(false),
    stallsAfterOneRcpt(true),
  ];
  rawPort = await listen(raw[0]!, '127.0.0.21', 0);
  await listen(raw[1]!, '127.0.0.22', rawPort);
  await listen(raw[2]!, '127.0.0.23', rawPort);
  await listen(raw[3]!, '127.0.0.24', rawPort);
  await listen(raw[4]!, '127.0.0.25', rawPort);
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await Promise.all(slow.map((server) => server.close()));
  await Promise.all(raw.map((server) => new Promise((resolve) => server.close(resolve))));
});

const loopback = {
  allowAddresses: ['127.0.0.0/8'],
  allowTlds: ['test'],
  heloHost: 'budget.mailvet-test.net',
  catchAll: false,
} satisfies VerifyOptions;

describe('waiting for a free session', () => {
  it('says an address was not tried when its budget ran out in the queue', async () => {
    const zone: Record<string, ZoneEntry> = {};
    SLOW_HOSTS.forEach((ip, index) => {
      zone[`d${index}.test`] = { mx: [{ priority: 10, exchange: `mx.d${index}.test` }] };
      zone[`mx.d${index}.test`] = { a: [ip] };
    });
    const verifier = createVerifier({
      ...loopback,
      resolver: staticResolver(zone),
      smtpPort: slow[0]!.port,
      concurrency: 1,
      perMxConcurrency: 1,
    });
    try {
      // One session at a time. The first address holds it for at least 750 ms (its server answers each of five
      // replies 150 ms late, however idle the machine); the others, queued behind it with a 400 ms budget, run
      // out of time before it is free, whatever the load: none of them is ever tried.
      const first = verifier.verify('alice@d0.test');
      const queued = SLOW_HOSTS.slice(1).map((_, index) =>
        verifier.verify(`alice@d${index + 1}.test`, { timeoutMs: 400 }),
      );
      expect(await first).toMatchObject({ status: 'valid' });
      const notTried =
        /^mx\.d\d\.test \[127\.0\.0\.1\d\]: not tried: waited \d+\.\d s for a free session \(concurrency limit\)/;
      for (const result of await Promise.all(queued)) {
        expect(result).toMatchObject({ status: 'unknown', sub_status: 'timeout_exceeded' });
        expect(result.reason).toMatch(notTried);
      }
    } finally {
      await verifier.dispose();
    }
  });
});

describe('a budget shorter than the reply timeout', () => {
  it('leaves time for the backup MX after a primary that greets and stalls', async () => {
    const verifier = createVerifier({
      ...loopback,
      resolver: staticResolver({
        'stall.test': {
          mx: [
            { priority: 10, exchange: 'mx1.stall.test' },
            { priority: 20, exchange: 'mx2.stall.test' },
          ],
        },
        'mx1.stall.test': { a: ['127.0.0.21'] },
        'mx2.stall.test': { a: ['127.0.0.23'] },
      }),
      smtpPort: rawPort,
      timeoutMs: 2000, // below the default 5 s reply timeout
    });
    try {
      const result = await verifier.verify('someone@stall.test');
      expect(result).toMatchObject({ status: 'valid', mx_record: 'mx2.stall.test' });
    } finally {
      await verifier.dispose();
    }
  });
});

describe('a session another verification opened', () => {
  it.each([
    ['one command at a time', '127.0.0.24'],
    ['in pipelined groups', '127.0.0.25'],
  ])(
    'waits for each reply no longer than the asking verification’s own replyTimeoutMs (%s)',
    async (_, ip) => {
      const verifier = createVerifier({
        ...loopback,
        resolver: staticResolver({
          'reuse.test': {
            mx: [
              { priority: 10, exchange: 'mx1.reuse.test' },
              { priority: 20, exchange: 'mx2.reuse.test' },
            ],
          },
          'mx1.reuse.test': { a: [ip] },
          'mx2.reuse.test': { a: ['127.0.0.23'] },
        }),
        smtpPort: rawPort,
        timeoutMs: 20_000,
        replyTimeoutMs: 10_000,
      });
      try {
        const first = await verifier.verify('first@reuse.test');
        expect(first).toMatchObject({ status: 'valid', mx_record: 'mx1.reuse.test' });
        // The open session (reply timeout 10 s) stalls at this RCPT TO: after 300 ms this verification gives up on
        // it and is answered on a fresh session, instead of waiting out its 3 s budget on the stalled one.
        const second = await verifier.verify('second@reuse.test', { replyTimeoutMs: 300, timeoutMs: 3000 });
        expect(second).toMatchObject({ status: 'valid', sub_status: null });
      } finally {
        await verifier.dispose();
      }
    },
  );
});

describe('a tarpit that never greets', () => {
  const tarpit = {
    ...loopback,
    resolver: staticResolver({
      'tarpit.test': { mx: [{ priority: 10, exchange: 'mx.tarpit.test' }] },
      'mx.tarpit.test': { a: ['127.0.0.22'] },
    }),
  } satisfies VerifyOptions;

  it.each([
    ['its greeting timeout ends first', { timeoutMs: 3000, connectTimeoutMs: 300 }],
    // Long enough to reach the connection on a loaded machine, shorter than the greeting timeout (30 s).
    ['the budget would end first', { timeoutMs: 2500, connectTimeoutMs: 30_000 }],
  ])('is mail_server_did_not_respond when %s', async (_, budget) => {
    const verifier = createVerifier({ ...tarpit, ...budget, smtpPort: rawPort });
    try {
      const result = await verifier.verify('someone@tarpit.test');
      expect(result).toMatchObject({ status: 'unknown', sub_status: 'mail_server_did_not_respond' });
      expect(result.reason).toBe('mx.tarpit.test [127.0.0.22]: the server sent no greeting in time');
    } finally {
      await verifier.dispose();
    }
  });
});
