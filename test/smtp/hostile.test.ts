import { afterEach, describe, expect, it } from 'vitest';
import { classifyError } from '../../src/classify/reply.js';
import { isSmtpError } from '../../src/errors.js';
import { openSmtpSession } from '../../src/smtp/session.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import { type RawScript, type RawServerHarness, scripts, startRawServer } from '../support/raw-server.js';

const servers: RawServerHarness[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

/** Runs a whole probe (connect, open, MAIL, RCPT, QUIT) against `script` within `budgetMs`; returns the sub_status. */
async function probe(
  script: RawScript,
  budgetMs = 400,
): Promise<{ subStatus: string; kind: string; raw: RawServerHarness }> {
  const raw = await startRawServer({ script });
  servers.push(raw);
  const deadline = Date.now() + budgetMs;
  try {
    const channel = await tcpTransport().connect(
      { host: raw.host, port: raw.port },
      { timeoutMs: budgetMs, maxLineLength: 2_048 },
    );
    const session = await openSmtpSession(channel, { heloHost: 'probe.test', deadline });
    await session.mailFrom('verify@probe.test', { deadline });
    const reply = await session.rcptTo('alice@example.com', { deadline });
    await session.quit({ deadline });
    return { subStatus: `reply ${reply.code}`, kind: 'none', raw };
  } catch (error) {
    return { subStatus: classifyError(error), kind: isSmtpError(error) ? error.kind : String(error), raw };
  }
}

describe('hostile SMTP peers', () => {
  it('a server that never greets: mail_server_did_not_respond', async () => {
    expect(await probe(scripts.noGreeting())).toMatchObject({
      kind: 'no_greeting',
      subStatus: 'mail_server_did_not_respond',
    });
  });

  it('a greeting dripped one byte at a time: mail_server_did_not_respond within the budget', async () => {
    const result = await probe(scripts.slowDrip(50), 300);
    expect(result).toMatchObject({ kind: 'no_greeting', subStatus: 'mail_server_did_not_respond' });
    expect(result.raw.bytesWritten()).toBeLessThan('220 mx.test.local ESMTP slowly\r\n'.length);
  });

  it('an endless multi-line reply: smtp_protocol_error after a bounded number of lines', async () => {
    expect(await probe(scripts.endlessMultiline())).toMatchObject({
      kind: 'protocol',
      subStatus: 'smtp_protocol_error',
    });
  });

  it('a 10 MB line: smtp_protocol_error, the connection dropped long before the line ends', async () => {
    const result = await probe(scripts.hugeLine(10 * 1024 * 1024), 5_000);
    expect(result).toMatchObject({ kind: 'protocol', subStatus: 'smtp_protocol_error' });
    await expect.poll(() => result.raw.received()).toEqual([]);
    expect(result.raw.bytesWritten()).toBeLessThan(10 * 1024 * 1024);
  });

  it('garbage bytes: smtp_protocol_error', async () => {
    expect(await probe(scripts.garbage())).toMatchObject({
      kind: 'protocol',
      subStatus: 'smtp_protocol_error',
    });
  });

  it('a disconnect in the middle of a multi-line reply: forcible_disconnect', async () => {
    const result = await probe(scripts.disconnectMidReply('RCPT'));
    expect(result).toMatchObject({ kind: 'disconnect', subStatus: 'forcible_disconnect' });
    expect(result.raw.received()).toEqual([
      'EHLO probe.test',
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<alice@example.com>',
    ]);
  });

  it('a hang-up before the greeting: failed_smtp_connection', async () => {
    expect(await probe(scripts.hangUp())).toMatchObject({
      kind: 'connection',
      subStatus: 'failed_smtp_connection',
    });
  });

  it('a 421 greeting: mail_server_temporary_error; a 554 greeting: antispam_system', async () => {
    expect(await probe(scripts.refuse('421 4.3.2 mx.test.local busy, closing'))).toMatchObject({
      kind: 'rejected',
      subStatus: 'mail_server_temporary_error',
    });
    expect(await probe(scripts.refuse('554 5.7.1 mx.test.local no SMTP service for you'))).toMatchObject({
      kind: 'rejected',
      subStatus: 'antispam_system',
    });
  });

  it('a server that goes silent after MAIL FROM: timeout_exceeded when the budget is spent', async () => {
    const result = await probe(scripts.dialogue({ MAIL: [] }), 300);
    expect(result).toMatchObject({ kind: 'timeout', subStatus: 'timeout_exceeded' });
  });

  it('a STARTTLS reply followed by injected plain text: smtp_protocol_error, not a TLS session', async () => {
    const raw = await startRawServer({
      script: scripts.dialogue({
        EHLO: ['250-mx.test.local', '250 STARTTLS'],
        STARTTLS: ['220 go ahead', '250 injected before the handshake'],
      }),
    });
    servers.push(raw);
    const channel = await tcpTransport().connect(
      { host: raw.host, port: raw.port },
      { timeoutMs: 1_000, maxLineLength: 2_048 },
    );
    try {
      await openSmtpSession(channel, {
        heloHost: 'probe.test',
        tls: 'required',
        deadline: Date.now() + 1_000,
      });
      expect.unreachable();
    } catch (error) {
      expect(isSmtpError(error) && error.kind).toBe('protocol');
    }
  });

  it('a normal scripted dialogue still works (the harness is not always hostile)', async () => {
    expect(await probe(scripts.dialogue())).toMatchObject({ kind: 'none', subStatus: 'reply 250' });
  });
});
