import { afterEach, describe, expect, it, vi } from 'vitest';
import { SmtpError } from '../../src/errors.js';
import {
  createSessionPool,
  type Lease,
  type PoolTarget,
  type RcptRequest,
  type SessionPoolOptions,
} from '../../src/smtp/pool.js';
import { type FakeMailHostOptions, fakeMailHost, reply, settle } from '../support/fake-smtp.js';

const target: PoolTarget = { host: '192.0.2.10', port: 25, hostname: 'mx.example.com' };
const other: PoolTarget = { host: '192.0.2.11', port: 25, hostname: 'mx2.example.com' };
const settings = { heloHost: 'probe.test', tls: 'never', connectTimeoutMs: 1000 } as const;

function request(recipient: string, extra: Partial<RcptRequest> = {}): RcptRequest {
  return { sender: 'verify@probe.test', recipient, smtpUtf8: false, settings, ...extra };
}

function lease(extra: Partial<Lease> = {}): Lease {
  return { deadline: Date.now() + 60_000, ...extra };
}

function setup(host: FakeMailHostOptions = {}, pool: Partial<SessionPoolOptions> = {}) {
  const mail = fakeMailHost(host);
  return { mail, pool: createSessionPool({ open: mail.open, ...pool }) };
}

/** Lets the fake host's steps through until every request has settled. */
async function drive(mail: ReturnType<typeof fakeMailHost>, requests: Promise<unknown>[]): Promise<void> {
  let done = false;
  const all = Promise.allSettled(requests).then(() => {
    done = true;
  });
  for (let round = 0; !done && round < 1000; round++) {
    mail.step();
    await settle();
  }
  await all;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('session reuse', () => {
  it('reuses one session for consecutive addresses of one MX, with one envelope', async () => {
    const { mail, pool } = setup();
    for (const name of ['a', 'b', 'c', 'd']) {
      const outcome = await pool.rcpt(target, request(`${name}@example.com`), lease());
      expect(outcome).toMatchObject({ kind: 'reply', stage: 'rcpt', reply: { code: 250 } });
    }
    expect(mail.opens()).toBe(1);
    expect(mail.sessions[0]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<a@example.com>',
      'RCPT TO:<b@example.com>',
      'RCPT TO:<c@example.com>',
      'RCPT TO:<d@example.com>',
    ]);
    expect(pool.stats()).toMatchObject({ opened: 1, reused: 3, rcpts: 4, resets: 0, open: 1 });
    await pool.close();
  });

  it('says whether the session was reused', async () => {
    const { pool } = setup();
    expect((await pool.rcpt(target, request('a@example.com'), lease())).reused).toBe(false);
    expect((await pool.rcpt(target, request('b@example.com'), lease())).reused).toBe(true);
    await pool.close();
  });

  it('sends RSET and a new MAIL FROM when the sender changes', async () => {
    const { mail, pool } = setup();
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(target, request('b@example.com', { sender: 'other@probe.test' }), lease());
    expect(mail.sessions[0]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<a@example.com>',
      'RSET',
      'MAIL FROM:<other@probe.test>',
      'RCPT TO:<b@example.com>',
    ]);
    expect(pool.stats().resets).toBe(1);
    await pool.close();
  });

  it('opens an SMTPUTF8 envelope for a UTF-8 local part, and keeps it for ASCII ones', async () => {
    const { mail, pool } = setup();
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(target, request('josé@example.com', { smtpUtf8: true }), lease());
    await pool.rcpt(target, request('b@example.com'), lease());
    expect(mail.sessions[0]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<a@example.com>',
      'RSET',
      'MAIL FROM:<verify@probe.test> SMTPUTF8',
      'RCPT TO:<josé@example.com>',
      'RCPT TO:<b@example.com>',
    ]);
    await pool.close();
  });

  it('does not ask a server without SMTPUTF8 about a UTF-8 local part, and keeps the session', async () => {
    const { mail, pool } = setup({ extensions: ['PIPELINING'] });
    const outcome = await pool.rcpt(target, request('josé@example.com', { smtpUtf8: true }), lease());
    expect(outcome).toEqual({ kind: 'no_smtputf8', reused: false });
    expect(mail.sessions[0]!.commands).toEqual([]);
    await pool.rcpt(target, request('a@example.com'), lease());
    expect(mail.opens()).toBe(1);
    await pool.close();
  });

  it('reports a refused MAIL FROM without sending RCPT TO, and opens the envelope again next time', async () => {
    let refuse = true;
    const { mail, pool } = setup({ mail: () => (refuse ? reply(550, '5.7.1 sender blocked') : reply(250)) });
    const outcome = await pool.rcpt(target, request('a@example.com'), lease());
    expect(outcome).toMatchObject({ kind: 'reply', stage: 'mail', reply: { code: 550 } });
    refuse = false;
    await pool.rcpt(target, request('b@example.com'), lease());
    expect(mail.sessions[0]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<b@example.com>',
    ]);
    await pool.close();
  });

  it('starts a new envelope and asks again after 452 4.5.3 too many recipients', async () => {
    let rcpts = 0;
    const { mail, pool } = setup({
      rcpt: () => (++rcpts === 3 ? reply(452, '4.5.3 Too many recipients') : reply(250)),
    });
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(target, request('b@example.com'), lease());
    const outcome = await pool.rcpt(target, request('c@example.com'), lease());
    expect(outcome).toMatchObject({ kind: 'reply', reply: { code: 250 } });
    expect(mail.sessions[0]!.commands.slice(3)).toEqual([
      'RCPT TO:<c@example.com>',
      'RSET',
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<c@example.com>',
    ]);
    await pool.close();
  });

  it('keeps sessions with different EHLO names or TLS policies apart', async () => {
    const { mail, pool } = setup();
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(
      target,
      request('b@example.com', { settings: { ...settings, heloHost: 'x.test' } }),
      lease(),
    );
    await pool.rcpt(
      target,
      request('c@example.com', { settings: { ...settings, tls: 'required' } }),
      lease(),
    );
    expect(mail.opens()).toBe(3);
    await pool.close();
  });

  it('never reuses a session when idleSessionMs is 0', async () => {
    const { mail, pool } = setup({}, { idleSessionMs: 0 });
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(target, request('b@example.com'), lease());
    expect(mail.opens()).toBe(2);
    expect(mail.sessions.map((session) => session.commands.at(-1))).toEqual(['QUIT', 'QUIT']);
    await pool.close();
  });
});

describe('RCPT cap and reconnection', () => {
  it('quits a session after maxRcptPerSession RCPTs and opens a new one', async () => {
    const { mail, pool } = setup({}, { maxRcptPerSession: 3 });
    for (let index = 0; index < 7; index++) {
      await pool.rcpt(target, request(`u${index}@example.com`), lease());
    }
    await settle();
    expect(mail.opens()).toBe(3);
    const counts = mail.sessions.map(
      (session) => session.commands.filter((c) => c.startsWith('RCPT')).length,
    );
    expect(counts).toEqual([3, 3, 1]);
    expect(mail.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(mail.sessions[1]!.commands.at(-1)).toBe('QUIT');
    await pool.close();
  });

  it('one RCPT per session with maxRcptPerSession 1', async () => {
    const { mail, pool } = setup({}, { maxRcptPerSession: 1 });
    for (let index = 0; index < 3; index++)
      await pool.rcpt(target, request(`u${index}@example.com`), lease());
    expect(mail.opens()).toBe(3);
    await pool.close();
  });

  it('with backoff off, reconnects when a reused session answers 421, and the address gets its real answer', async () => {
    const { mail, pool } = setup(
      { closeAfterRcpts: 2, rcpt: () => reply(550, '5.1.1 user unknown') },
      { mxBackoffMs: 0 },
    );
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(target, request('b@example.com'), lease());
    const third = await pool.rcpt(target, request('c@example.com'), lease());
    expect(third).toMatchObject({ kind: 'reply', reply: { code: 550 }, reused: false });
    expect(mail.opens()).toBe(2);
    expect(mail.sessions[1]!.commands).toEqual(['MAIL FROM:<verify@probe.test>', 'RCPT TO:<c@example.com>']);
    await pool.close();
  });

  it('reconnects when a reused session was dropped by the server while idle', async () => {
    const { mail, pool } = setup();
    await pool.rcpt(target, request('a@example.com'), lease());
    mail.sessions[0]!.breakSilently();
    const outcome = await pool.rcpt(target, request('b@example.com'), lease());
    expect(outcome).toMatchObject({ kind: 'reply', reply: { code: 250 }, reused: false });
    expect(mail.opens()).toBe(2);
    await pool.close();
  });

  it('passes a 421 from a fresh session to the caller (who moves on to the next MX)', async () => {
    const { mail, pool } = setup({ closeAfterRcpts: 0 });
    const failure = pool.rcpt(target, request('a@example.com', { fallback: true }), lease());
    await expect(failure).rejects.toMatchObject({ kind: 'rejected', smtpReply: { code: 421 } });
    expect(mail.opens()).toBe(1);
    expect(pool.stats().open).toBe(0);
    await pool.close();
  });

  it('backs off a host that refuses with "too many errors": no new session, the session is not reused', async () => {
    let time = 1_000;
    const { mail, pool } = setup(
      {
        rcpt: (recipient) =>
          recipient.startsWith('b@')
            ? reply(550, '5.7.1 Too many invalid recipients')
            : reply(550, '5.1.1 user unknown'),
      },
      { mxBackoffMs: 10_000, now: () => time },
    );
    const deadline = () => time + 5_000;
    await pool.rcpt(target, request('a@example.com'), { deadline: deadline() });
    expect(await pool.rcpt(target, request('b@example.com'), { deadline: deadline() })).toMatchObject({
      reply: { code: 550 },
    });
    expect(pool.stats().backoffs).toBe(1);
    await settle();
    // Nowhere else to go and a budget shorter than the backoff, or a next MX: it gives way at once.
    await expect(pool.rcpt(target, request('c@example.com'), { deadline: deadline() })).rejects.toMatchObject(
      {
        kind: 'backoff',
      },
    );
    await expect(
      pool.rcpt(target, request('d@example.com', { fallback: true }), { deadline: time + 60_000 }),
    ).rejects.toMatchObject({ kind: 'backoff' });
    expect(mail.opens()).toBe(1);
    time += 10_000; // the backoff is over
    expect(await pool.rcpt(target, request('e@example.com'), { deadline: deadline() })).toMatchObject({
      reused: false,
    });
    expect(mail.opens()).toBe(2);
    await pool.close();
  });

  it('passes a failure to open to the caller and frees the slot', async () => {
    const { pool } = setup(
      { openError: () => new SmtpError('connection', 'refused') },
      { perMxConcurrency: 1 },
    );
    await expect(pool.rcpt(target, request('a@example.com'), lease())).rejects.toMatchObject({
      kind: 'connection',
    });
    await expect(pool.rcpt(target, request('b@example.com'), lease())).rejects.toMatchObject({
      kind: 'connection',
    });
    expect(pool.stats()).toMatchObject({ opened: 2, open: 0 });
    await pool.close();
  });
});

describe('politeness limits', () => {
  it('opens at most perMxConcurrency connections to one MX, whatever the demand', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 2 });
    const all = Array.from({ length: 10 }, (_, index) =>
      pool.rcpt(target, request(`u${index}@example.com`), lease()),
    );
    while ((await Promise.race([Promise.all(all).then(() => true), settle().then(() => false)])) === false) {
      expect(mail.active()).toBeLessThanOrEqual(2);
      mail.step();
    }
    expect(mail.peak()).toBe(2);
    expect(mail.opens()).toBe(2);
    expect(pool.stats().peakPerMx).toBe(2);
    await pool.close();
  });

  it('counts the limit per MX: two MX hosts get two connections each', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 2 });
    const all = [target, other].flatMap((mx) =>
      Array.from({ length: 4 }, (_, index) => pool.rcpt(mx, request(`u${index}@example.com`), lease())),
    );
    await settle();
    expect(mail.active()).toBe(4);
    while (mail.step() > 0) await settle();
    await Promise.all(all);
    expect(mail.opens()).toBe(4);
    await pool.close();
  });

  it('bounds the requests at work over all MX hosts by concurrency', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 2, concurrency: 3 });
    const targets = Array.from({ length: 5 }, (_, index) => ({ ...target, host: `192.0.2.${20 + index}` }));
    const all = targets.map((mx) => pool.rcpt(mx, request('a@example.com'), lease()));
    await settle();
    expect(mail.opens()).toBe(3);
    while (mail.step() > 0) {
      await settle();
      expect(mail.waiting()).toBeLessThanOrEqual(3);
    }
    await Promise.all(all);
    expect(mail.opens()).toBe(5);
    await pool.close();
  });

  it('closes the least recently used idle session when opening a new one would pass concurrency', async () => {
    const { mail, pool } = setup({}, { concurrency: 2 });
    await pool.rcpt(target, request('a@example.com'), lease());
    await pool.rcpt(other, request('a@example.com'), lease());
    await pool.rcpt({ ...target, host: '192.0.2.12' }, request('a@example.com'), lease());
    await settle();
    expect(mail.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(mail.active()).toBe(2);
    await pool.close();
  });

  it('gives a dedicated request a session of its own, quitting an idle one to make room', async () => {
    const { mail, pool } = setup({}, { perMxConcurrency: 1 });
    await pool.rcpt(target, request('a@example.com'), lease());
    const probe = await pool.rcpt(target, request('random@example.com', { dedicated: true }), lease());
    expect(probe.reused).toBe(false);
    await settle();
    expect(mail.opens()).toBe(2);
    expect(mail.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(mail.sessions[1]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<random@example.com>',
      'QUIT',
    ]);
    expect(mail.peak()).toBe(1);
    await pool.rcpt(target, request('b@example.com'), lease());
    expect(mail.opens()).toBe(3);
    await pool.close();
  });
  it('under load, a dedicated request takes the slot of a session that reached its cap, not a half-used one', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 1, maxRcptPerSession: 3 });
    const first = pool.rcpt(target, request('r1@example.com'), lease());
    const probe = pool.rcpt(target, request('random@example.com', { dedicated: true }), lease());
    const rest = ['r2', 'r3', 'r4'].map((name) => pool.rcpt(target, request(`${name}@example.com`), lease()));
    await drive(mail, [first, probe, ...rest]);
    expect(mail.sessions.map((session) => session.commands.filter((c) => c.startsWith('RCPT')))).toEqual([
      ['RCPT TO:<r1@example.com>', 'RCPT TO:<r2@example.com>', 'RCPT TO:<r3@example.com>'],
      ['RCPT TO:<random@example.com>'],
      ['RCPT TO:<r4@example.com>'],
    ]);
    expect(mail.peak()).toBe(1);
    await pool.close();
  });

  it('stops letting requests pass a waiting dedicated one after about two sessions worth', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 1, maxRcptPerSession: 1000 });
    const first = pool.rcpt(target, request('r0@example.com'), lease());
    const probe = pool.rcpt(target, request('random@example.com', { dedicated: true }), lease());
    const rest = Array.from({ length: 60 }, (_, index) =>
      pool.rcpt(target, request(`r${index + 1}@example.com`), lease()),
    );
    await drive(mail, [first, probe, ...rest]);
    const rcpts = mail.sessions[0]!.commands.filter((c) => c.startsWith('RCPT'));
    expect(rcpts).toHaveLength(51); // r0, then 50 requests went past the probe
    expect(mail.sessions[1]!.commands).toContain('RCPT TO:<random@example.com>');
    await pool.close();
  });
});

describe('budget, idle close and close()', () => {
  it('closes idle sessions after idleSessionMs', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { mail, pool } = setup({}, { idleSessionMs: 1000 });
    await pool.rcpt(target, request('a@example.com'), lease());
    await vi.advanceTimersByTimeAsync(999);
    expect(pool.stats().open).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(mail.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(pool.stats().open).toBe(0);
    await pool.close();
  });

  it('gives up waiting for a slot when the budget is spent, and the queue moves on', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 1 });
    const first = pool.rcpt(target, request('a@example.com'), lease({ deadline: Date.now() + 10_000 }));
    const hurried = pool.rcpt(target, request('b@example.com'), lease({ deadline: Date.now() + 100 }));
    const patient = pool.rcpt(target, request('c@example.com'), lease({ deadline: Date.now() + 10_000 }));
    hurried.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(100);
    await expect(hurried).rejects.toMatchObject({ kind: 'timeout' });
    while (mail.step() > 0) await vi.advanceTimersByTimeAsync(0);
    await expect(first).resolves.toMatchObject({ kind: 'reply' });
    await expect(patient).resolves.toMatchObject({ kind: 'reply' });
    expect(mail.sessions[0]!.commands).not.toContain('RCPT TO:<b@example.com>');
    await pool.close();
  });

  it('drops a session whose reply does not come within the budget', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { mail, pool } = setup({ manual: true });
    const pending = pool.rcpt(target, request('a@example.com'), lease({ deadline: Date.now() + 500 }));
    pending.catch(() => undefined);
    await vi.advanceTimersByTimeAsync(0);
    mail.step(); // the session opens; MAIL FROM then waits forever
    await vi.advanceTimersByTimeAsync(500);
    await expect(pending).rejects.toMatchObject({ kind: 'timeout' });
    expect(mail.active()).toBe(0);
    expect(pool.stats().open).toBe(0);
    await pool.close();
  });

  it('stops at once when the caller aborts', async () => {
    const { mail, pool } = setup({ manual: true });
    const controller = new AbortController();
    const pending = pool.rcpt(target, request('a@example.com'), lease({ signal: controller.signal }));
    pending.catch(() => undefined);
    await settle();
    controller.abort();
    await expect(pending).rejects.toMatchObject({ kind: 'aborted' });
    await settle();
    expect(mail.active()).toBe(0);
    await pool.close();
  });

  it('close() quits idle sessions, aborts busy ones, fails waiters, and refuses new requests', async () => {
    const { mail, pool } = setup({ manual: true }, { perMxConcurrency: 1 });
    const idle = pool.rcpt(other, request('a@example.com'), lease());
    await settle();
    while (mail.step() > 0) await settle();
    await idle;
    const busy = pool.rcpt(target, request('a@example.com'), lease());
    const waiting = pool.rcpt(target, request('b@example.com'), lease());
    busy.catch(() => undefined);
    waiting.catch(() => undefined);
    await settle();
    await pool.close();
    await expect(busy).rejects.toMatchObject({ kind: 'aborted' });
    await expect(waiting).rejects.toMatchObject({ kind: 'aborted' });
    expect(mail.sessions[0]!.commands.at(-1)).toBe('QUIT');
    expect(mail.active()).toBe(0);
    expect(pool.stats().open).toBe(0);
    await expect(pool.rcpt(target, request('c@example.com'), lease())).rejects.toMatchObject({
      kind: 'aborted',
    });
  });

  it('routes transcript lines to the request that holds the session', async () => {
    const { pool } = setup();
    const first: string[] = [];
    const second: string[] = [];
    const trace = (lines: string[]) => (direction: string, line: string) =>
      lines.push(`${direction} ${line}`);
    await pool.rcpt(target, request('a@example.com'), lease({ trace: trace(first) }));
    await pool.rcpt(target, request('b@example.com'), lease({ trace: trace(second) }));
    expect(first).toEqual([
      'server 220 fake ESMTP',
      'client MAIL FROM:<verify@probe.test>',
      'server 250 ok',
      'client RCPT TO:<a@example.com>',
      'server 250 ok',
    ]);
    expect(second).toEqual(['client RCPT TO:<b@example.com>', 'server 250 ok']);
    await pool.close();
  });

  it('rejects bad limits', () => {
    const mail = fakeMailHost();
    expect(() => createSessionPool({ open: mail.open, perMxConcurrency: 0 })).toThrow(RangeError);
    expect(() => createSessionPool({ open: mail.open, maxRcptPerSession: 1.5 })).toThrow(RangeError);
    expect(() => createSessionPool({ open: mail.open, idleSessionMs: -1 })).toThrow(RangeError);
  });
});
