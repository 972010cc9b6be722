import { afterEach, describe, expect, it } from 'vitest';
import { SmtpError } from '../../src/errors.js';
import type { PoolTarget } from '../../src/smtp/pool.js';
import { createProber, type Prober, type ProberOptions } from '../../src/smtp/prober.js';
import { happyReply, type SmtpScript, scriptedTransport } from '../../src/testing/scripted-channel.js';
import { fakeMailHost, reply, settle } from '../support/fake-smtp.js';

const target: PoolTarget = { host: '192.0.2.25', port: 25, hostname: 'mx.example.com' };
const settings = { heloHost: 'probe.test', tls: 'never', connectTimeoutMs: 1000 } as const;
const catchAllRequest = { sender: 'verify@probe.test', settings };
const probers: Prober[] = [];

afterEach(async () => {
  await Promise.all(probers.splice(0).map((prober) => prober.close()));
});

/** A prober over scripted channels whose RCPT replies come from `rcpt`. */
function setup(rcpt: (command: string) => string | undefined, options: Partial<ProberOptions> = {}) {
  const script: SmtpScript = {
    respond: (command) => (command.startsWith('RCPT') ? rcpt(command) : happyReply(command)),
  };
  const transport = scriptedTransport(() => script);
  const prober = createProber({ transport, heloHost: 'fallback.test', ...options });
  probers.push(prober);
  return { transport, prober };
}

const lease = (ms = 5000) => ({ deadline: Date.now() + ms });

describe('createProber: sessions over the transport', () => {
  it('connects to the target with its host name, sends EHLO with the settings, and traces the dialogue', async () => {
    const { transport, prober } = setup(() => '250 2.1.5 ok');
    const lines: string[] = [];
    const outcome = await prober.rcpt(
      target,
      { sender: 'verify@probe.test', recipient: 'alice@example.com', smtpUtf8: false, settings },
      { ...lease(), trace: (direction, line) => lines.push(`${direction} ${line}`) },
    );
    expect(outcome).toMatchObject({ kind: 'reply', stage: 'rcpt', reply: { code: 250 } });
    expect(transport.targets).toEqual([{ host: '192.0.2.25', port: 25, hostname: 'mx.example.com' }]);
    expect(transport.channels[0]!.written).toEqual([
      'EHLO probe.test',
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<alice@example.com>',
    ]);
    expect(lines).toContain('client EHLO probe.test');
    expect(lines.at(-1)).toBe('server 250 2.1.5 ok');
    await prober.close();
    expect(transport.channels[0]!.written.at(-1)).toBe('QUIT');
  });
});

describe('createProber: catch-all', () => {
  it.each([
    ['250 2.1.5 ok', 'accepted'],
    ['550 5.1.1 user unknown', 'refused'],
    ['450 4.7.1 greylisted', 'inconclusive'],
    ['554 5.7.1 blocked by Spamhaus', 'inconclusive'],
  ])('reads %s to a random address as %s', async (reply, outcome) => {
    const { prober } = setup(() => reply);
    expect(await prober.catchAll('example.com', target, catchAllRequest, lease())).toBe(outcome);
  });

  it('asks about a random local part in a session of its own, quit right after', async () => {
    const { transport, prober } = setup(() => '550 5.1.1 user unknown');
    await prober.rcpt(
      target,
      { sender: 'verify@probe.test', recipient: 'alice@example.com', smtpUtf8: false, settings },
      lease(),
    );
    await prober.catchAll('example.com', target, catchAllRequest, lease());
    expect(transport.channels).toHaveLength(2);
    const written = transport.channels[1]!.written;
    expect(written[2]).toMatch(/^RCPT TO:<[a-z2-7]{24}@example\.com>$/);
    expect(written.at(-1)).toBe('QUIT');
  });

  it('probes a domain once for concurrent askers, and answers later ones from the cache', async () => {
    const { transport, prober } = setup(() => '250 2.1.5 ok');
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => prober.catchAll('example.com', target, catchAllRequest, lease())),
    );
    expect(answers).toEqual(Array(10).fill('accepted'));
    expect(await prober.catchAll('EXAMPLE.COM', target, catchAllRequest, lease())).toBe('accepted');
    expect(transport.channels).toHaveLength(1);
    expect(prober.stats().catchAllProbes).toBe(1);
  });

  it('asks again after catchAllTtlMs, by the injected clock', async () => {
    let time = 1_000_000;
    const { prober } = setup(() => '250 2.1.5 ok', { catchAllTtlMs: 1000, now: () => time });
    await prober.catchAll('example.com', target, catchAllRequest, { deadline: time + 5000 });
    time += 1001;
    await prober.catchAll('example.com', target, catchAllRequest, { deadline: time + 5000 });
    expect(prober.stats().catchAllProbes).toBe(2);
  });

  it('lets an asker whose budget runs out go, without spoiling the shared probe for the others', async () => {
    const mail = fakeMailHost({ manual: true, rcpt: () => reply(550, '5.1.1 user unknown') });
    const prober = createProber({
      transport: scriptedTransport(() => ({})),
      heloHost: 'x.test',
      open: mail.open,
    });
    probers.push(prober);
    const patient = prober.catchAll('example.com', target, catchAllRequest, lease(5000));
    const hurried = prober.catchAll('example.com', target, catchAllRequest, lease(20));
    const aborted = new AbortController();
    const gone = prober.catchAll('example.com', target, catchAllRequest, {
      ...lease(),
      signal: aborted.signal,
    });
    aborted.abort();
    await expect(gone).rejects.toMatchObject({ kind: 'aborted' });
    await expect(hurried).rejects.toMatchObject({ kind: 'timeout' });
    while (mail.step() > 0) await settle();
    expect(await patient).toBe('refused');
    expect(mail.opens()).toBe(1);
  });

  it('is inconclusive when the host cannot be reached', async () => {
    const prober = createProber({
      transport: {
        connect: () => Promise.reject(new SmtpError('connection', 'connection refused')),
      },
      heloHost: 'fallback.test',
    });
    probers.push(prober);
    expect(await prober.catchAll('example.com', target, catchAllRequest, lease())).toBe('inconclusive');
  });
});
