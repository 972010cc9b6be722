import { afterEach, describe, expect, it } from 'vitest';
import { classifyError, classifyReply } from '../../src/classify/reply.js';
import { isSmtpError, type SmtpError } from '../../src/errors.js';
import { createSessionPool, type RcptOutcome } from '../../src/smtp/pool.js';
import { transportSessionFactory } from '../../src/smtp/prober.js';
import { openSmtpSession } from '../../src/smtp/session.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import type { SmtpReply } from '../../src/smtp/types.js';
import { happyReply, scriptedChannel } from '../../src/testing/scripted-channel.js';
import { type RawPeer, type RawServerHarness, startRawServer } from '../support/raw-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const harnesses: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function outcomes(promises: readonly Promise<SmtpReply>[]): Promise<(number | string)[]> {
  const settled = await Promise.allSettled(promises);
  return settled.map((result) =>
    result.status === 'fulfilled'
      ? result.value.code
      : isSmtpError(result.reason)
        ? result.reason.kind
        : 'other',
  );
}

describe('rcptToMany over a scripted channel', () => {
  it('writes MAIL FROM and every RCPT TO before reading any reply when PIPELINING is offered', async () => {
    const lines: string[] = [];
    const channel = scriptedChannel({
      respond: (line) => (line.includes('<x') ? '550 5.1.1 user unknown' : happyReply(line)),
    });
    const session = await openSmtpSession(channel, { heloHost: 'probe.test' });
    const replies = session.rcptToMany!(
      [{ recipient: 'a@example.com' }, { recipient: 'xb@example.com' }, { recipient: 'c@example.com' }],
      {
        mailFrom: {
          sender: 'verify@probe.test',
          onLine: (direction, line) => lines.push(`${direction} ${line}`),
        },
      },
    );
    expect((await replies.mail)?.code).toBe(250);
    expect(await outcomes(replies.rcpts)).toEqual([250, 550, 250]);
    expect(channel.written.slice(1)).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<a@example.com>',
      'RCPT TO:<xb@example.com>',
      'RCPT TO:<c@example.com>',
    ]);
    expect(lines).toEqual(['client MAIL FROM:<verify@probe.test>', 'server 250 2.0.0 ok']);
    expect(session.usable).toBe(true);
  });

  it('goes one command at a time without PIPELINING', async () => {
    const lines: string[] = [];
    const channel = scriptedChannel({
      respond: (line) => (line.startsWith('EHLO') ? ['250-mx.test', '250 SMTPUTF8'] : happyReply(line)),
    });
    const session = await openSmtpSession(channel, {
      heloHost: 'probe.test',
      onLine: (direction) => lines.push(direction),
    });
    lines.length = 0;
    const replies = session.rcptToMany!([{ recipient: 'a@example.com' }, { recipient: 'b@example.com' }]);
    expect(await outcomes(replies.rcpts)).toEqual([250, 250]);
    expect(lines).toEqual(['client', 'server', 'client', 'server']);
  });

  it('rejects an unsafe or SMTPUTF8 recipient alone, without sending it', async () => {
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, { heloHost: 'probe.test' });
    const replies = session.rcptToMany!(
      [
        { recipient: 'a@example.com' },
        { recipient: 'b@example.com>\r\nDATA' },
        { recipient: 'josé@example.com' },
      ],
      { mailFrom: { sender: 'verify@probe.test' } },
    );
    expect(await outcomes(replies.rcpts)).toEqual([250, 'unsafe_argument', 'smtputf8']);
    expect(channel.written.filter((line) => line.startsWith('RCPT'))).toEqual(['RCPT TO:<a@example.com>']);
    expect(session.usable).toBe(true);
  });

  it('fails the rest of the group with rejected on a 421, and closes the session', async () => {
    let rcpts = 0;
    const channel = scriptedChannel({
      respond: (line) => (line.startsWith('RCPT') && ++rcpts > 1 ? '421 4.7.0 closing' : happyReply(line)),
    });
    const session = await openSmtpSession(channel, { heloHost: 'probe.test' });
    const replies = session.rcptToMany!([
      { recipient: 'a@example.com' },
      { recipient: 'b@example.com' },
      { recipient: 'c@example.com' },
    ]);
    expect(await outcomes(replies.rcpts)).toEqual([250, 'rejected', 'rejected']);
    expect(session.usable).toBe(false);
  });
});

describe('rcptToMany ending its group with QUIT', () => {
  it('sends QUIT in the same write as the group, then takes no command and reads the 221 on quit()', async () => {
    let bufferedAtMail = -1;
    const raw = await startRawServer({
      async script(peer) {
        await peer.write('220 raw.test ESMTP\r\n');
        await peer.readLine();
        await peer.write('250-raw.test\r\n250 PIPELINING\r\n');
        await peer.readLine(); // MAIL FROM
        bufferedAtMail = peer.buffered();
        for (
          let line = await peer.readLine();
          line !== null && line !== 'QUIT';
          line = await peer.readLine()
        ) {}
        await peer.write('250 2.1.0 ok\r\n250 2.1.5 ok\r\n550 5.1.1 no\r\n250 2.1.5 ok\r\n221 2.0.0 bye\r\n');
        peer.end();
      },
    });
    harnesses.push(raw);
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' }, quit: true });
    expect(await outcomes(replies.rcpts)).toEqual([250, 550, 250]);
    expect(bufferedAtMail).toBe(4); // three RCPT TO and QUIT arrived with MAIL FROM
    expect(session.usable).toBe(false);
    await expect(session.rcptTo('d@example.com')).rejects.toMatchObject({ kind: 'disconnect' });
    await session.quit();
    await session.quit(); // idempotent
    expect(raw.received().filter((line) => line === 'QUIT')).toHaveLength(1);
    expect(raw.received().at(-1)).toBe('QUIT');
  });

  it('gives up on a 221 that never comes within quitTimeoutMs, and closes', async () => {
    const raw = await startRawServer({
      async script(peer) {
        await peer.write('220 raw.test ESMTP\r\n');
        await peer.readLine();
        await peer.write('250-raw.test\r\n250 PIPELINING\r\n');
        for (
          let line = await peer.readLine();
          line !== null && line !== 'QUIT';
          line = await peer.readLine()
        ) {}
        await peer.write('250 2.1.5 ok\r\n');
        while (!peer.gone) await peer.sleep(20); // no 221
      },
    });
    harnesses.push(raw);
    const channel = await tcpTransport().connect(
      { host: raw.host, port: raw.port },
      { timeoutMs: 2_000, maxLineLength: 2_048 },
    );
    const session = await openSmtpSession(channel, { heloHost: 'probe.test', quitTimeoutMs: 150 });
    const replies = session.rcptToMany!([{ recipient: 'a@example.com' }], { quit: true });
    expect(await outcomes(replies.rcpts)).toEqual([250]);
    const started = performance.now();
    await session.quit();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(channel.closed).toBe(true);
  });

  it('is ignored without PIPELINING: the commands go one at a time and quit() sends QUIT itself', async () => {
    const channel = scriptedChannel({
      respond: (line) => (line.startsWith('EHLO') ? ['250-mx.test', '250 8BITMIME'] : happyReply(line)),
    });
    const session = await openSmtpSession(channel, { heloHost: 'probe.test' });
    const replies = session.rcptToMany!([{ recipient: 'a@example.com' }], { quit: true });
    expect(await outcomes(replies.rcpts)).toEqual([250]);
    expect(session.usable).toBe(true);
    await session.quit();
    expect(channel.written.slice(1)).toEqual(['RCPT TO:<a@example.com>', 'QUIT']);
  });
});

/** A raw server that reads a whole group (greeting and EHLO first) before `answer` replies to it. */
async function rawGroupServer(
  groupSize: number,
  answer: (peer: RawPeer, group: string[]) => Promise<unknown>,
) {
  const raw: RawServerHarness = await startRawServer({
    async script(peer) {
      await peer.write('220 raw.test ESMTP\r\n');
      await peer.readLine();
      await peer.write('250-raw.test\r\n250 PIPELINING\r\n');
      const group: string[] = [];
      while (group.length < groupSize) {
        const line = await peer.readLine();
        if (line === null) return;
        group.push(line);
      }
      await answer(peer, group);
      while (!peer.gone) await peer.sleep(50);
    },
  });
  harnesses.push(raw);
  return raw;
}

async function openRaw(raw: RawServerHarness) {
  const channel = await tcpTransport().connect(
    { host: raw.host, port: raw.port },
    { timeoutMs: 2_000, maxLineLength: 2_048 },
  );
  return openSmtpSession(channel, { heloHost: 'probe.test', commandTimeoutMs: 300 });
}

const group = [
  { recipient: 'a@example.com' },
  { recipient: 'b@example.com' },
  { recipient: 'c@example.com' },
] as const;

describe('rcptToMany against hostile peers over TCP', () => {
  it('a server that only answers once the whole group is in: every address gets its reply', async () => {
    const raw = await rawGroupServer(4, (peer) =>
      peer.write('250 2.1.0 ok\r\n250 2.1.5 ok\r\n550 5.1.1 no such user\r\n250 2.1.5 ok\r\n'),
    );
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' } });
    expect(await outcomes(replies.rcpts)).toEqual([250, 550, 250]);
  });

  it('a drop mid-group: the answered address keeps its reply, the others end in forcible_disconnect', async () => {
    const raw = await rawGroupServer(4, async (peer) => {
      await peer.write('250 2.1.0 ok\r\n250 2.1.5 ok\r\n');
      peer.destroy();
    });
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' } });
    const settled = await Promise.allSettled(replies.rcpts);
    expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { code: 250 } });
    for (const result of settled.slice(1)) {
      expect(result.status).toBe('rejected');
      expect(classifyError((result as PromiseRejectedResult).reason as SmtpError)).toBe(
        'forcible_disconnect',
      );
    }
    expect(session.usable).toBe(false);
  });

  it('garbage mid-group: smtp_protocol_error for the addresses without a reply', async () => {
    const raw = await rawGroupServer(4, (peer) =>
      peer.write('250 2.1.0 ok\r\n250 2.1.5 ok\r\nHELLO?? ###\r\n'),
    );
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' } });
    const settled = await Promise.allSettled(replies.rcpts);
    expect(settled[0]).toMatchObject({ status: 'fulfilled', value: { code: 250 } });
    for (const result of settled.slice(1)) {
      expect(classifyError((result as PromiseRejectedResult).reason as SmtpError)).toBe(
        'smtp_protocol_error',
      );
    }
    expect(session.usable).toBe(false);
  });

  it('fewer replies than commands: the missing ones time out, the session is closed', async () => {
    const raw = await rawGroupServer(4, (peer) =>
      peer.write('250 2.1.0 ok\r\n250 2.1.5 ok\r\n550 5.1.1 no\r\n'),
    );
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' } });
    expect(await outcomes(replies.rcpts)).toEqual([250, 550, 'timeout']);
    expect(session.usable).toBe(false);
  });

  it('a refused MAIL FROM in the group still reads the RCPT replies, and the session stays in step', async () => {
    const raw = await rawGroupServer(4, async (peer) => {
      await peer.write(
        '550 5.7.1 sender blocked\r\n503 5.5.1 need MAIL\r\n503 5.5.1 need MAIL\r\n503 5.5.1 need MAIL\r\n',
      );
      const line = await peer.readLine();
      await peer.write(line === 'RSET' ? '250 2.0.0 ok\r\n' : '500 out of step\r\n');
    });
    const session = await openRaw(raw);
    const replies = session.rcptToMany!(group, { mailFrom: { sender: 'verify@probe.test' } });
    expect((await replies.mail)?.code).toBe(550);
    expect(await outcomes(replies.rcpts)).toEqual([503, 503, 503]);
    expect((await session.reset()).code).toBe(250);
  });
});

describe('pipelined pool against the real smtp-server', () => {
  it('sends groups, and every address of a mixed group gets its own verdict', async () => {
    const smtp: SmtpServerHarness = await startSmtpServer({
      mailboxes: {
        a1: 'ok',
        a2: 'missing',
        a3: 'ok',
        a4: 'disabled',
        a5: 'missing',
        a6: 'full',
        a7: 'ok',
        a8: 'missing',
      },
    });
    harnesses.push(smtp);
    const pool = createSessionPool({ open: transportSessionFactory(tcpTransport()), perMxConcurrency: 1 });
    const settings = { heloHost: 'probe.test', tls: 'never', connectTimeoutMs: 2_000 } as const;
    const names = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8'];
    const results = await Promise.all(
      names.map((name) =>
        pool.rcpt(
          { host: smtp.host, port: smtp.port, hostname: 'mx.test.local' },
          { sender: 'verify@probe.test', recipient: `${name}@example.com`, smtpUtf8: false, settings },
          { deadline: Date.now() + 10_000 },
        ),
      ),
    );
    const verdicts = results.map((outcome: RcptOutcome) =>
      outcome.kind === 'reply' && outcome.stage === 'rcpt'
        ? classifyReply(outcome.reply, 'rcpt')
        : outcome.kind,
    );
    expect(verdicts).toEqual([
      'accepted',
      'mailbox_not_found',
      'accepted',
      'mailbox_disabled',
      'mailbox_not_found',
      'mailbox_quota_exceeded',
      'accepted',
      'mailbox_not_found',
    ]);
    const stats = pool.stats();
    expect(stats.rcpts).toBe(8);
    expect(stats.groups).toBeLessThan(8); // at least one group carried several RCPT TO
    expect(smtp.connections()).toBe(1);
    expect(smtp.rcpts()).toHaveLength(8);
    await pool.close();
  });
});
