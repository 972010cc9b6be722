import { describe, expect, it } from 'vitest';
import { createSessionPool, type Lease, type PoolTarget, type RcptRequest } from '../../src/smtp/pool.js';
import { type FakeMailHostOptions, fakeMailHost, reply, settle } from '../support/fake-smtp.js';

const target: PoolTarget = { host: '192.0.2.10', port: 25, hostname: 'mx.example.com' };
const settings = { heloHost: 'probe.test', tls: 'never', connectTimeoutMs: 1000 } as const;

function request(recipient: string, extra: Partial<RcptRequest> = {}): RcptRequest {
  return { sender: 'verify@probe.test', recipient, smtpUtf8: false, settings, ...extra };
}

function lease(extra: Partial<Lease> = {}): Lease {
  return { deadline: Date.now() + 60_000, ...extra };
}

/** A manual fake host with pipelining, one session per MX so that requests queue up behind the first. */
function setup(
  host: FakeMailHostOptions = {},
  pool: { maxRcptPerSession?: number; pipelineDepth?: number; mxBackoffMs?: number } = {},
) {
  const mail = fakeMailHost({ pipelining: true, manual: true, ...host });
  return { mail, pool: createSessionPool({ open: mail.open, perMxConcurrency: 1, ...pool }) };
}

/** Starts `names` at once and lets the fake host answer until all have settled. */
async function burst(
  mail: ReturnType<typeof fakeMailHost>,
  pool: ReturnType<typeof createSessionPool>,
  names: readonly string[],
  extra: (name: string) => Partial<RcptRequest> = () => ({}),
) {
  const requests = names.map((name) =>
    pool.rcpt(target, request(`${name}@example.com`, extra(name)), lease()),
  );
  let done = false;
  const all = Promise.allSettled(requests).then((results) => {
    done = true;
    return results;
  });
  for (let round = 0; !done && round < 1000; round++) {
    mail.step();
    await settle();
  }
  return all;
}

const missing = (recipient: string) =>
  recipient.startsWith('x') ? reply(550, '5.1.1 user unknown') : reply(250, '2.1.5 ok');

describe('pipelined groups', () => {
  it('sends queued addresses of one MX as groups, MAIL FROM in the first, each with its own answer', async () => {
    const { mail, pool } = setup({ rcpt: missing });
    const names = ['a', 'xb', 'c', 'xd', 'e'];
    const results = await burst(mail, pool, names);
    const codes = results.map((result) =>
      result.status === 'fulfilled' && result.value.kind === 'reply' ? result.value.reply.code : 0,
    );
    expect(codes).toEqual([250, 550, 250, 550, 250]);
    const session = mail.sessions[0]!;
    expect(mail.opens()).toBe(1);
    expect(session.commands[0]).toBe('MAIL FROM:<verify@probe.test>');
    expect(session.commands.filter((line) => line.startsWith('RCPT')).length).toBe(5);
    // all five queued while the session opened: they go as one group
    expect(session.groups).toEqual([5]);
    expect(pool.stats()).toMatchObject({ groups: 1, rcpts: 5, opened: 1 });
    await pool.close();
  });

  it('never puts more than pipelineDepth, nor more than the session has left, in a group', async () => {
    const { mail, pool } = setup({}, { pipelineDepth: 3, maxRcptPerSession: 5 });
    const results = await burst(mail, pool, ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(mail.sessions.map((session) => session.groups)).toEqual([[3, 2], [3]]);
    await pool.close();
  });

  it('keeps one command at a time without PIPELINING', async () => {
    const { mail, pool } = setup({ extensions: ['SMTPUTF8'] });
    const results = await burst(mail, pool, ['a', 'b', 'c']);
    expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(mail.sessions[0]!.groups).toEqual([]);
    expect(pool.stats().groups).toBe(0);
    await pool.close();
  });

  it('does not let requests with another sender ride along', async () => {
    const { mail, pool } = setup();
    await burst(mail, pool, ['a', 'b', 'c', 'd'], (name) =>
      name === 'c' ? { sender: 'other@probe.test' } : {},
    );
    const session = mail.sessions[0]!;
    expect(session.groups).toEqual([3, 1]);
    expect(session.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<a@example.com>',
      'RCPT TO:<b@example.com>',
      'RCPT TO:<d@example.com>',
      'RSET',
      'MAIL FROM:<other@probe.test>',
      'RCPT TO:<c@example.com>',
    ]);
    await pool.close();
  });

  it('with backoff off, retries the rest of a group on a fresh session after a 421 mid-group', async () => {
    const { mail, pool } = setup({ closeAfterRcpts: 3 }, { mxBackoffMs: 0 });
    const results = await burst(mail, pool, ['a', 'b', 'c', 'd', 'e']);
    expect(results.map((result) => result.status)).toEqual(Array(5).fill('fulfilled'));
    expect(mail.opens()).toBe(2);
    expect(mail.sessions[1]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<d@example.com>',
      'RCPT TO:<e@example.com>',
    ]);
    await pool.close();
  });

  it('fails every address whose reply did not come when a fresh session drops mid-group', async () => {
    const { mail, pool } = setup({ dropAfterRcpts: 3 });
    const names = ['a', 'b', 'c', 'd', 'e'];
    const all = Promise.allSettled(
      names.map((name) => pool.rcpt(target, request(`${name}@example.com`), lease())),
    );
    for (let round = 0; round < 50; round++) {
      mail.step();
      await settle();
    }
    const results = await all;
    const kinds = results.map((result) =>
      result.status === 'fulfilled' ? 'ok' : (result.reason as { kind: string }).kind,
    );
    // a fresh session that answered before dropping is not stale: no retry for d and e
    expect(kinds).toEqual(['ok', 'ok', 'ok', 'disconnect', 'disconnect']);
    expect(mail.opens()).toBe(1);
    await pool.close();
  });

  it('starts a new envelope for the addresses that got 452 4.5.3 too many recipients', async () => {
    let inEnvelope = 0;
    const { mail, pool } = setup({
      mail: () => {
        inEnvelope = 0;
        return reply(250);
      },
      rcpt: () => (++inEnvelope > 3 ? reply(452, '4.5.3 too many recipients') : reply(250)),
    });
    const results = await burst(mail, pool, ['a', 'b', 'c', 'd', 'e']);
    const codes = results.map((result) =>
      result.status === 'fulfilled' && result.value.kind === 'reply' ? result.value.reply.code : 0,
    );
    expect(codes).toEqual([250, 250, 250, 250, 250]);
    expect(mail.sessions[0]!.commands.slice(-4)).toEqual([
      'RSET',
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<d@example.com>',
      'RCPT TO:<e@example.com>',
    ]);
    await pool.close();
  });

  it('gives the catch-all probe a session of its own, with nobody riding along', async () => {
    const { mail, pool } = setup({}, {});
    const results = await burst(mail, pool, ['probe', 'a', 'b'], (name) =>
      name === 'probe' ? { dedicated: true } : {},
    );
    expect(results.every((result) => result.status === 'fulfilled')).toBe(true);
    expect(mail.sessions[0]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      'RCPT TO:<probe@example.com>',
      'QUIT',
    ]);
    expect(mail.sessions[1]!.commands).not.toContain('RCPT TO:<probe@example.com>');
    await pool.close();
  });

  it('routes each rider its own lines, not its neighbours', async () => {
    const { mail, pool } = setup();
    const lines: Record<string, string[]> = { a: [], b: [], c: [] };
    const requests = ['a', 'b', 'c'].map((name) =>
      pool.rcpt(
        target,
        request(`${name}@example.com`),
        lease({ trace: (_, line) => lines[name]!.push(line) }),
      ),
    );
    for (let round = 0; round < 50; round++) {
      mail.step();
      await settle();
    }
    await Promise.all(requests);
    expect(lines.b!.filter((line) => line.startsWith('RCPT'))).toEqual([]);
    expect(lines.a!.some((line) => line.includes('c@example.com'))).toBe(false);
    await pool.close();
  });

  it('rejects a bad pipelineDepth', () => {
    expect(() => createSessionPool({ open: fakeMailHost().open, pipelineDepth: 0 })).toThrow(/pipelineDepth/);
  });
});
