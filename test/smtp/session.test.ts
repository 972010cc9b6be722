import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyError } from '../../src/classify/reply.js';
import { isSmtpError, type SmtpError } from '../../src/errors.js';
import { openSmtpSession, type SessionOptions } from '../../src/smtp/session.js';
import type { LineChannel } from '../../src/smtp/types.js';
import { happyReply, type SmtpScript, scriptedChannel } from '../../src/testing/scripted-channel.js';

const base: SessionOptions = { heloHost: 'probe.test' };

async function failure(promise: Promise<unknown>): Promise<SmtpError> {
  try {
    await promise;
  } catch (error) {
    if (isSmtpError(error)) return error;
    throw error;
  }
  throw new Error('expected an SmtpError');
}

const reply = (
  verb: string,
  answer: string | readonly string[] | null | undefined,
): NonNullable<SmtpScript['respond']> => {
  return (line) => (line.toUpperCase().startsWith(verb) ? answer : happyReply(line));
};

describe('openSmtpSession: opening', () => {
  it('reads the greeting, sends EHLO and records the extensions', async () => {
    const lines: string[] = [];
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, {
      ...base,
      onLine: (direction, line) => lines.push(`${direction} ${line}`),
    });
    expect(channel.written).toEqual(['EHLO probe.test']);
    expect(session.capabilities.esmtp).toBe(true);
    expect(session.capabilities.tls).toBe(false);
    expect([...session.capabilities.extensions]).toEqual(['PIPELINING', 'SMTPUTF8']);
    expect(session.capabilities.greeting.code).toBe(220);
    expect(session.usable).toBe(true);
    expect(lines).toEqual([
      'server 220 mx.test ESMTP',
      'client EHLO probe.test',
      'server 250-mx.test',
      'server 250-PIPELINING',
      'server 250 SMTPUTF8',
    ]);
  });

  it('falls back to HELO when EHLO is refused', async () => {
    const channel = scriptedChannel({ respond: reply('EHLO', '502 5.5.1 command not implemented') });
    const session = await openSmtpSession(channel, base);
    expect(channel.written).toEqual(['EHLO probe.test', 'HELO probe.test']);
    expect(session.capabilities.esmtp).toBe(false);
    expect(session.capabilities.extensions.size).toBe(0);
  });

  it('fails with rejected when EHLO and HELO are both refused', async () => {
    const channel = scriptedChannel({
      respond: (line) => (/^(EHLO|HELO)/.test(line) ? '550 5.7.1 go away' : happyReply(line)),
    });
    const error = await failure(openSmtpSession(channel, base));
    expect(error.kind).toBe('rejected');
    expect(error.stage).toBe('ehlo');
    expect(error.smtpReply?.code).toBe(550);
    expect(classifyError(error)).toBe('antispam_system');
    expect(channel.closed).toBe(true);
  });

  it.each([
    ['554 5.7.1 You are not welcome here', 'antispam_system'],
    ['554 mx.example.com', 'antispam_system'],
    ['421 4.3.2 Too busy, try later', 'mail_server_temporary_error'],
    ['521 5.3.2 mx.example.com does not accept mail', 'antispam_system'],
  ])('a greeting of %j is a rejection classified %s', async (greeting, subStatus) => {
    const channel = scriptedChannel({ greeting });
    const error = await failure(openSmtpSession(channel, base));
    expect(error.kind).toBe('rejected');
    expect(error.stage).toBe('greeting');
    expect(error.reply).toBe(greeting);
    expect(classifyError(error)).toBe(subStatus);
    expect(channel.written).toEqual([]);
    expect(channel.closed).toBe(true);
  });

  it('fails with no_greeting when the server says nothing', async () => {
    const error = await failure(openSmtpSession(scriptedChannel({ greeting: null }), base));
    expect(error.kind).toBe('no_greeting');
    expect(classifyError(error)).toBe('mail_server_did_not_respond');
  });

  it('fails with timeout, sending nothing, when the deadline is already spent', async () => {
    const channel = scriptedChannel();
    const error = await failure(openSmtpSession(channel, { ...base, deadline: 1_000, now: () => 1_000 }));
    expect(error.kind).toBe('no_greeting');
    expect(channel.written).toEqual([]);
  });

  it('fails with protocol on a garbage greeting', async () => {
    const error = await failure(
      openSmtpSession(scriptedChannel({ greeting: '\u0016\u0003\u0001garbage' }), base),
    );
    expect(error.kind).toBe('protocol');
    expect(classifyError(error)).toBe('smtp_protocol_error');
  });

  it('fails with unsafe_argument, sending nothing, for a HELO name with a line break', async () => {
    const channel = scriptedChannel();
    const error = await failure(openSmtpSession(channel, { heloHost: 'probe.test\r\nRCPT TO:<x@y>' }));
    expect(error.kind).toBe('unsafe_argument');
    expect(channel.written).toEqual([]);
    expect(channel.closed).toBe(true);
  });
});

describe('openSmtpSession: STARTTLS', () => {
  const offering = (respond?: SmtpScript['respond']): SmtpScript => ({
    tls: true,
    respond:
      respond ??
      ((line) =>
        line.startsWith('EHLO') ? ['250-mx.test', '250-STARTTLS', '250 SMTPUTF8'] : happyReply(line)),
  });

  it("never sends STARTTLS with tls 'never'", async () => {
    const channel = scriptedChannel(offering());
    const session = await openSmtpSession(channel, { ...base, tls: 'never' });
    expect(channel.written).toEqual(['EHLO probe.test']);
    expect(session.capabilities.tls).toBe(false);
  });

  it("upgrades and says EHLO again with tls 'opportunistic'", async () => {
    const channel = scriptedChannel(offering());
    const session = await openSmtpSession(channel, {
      ...base,
      tls: 'opportunistic',
      servername: 'mx.example.com',
    });
    expect(channel.written).toEqual(['EHLO probe.test', 'STARTTLS', 'EHLO probe.test']);
    expect(channel.upgraded).toBe(true);
    expect(session.capabilities.tls).toBe(true);
  });

  it("goes on in plain text with tls 'opportunistic' when STARTTLS is not offered or refused", async () => {
    const notOffered = await openSmtpSession(scriptedChannel({ tls: true }), {
      ...base,
      tls: 'opportunistic',
    });
    expect(notOffered.capabilities.tls).toBe(false);
    const refusing = scriptedChannel(
      offering((line) =>
        line === 'STARTTLS'
          ? '454 4.7.0 TLS not available'
          : line.startsWith('EHLO')
            ? ['250-mx', '250 STARTTLS']
            : happyReply(line),
      ),
    );
    const refused = await openSmtpSession(refusing, { ...base, tls: 'opportunistic' });
    expect(refused.capabilities.tls).toBe(false);
    expect(refused.usable).toBe(true);
  });

  it("fails with tls when tls is 'required' and STARTTLS is not offered, refused or impossible", async () => {
    const notOffered = await failure(
      openSmtpSession(scriptedChannel({ tls: true }), { ...base, tls: 'required' }),
    );
    expect(notOffered.kind).toBe('tls');
    const noUpgrade = scriptedChannel({ respond: offering().respond! });
    expect((await failure(openSmtpSession(noUpgrade, { ...base, tls: 'required' }))).kind).toBe('tls');
    const refused = await failure(
      openSmtpSession(
        scriptedChannel(
          offering((line) =>
            line === 'STARTTLS'
              ? '454 4.7.0 TLS not available'
              : line.startsWith('EHLO')
                ? ['250-mx', '250 STARTTLS']
                : happyReply(line),
          ),
        ),
        { ...base, tls: 'required' },
      ),
    );
    expect(refused.kind).toBe('tls');
    expect(refused.smtpReply?.code).toBe(454);
    expect(classifyError(refused)).toBe('failed_smtp_connection');
  });
});

describe('SmtpSession: envelopes', () => {
  it('sends MAIL FROM with SMTPUTF8 only when asked and offered', async () => {
    const offered = scriptedChannel();
    const session = await openSmtpSession(offered, base);
    await session.mailFrom('verify@probe.test', { smtpUtf8: true });
    await session.reset();
    await session.mailFrom('verify@probe.test');
    expect(offered.written.slice(1)).toEqual([
      'MAIL FROM:<verify@probe.test> SMTPUTF8',
      'RSET',
      'MAIL FROM:<verify@probe.test>',
    ]);

    const plain = scriptedChannel({ respond: reply('EHLO', ['250-mx', '250 PIPELINING']) });
    const older = await openSmtpSession(plain, base);
    await older.mailFrom('verify@probe.test', { smtpUtf8: true });
    expect(plain.written.at(-1)).toBe('MAIL FROM:<verify@probe.test>');
  });

  it('sends an SMTPUTF8 recipient only in an SMTPUTF8 envelope on a server that offers it', async () => {
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, base);
    await session.mailFrom('verify@probe.test');
    const error = await failure(session.rcptTo('jörg@example.com'));
    expect(error.kind).toBe('smtputf8');
    expect(error.message).toMatch(/smtpUtf8: true/);
    expect(session.usable).toBe(true);
    expect(channel.written.at(-1)).toBe('MAIL FROM:<verify@probe.test>');
    await session.reset();
    await session.mailFrom('verify@probe.test', { smtpUtf8: true });
    expect((await session.rcptTo('jörg@example.com')).code).toBe(250);
    expect(channel.written.at(-1)).toBe('RCPT TO:<jörg@example.com>');
  });

  it('refuses SMTPUTF8 recipients and senders on a server without SMTPUTF8, sending nothing', async () => {
    const channel = scriptedChannel({ respond: reply('EHLO', ['250-mx', '250 8BITMIME']) });
    const session = await openSmtpSession(channel, base);
    const sender = await failure(session.mailFrom('vérify@probe.test', { smtpUtf8: true }));
    expect(sender.kind).toBe('smtputf8');
    await session.mailFrom('verify@probe.test', { smtpUtf8: true });
    const recipient = await failure(session.rcptTo('用户@例子.广告'));
    expect(recipient.kind).toBe('smtputf8');
    expect(recipient.message).toMatch(/does not offer/);
    expect(classifyError(recipient)).toBe('smtp_not_checked');
    expect(channel.written).toEqual(['EHLO probe.test', 'MAIL FROM:<verify@probe.test>']);
    expect(session.usable).toBe(true);
  });

  it('returns refusals as values', async () => {
    const session = await openSmtpSession(
      scriptedChannel({ respond: reply('RCPT', '550 5.1.1 user unknown') }),
      base,
    );
    await session.mailFrom('verify@probe.test');
    expect(await session.rcptTo('nobody@example.com')).toMatchObject({ code: 550, enhanced: '5.1.1' });
    expect(session.usable).toBe(true);
  });

  it('throws rejected on a 421 and becomes unusable', async () => {
    const channel = scriptedChannel({ respond: reply('RCPT', '421 4.7.0 too many connections') });
    const session = await openSmtpSession(channel, base);
    await session.mailFrom('verify@probe.test');
    const error = await failure(session.rcptTo('a@example.com'));
    expect(error.kind).toBe('rejected');
    expect(error.stage).toBe('rcpt');
    expect(error.command).toBe('RCPT TO:<a@example.com>');
    expect(error.smtpReply?.code).toBe(421);
    expect(session.usable).toBe(false);
    expect(channel.closed).toBe(true);
    expect((await failure(session.rcptTo('b@example.com'))).kind).toBe('disconnect');
  });

  it('becomes unusable when RSET is refused', async () => {
    const session = await openSmtpSession(scriptedChannel({ respond: reply('RSET', '502 5.5.1 no') }), base);
    expect((await session.reset()).code).toBe(502);
    expect(session.usable).toBe(false);
  });

  it('refuses an unsafe recipient without writing and stays usable', async () => {
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, base);
    await session.mailFrom('verify@probe.test');
    expect((await failure(session.rcptTo('a@b.example>\r\nDATA'))).kind).toBe('unsafe_argument');
    expect(channel.written).toHaveLength(2);
    expect(session.usable).toBe(true);
  });

  it('runs overlapping commands one after another', async () => {
    const channel = scriptedChannel({
      respond: (line) => (line.startsWith('RCPT') ? `250 ok ${line.slice(9, -1)}` : happyReply(line)),
    });
    const session = await openSmtpSession(channel, base);
    const [, first, second] = await Promise.all([
      session.mailFrom('verify@probe.test'),
      session.rcptTo('one@example.com'),
      session.rcptTo('two@example.com'),
    ]);
    expect(first.text).toBe('ok one@example.com');
    expect(second.text).toBe('ok two@example.com');
  });

  it('gives each command its own transcript hook', async () => {
    const session = await openSmtpSession(scriptedChannel(), base);
    const lines: string[] = [];
    await session.mailFrom('verify@probe.test', {
      onLine: (direction, line) => lines.push(`${direction} ${line}`),
    });
    expect(lines).toEqual(['client MAIL FROM:<verify@probe.test>', 'server 250 2.0.0 ok']);
  });
});

describe('SmtpSession: failures', () => {
  it('fails with timeout when a reply does not come, and closes', async () => {
    const channel = scriptedChannel({ respond: reply('RCPT', undefined) });
    const session = await openSmtpSession(channel, base);
    await session.mailFrom('verify@probe.test');
    const error = await failure(session.rcptTo('slow@example.com'));
    expect(error.kind).toBe('timeout');
    expect(classifyError(error)).toBe('timeout_exceeded');
    expect(session.usable).toBe(false);
  });

  it('fails with timeout before writing when the command deadline is spent', async () => {
    let clock = 0;
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, { ...base, now: () => clock });
    clock = 5_000;
    expect((await failure(session.mailFrom('verify@probe.test', { deadline: 5_000 }))).kind).toBe('timeout');
  });

  it('passes the smaller of the command timeout and the deadline to the channel', async () => {
    const waits: number[] = [];
    const inner = scriptedChannel();
    const channel: LineChannel = {
      readLine: (timeoutMs) => {
        waits.push(timeoutMs);
        return inner.readLine(timeoutMs);
      },
      writeLine: (line) => inner.writeLine(line),
      close: () => inner.close(),
      get closed() {
        return inner.closed;
      },
    };
    const session = await openSmtpSession(channel, {
      ...base,
      now: () => 100,
      greetingTimeoutMs: 700,
      commandTimeoutMs: 300,
    });
    await session.mailFrom('verify@probe.test', { deadline: 250 });
    expect(waits[0]).toBe(700);
    expect(waits[1]).toBe(300);
    expect(waits.at(-1)).toBe(150);
  });

  it('sends nothing for an already-aborted command and stays usable', async () => {
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, base);
    const error = await failure(session.mailFrom('verify@probe.test', { signal: AbortSignal.abort() }));
    expect(error.kind).toBe('aborted');
    expect(channel.written).toEqual(['EHLO probe.test']);
    expect(session.usable).toBe(true);
  });

  it('fails with aborted when the signal fires while waiting, and closes', async () => {
    const inner = scriptedChannel({ respond: reply('MAIL', undefined) });
    let closeWaiting = () => {};
    const channel: LineChannel = {
      readLine: (timeoutMs) =>
        inner.written.length < 2
          ? inner.readLine(timeoutMs)
          : new Promise((_, reject) => {
              closeWaiting = () => reject(new Error('closed'));
            }),
      writeLine: (line) => inner.writeLine(line),
      close: () => {
        inner.close();
        closeWaiting();
      },
      get closed() {
        return inner.closed;
      },
    };
    const session = await openSmtpSession(channel, base);
    const controller = new AbortController();
    const pending = failure(session.mailFrom('verify@probe.test', { signal: controller.signal }));
    await Promise.resolve();
    controller.abort();
    expect((await pending).kind).toBe('aborted');
    expect(channel.closed).toBe(true);
    expect(session.usable).toBe(false);
  });

  it('fails with aborted when the session signal fires while a reply is awaited, on a channel that does not watch it', async () => {
    const inner = scriptedChannel({ respond: reply('MAIL', undefined) });
    const channel: LineChannel = {
      readLine: (timeoutMs) =>
        inner.written.length < 2 ? inner.readLine(timeoutMs) : new Promise<string>(() => {}), // never answers, and close() does not end it: only the session's race can
      writeLine: (line) => inner.writeLine(line),
      close: () => inner.close(),
      get closed() {
        return inner.closed;
      },
    };
    const controller = new AbortController();
    const session = await openSmtpSession(channel, { ...base, signal: controller.signal });
    const pending = failure(session.mailFrom('verify@probe.test'));
    await Promise.resolve();
    controller.abort();
    expect((await pending).kind).toBe('aborted');
    expect(channel.closed).toBe(true);
    expect(session.usable).toBe(false);
  });

  it('closes when the session signal fires', async () => {
    const controller = new AbortController();
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, { ...base, signal: controller.signal });
    controller.abort();
    expect((await failure(session.mailFrom('verify@probe.test'))).kind).toBe('aborted');
    expect(channel.closed).toBe(true);
  });

  it('fails with disconnect when the server hangs up mid-dialogue', async () => {
    const session = await openSmtpSession(scriptedChannel({ respond: reply('RCPT', null) }), base);
    await session.mailFrom('verify@probe.test');
    const error = await failure(session.rcptTo('a@example.com'));
    expect(error.kind).toBe('disconnect');
    expect(classifyError(error)).toBe('forcible_disconnect');
  });

  it('fails with protocol on a garbage reply', async () => {
    const session = await openSmtpSession(
      scriptedChannel({ respond: reply('MAIL', 'HTTP/1.1 400 Bad Request') }),
      base,
    );
    expect((await failure(session.mailFrom('verify@probe.test'))).kind).toBe('protocol');
    expect(session.usable).toBe(false);
  });
});

describe('SmtpSession.quit', () => {
  it('sends QUIT, closes, and is idempotent', async () => {
    const channel = scriptedChannel();
    const session = await openSmtpSession(channel, base);
    await session.quit();
    await session.quit();
    expect(channel.written).toEqual(['EHLO probe.test', 'QUIT']);
    expect(channel.closed).toBe(true);
    expect(session.usable).toBe(false);
  });

  it('never throws, whether the server is silent or gone', async () => {
    const silent = await openSmtpSession(scriptedChannel({ respond: reply('QUIT', undefined) }), base);
    await expect(silent.quit()).resolves.toBeUndefined();
    const gone = await openSmtpSession(scriptedChannel({ respond: reply('QUIT', null) }), base);
    await expect(gone.quit()).resolves.toBeUndefined();
  });
});

describe('injection fuzz', () => {
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 120 }),
    fc.string({ maxLength: 60 }).map((value) => `${value}\r\nDATA\r\n`),
    fc.constantFrom('a@b.example', 'jörg@b.example', '"x y"@b.example', ''),
  );
  const serverLine = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 100 }),
    fc.constantFrom('250 ok', '250-ok', '550 5.1.1 no', '421 bye', '220 go', '250 SMTPUTF8'),
    fc.string({ maxLength: 40 }).map((value) => `250 ${value}\r\nRCPT TO:<evil@x>`),
  );

  it('no address, option or server reply puts CR, LF or NUL into a written command', async () => {
    await fc.assert(
      fc.asyncProperty(
        text,
        text,
        fc.array(text, { maxLength: 3 }),
        fc.array(fc.array(serverLine, { minLength: 1, maxLength: 3 }), { maxLength: 8 }),
        fc.constantFrom('never', 'opportunistic', 'required') as fc.Arbitrary<
          'never' | 'opportunistic' | 'required'
        >,
        async (heloHost, sender, recipients, replies, tls) => {
          let turn = 0;
          const channel = scriptedChannel({
            tls: true,
            greeting: replies[0] ?? '220 hi',
            respond: (line) => replies[++turn] ?? happyReply(line),
          });
          try {
            const session = await openSmtpSession(channel, { heloHost, tls });
            await session.mailFrom(sender, { smtpUtf8: true });
            for (const recipient of recipients) await session.rcptTo(recipient);
            await session.reset();
            await session.quit();
          } catch (error) {
            if (!isSmtpError(error)) throw error;
          }
          for (const line of channel.written) {
            expect(line).not.toMatch(/[\r\n\0]/);
            expect(new TextEncoder().encode(line).byteLength).toBeLessThanOrEqual(510);
          }
        },
      ),
      { numRuns: 500 },
    );
  });
});
