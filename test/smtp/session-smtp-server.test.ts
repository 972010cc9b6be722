import { afterEach, describe, expect, it } from 'vitest';
import { classifyError, classifyReply } from '../../src/classify/reply.js';
import { isSmtpError, type SmtpError } from '../../src/errors.js';
import { openSmtpSession, type SessionOptions } from '../../src/smtp/session.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import { type SmtpServerHarness, type SmtpServerOptions, startSmtpServer } from '../support/smtp-server.js';

const servers: SmtpServerHarness[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function server(options: SmtpServerOptions): Promise<SmtpServerHarness> {
  const started = await startSmtpServer(options);
  servers.push(started);
  return started;
}

async function open(smtp: SmtpServerHarness, options: Partial<SessionOptions> = {}) {
  const channel = await tcpTransport().connect(
    { host: smtp.host, port: smtp.port, hostname: 'mx.test.local' },
    { timeoutMs: 2_000, maxLineLength: 2_048 },
  );
  return openSmtpSession(channel, {
    heloHost: 'probe.test',
    commandTimeoutMs: 2_000,
    servername: 'mx.test.local',
    ...options,
  });
}

async function failure(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (error) {
    if (isSmtpError(error)) return error;
    throw error;
  }
  throw new Error('expected an SmtpError');
}

describe('SMTP session against smtp-server', () => {
  it('ends a command with aborted when the signal its socket channel watches fires mid-reply', async () => {
    const smtp = await server({ mailboxes: { alice: 'ok' }, delayMs: 200 });
    const controller = new AbortController();
    const channel = await tcpTransport().connect(
      { host: smtp.host, port: smtp.port, hostname: 'mx.test.local' },
      { timeoutMs: 2_000, maxLineLength: 2_048, signal: controller.signal },
    );
    expect(channel.signal).toBe(controller.signal); // the session leaves the abort to the channel
    const session = await openSmtpSession(channel, {
      heloHost: 'probe.test',
      commandTimeoutMs: 5_000,
      signal: controller.signal,
    });
    const pending = failure(session.mailFrom('verify@probe.test'));
    setTimeout(() => controller.abort(), 50); // the reply is 200 ms away
    const error = await pending;
    expect(error.kind).toBe('aborted');
    expect(error.stage).toBe('mail');
    expect(session.usable).toBe(false);
    expect(channel.closed).toBe(true);
  });

  it('tells existing, missing, disabled and full mailboxes apart in one session', async () => {
    const smtp = await server({ mailboxes: { alice: 'ok', bob: 'disabled', 'carol@example.com': 'full' } });
    const session = await open(smtp);
    expect((await session.mailFrom('verify@probe.test')).code).toBe(250);
    const outcomes: Record<string, string> = {};
    for (const address of ['alice@example.com', 'bob@example.com', 'carol@example.com', 'dave@example.com']) {
      outcomes[address] = classifyReply(await session.rcptTo(address), 'rcpt');
    }
    expect(outcomes).toEqual({
      'alice@example.com': 'accepted',
      'bob@example.com': 'mailbox_disabled',
      'carol@example.com': 'mailbox_quota_exceeded',
      'dave@example.com': 'mailbox_not_found',
    });
    expect((await session.reset()).code).toBe(250);
    expect(session.usable).toBe(true);
    await session.quit();
    expect(smtp.connections()).toBe(1);
    expect(smtp.rcpts()).toHaveLength(4);
  });

  it('reuses one session for many envelopes with RSET between them', async () => {
    const smtp = await server({ catchAll: true });
    const session = await open(smtp);
    for (let i = 0; i < 5; i += 1) {
      await session.mailFrom('verify@probe.test');
      expect((await session.rcptTo(`user${i}@example.com`)).code).toBe(250);
      await session.reset();
    }
    await session.quit();
    expect(smtp.connections()).toBe(1);
    expect(smtp.rcpts()).toEqual([
      'user0@example.com',
      'user1@example.com',
      'user2@example.com',
      'user3@example.com',
      'user4@example.com',
    ]);
  });

  it('sees greylisting, then acceptance on a later attempt', async () => {
    const smtp = await server({ mailboxes: { alice: 'ok' }, greylist: true });
    const session = await open(smtp);
    await session.mailFrom('verify@probe.test');
    expect(classifyReply(await session.rcptTo('alice@example.com'), 'rcpt')).toBe('greylisted');
    expect(classifyReply(await session.rcptTo('alice@example.com'), 'rcpt')).toBe('accepted');
    await session.quit();
  });

  it('throws rejected on the 421 after too many recipients, and the next session works', async () => {
    const smtp = await server({ catchAll: true, closeAfterRcpts: 2 });
    const session = await open(smtp);
    await session.mailFrom('verify@probe.test');
    await session.rcptTo('a@example.com');
    await session.rcptTo('b@example.com');
    const error = await failure(session.rcptTo('c@example.com'));
    expect(error.kind).toBe('rejected');
    expect(error.smtpReply?.code).toBe(421);
    expect(classifyError(error)).toBe('mail_server_temporary_error');
    expect(session.usable).toBe(false);
    const next = await open(smtp);
    await next.mailFrom('verify@probe.test');
    expect((await next.rcptTo('c@example.com')).code).toBe(250);
    await next.quit();
  });

  it.each([
    [{ code: 554, message: '5.7.1 Client host rejected: blocked using zen.spamhaus.org' }, 'antispam_system'],
    [{ code: 421, message: '4.3.2 Service shutting down' }, 'mail_server_temporary_error'],
  ])('classifies a refused greeting %j as %s', async (greeting, subStatus) => {
    const smtp = await server({ greeting });
    const error = await failure(open(smtp));
    expect(error.kind).toBe('rejected');
    expect(error.stage).toBe('greeting');
    expect(classifyError(error)).toBe(subStatus);
  });

  it('classifies a refused MAIL FROM as antispam_system, never invalid', async () => {
    const smtp = await server({
      mailFromReply: { code: 553, message: '5.1.8 Sender address rejected: Domain not found' },
    });
    const session = await open(smtp);
    expect(classifyReply(await session.mailFrom('verify@probe.test'), 'mail')).toBe('antispam_system');
    await session.quit();
  });

  it('upgrades with STARTTLS when opportunistic or required', async () => {
    const smtp = await server({ startTls: true, mailboxes: { alice: 'ok' } });
    for (const tls of ['opportunistic', 'required'] as const) {
      const session = await open(smtp, { tls });
      expect(session.capabilities.tls).toBe(true);
      expect(session.capabilities.extensions.has('STARTTLS')).toBe(false);
      await session.mailFrom('verify@probe.test');
      expect((await session.rcptTo('alice@example.com')).code).toBe(250);
      await session.quit();
    }
  });

  it('stays in plain text without STARTTLS unless it is required', async () => {
    const smtp = await server({ mailboxes: { alice: 'ok' } });
    const plain = await open(smtp, { tls: 'opportunistic' });
    expect(plain.capabilities.tls).toBe(false);
    await plain.quit();
    const error = await failure(open(smtp, { tls: 'required' }));
    expect(error.kind).toBe('tls');
    expect(classifyError(error)).toBe('failed_smtp_connection');
  });

  it('fails with tls when the certificate must be verified and is self-signed', async () => {
    const smtp = await server({ startTls: true });
    const channel = await tcpTransport({ verifyTls: true }).connect(
      { host: smtp.host, port: smtp.port },
      { timeoutMs: 2_000, maxLineLength: 2_048 },
    );
    const error = await failure(
      openSmtpSession(channel, { heloHost: 'probe.test', tls: 'required', servername: 'mx.test.local' }),
    );
    expect(error.kind).toBe('tls');
  });

  it('sends SMTPUTF8 recipients with the SMTPUTF8 parameter to a server that offers it', async () => {
    const smtp = await server({ mailboxes: { 'jörg@bücher.example': 'ok' } });
    const session = await open(smtp);
    expect(session.capabilities.extensions.has('SMTPUTF8')).toBe(true);
    await session.mailFrom('verify@probe.test', { smtpUtf8: true });
    expect((await session.rcptTo('jörg@bücher.example')).code).toBe(250);
    await session.quit();
    expect(smtp.senders()).toEqual([{ address: 'verify@probe.test', smtpUtf8: true }]);
    expect(smtp.rcpts()).toEqual(['jörg@bücher.example']);
  });

  it('never sends SMTPUTF8 recipients to a server without SMTPUTF8', async () => {
    const smtp = await server({ smtpUtf8: false, catchAll: true });
    const session = await open(smtp);
    expect(session.capabilities.extensions.has('SMTPUTF8')).toBe(false);
    await session.mailFrom('verify@probe.test', { smtpUtf8: true });
    const error = await failure(session.rcptTo('jörg@bücher.example'));
    expect(error.kind).toBe('smtputf8');
    expect(session.usable).toBe(true);
    expect((await session.rcptTo('joerg@example.com')).code).toBe(250);
    await session.quit();
    expect(smtp.senders()).toEqual([{ address: 'verify@probe.test', smtpUtf8: false }]);
    expect(smtp.rcpts()).toEqual(['joerg@example.com']);
  });

  it('binds several mail hosts on 127.0.0.x and counts connections and their peak', async () => {
    const first = await server({ host: '127.0.0.2', catchAll: true });
    const second = await server({ host: '127.0.0.3', catchAll: true });
    const sessions = await Promise.all([open(first), open(first), open(second)]);
    await expect.poll(() => first.activeConnections()).toBe(2);
    await Promise.all(sessions.map((session) => session.quit()));
    await expect.poll(() => first.activeConnections()).toBe(0);
    expect(first.connections()).toBe(2);
    expect(first.peakConnections()).toBe(2);
    expect(second.connections()).toBe(1);
  });

  it('delays every reply through the relay and still talks SMTP', async () => {
    const smtp = await server({ delayMs: 5, mailboxes: { alice: 'ok' } });
    const session = await open(smtp);
    await session.mailFrom('verify@probe.test');
    expect((await session.rcptTo('alice@example.com')).code).toBe(250);
    expect((await session.rcptTo('bob@example.com')).code).toBe(550);
    await session.quit();
    expect(smtp.connections()).toBe(1);
  });
});
