import { afterEach, describe, expect, it } from 'vitest';
import { smtpCheck } from '../../src/checks/smtp.js';
import { createCheckState } from '../../src/checks/state.js';
import type { AddressParts, CheckState, MailHost } from '../../src/checks/types.js';
import { SmtpError } from '../../src/errors.js';
import { resolveOptions, type VerifyOptions } from '../../src/options.js';
import type { VerifierRuntime } from '../../src/runtime.js';
import { randomLocalPart } from '../../src/smtp/catch-all.js';
import type { SessionFactory } from '../../src/smtp/pool.js';
import { createProber, type Prober } from '../../src/smtp/prober.js';
import { type FakeMailHost, type FakeMailHostOptions, fakeMailHost, reply } from '../support/fake-smtp.js';

const probers: Prober[] = [];
const sevens = (size: number) => new Uint8Array(size).fill(7);
/** The catch-all probe's local part with the fixed random source below. */
const PROBE = randomLocalPart(sevens);

afterEach(async () => {
  await Promise.all(probers.splice(0).map((prober) => prober.close()));
});

/** A fake mail host per IP address. */
function network(hosts: Record<string, FakeMailHostOptions>): {
  hosts: Record<string, FakeMailHost>;
  open: SessionFactory;
} {
  const fakes = Object.fromEntries(Object.entries(hosts).map(([ip, options]) => [ip, fakeMailHost(options)]));
  return {
    hosts: fakes,
    open: (target, context) => {
      const host = fakes[target.host];
      if (host === undefined) return Promise.reject(new SmtpError('connection', 'connection refused'));
      return host.open(target, context);
    },
  };
}

function address(local: string, domain = 'example.com'): AddressParts {
  return {
    local,
    domain,
    unicodeDomain: domain,
    normalized: `${local}@${domain}`,
    smtpUtf8: /[^\x00-\x7f]/.test(local),
    literalAddress: null,
  };
}

interface StateOptions {
  readonly options?: VerifyOptions;
  readonly mailHosts?: readonly MailHost[] | null;
  readonly deadline?: number;
  readonly signal?: AbortSignal;
}

function stateFor(open: SessionFactory, local: string, extra: StateOptions = {}): CheckState {
  const options = resolveOptions({ heloHost: 'probe.test', ...extra.options });
  const prober = createProber({
    transport: { connect: () => Promise.reject(new Error('unused')) },
    heloHost: 'fallback.test',
    open,
    randomBytes: sevens,
  });
  probers.push(prober);
  const runtime: VerifierRuntime = {
    resolver: {
      mx: () => Promise.reject(new Error('unused')),
      addresses: () => Promise.reject(new Error('unused')),
    },
    transport: { connect: () => Promise.reject(new Error('unused')) },
    now: Date.now,
    randomBytes: (size) => new Uint8Array(size),
    prober,
  };
  const parts = address(local);
  return {
    ...createCheckState(parts.normalized, options, runtime, extra.deadline ?? Date.now() + 10_000),
    signal: extra.signal,
    address: parts,
    user: parts.local,
    domain: parts.domain,
    mx_record: 'mx1.example.com',
    mailHosts:
      extra.mailHosts === undefined
        ? [
            { host: 'mx1.example.com', priority: 10, addresses: ['192.0.2.1'] },
            { host: 'mx2.example.com', priority: 20, addresses: ['192.0.2.2'] },
          ]
        : extra.mailHosts,
  };
}

const mailboxes =
  (known: Record<string, number | [number, string]>) =>
  (recipient: string): ReturnType<typeof reply> => {
    const entry = known[recipient.split('@')[0]!];
    if (entry === undefined) return reply(550, '5.1.1 user unknown');
    return Array.isArray(entry) ? reply(entry[0], entry[1]) : reply(entry);
  };

describe('smtpCheck verdicts', () => {
  it('valid: the server accepts the address and refuses a random one', async () => {
    const net = network({ '192.0.2.1': { rcpt: mailboxes({ alice: 250 }) } });
    const state = stateFor(net.open, 'alice');
    expect(await smtpCheck.run(state)).toEqual({ status: 'valid', sub_status: null });
    expect(state.accept_all).toBe(false);
    expect(state.mx_record).toBe('mx1.example.com');
  });

  it('catch_all: the server accepts a random local part too', async () => {
    const net = network({ '192.0.2.1': {} });
    const state = stateFor(net.open, 'alice');
    expect(await smtpCheck.run(state)).toEqual({ status: 'catch_all', sub_status: null });
    expect(state.accept_all).toBe(true);
  });

  it('probes the random address in a session of its own, with 24 random base32 characters', async () => {
    const net = network({ '192.0.2.1': { rcpt: mailboxes({ alice: 250 }) } });
    await smtpCheck.run(stateFor(net.open, 'alice'));
    const sessions = net.hosts['192.0.2.1']!.sessions;
    expect(sessions).toHaveLength(2);
    expect(sessions[0]!.commands).toEqual(['MAIL FROM:<verify@probe.test>', 'RCPT TO:<alice@example.com>']);
    expect(sessions[1]!.commands).toEqual([
      'MAIL FROM:<verify@probe.test>',
      `RCPT TO:<${PROBE}@example.com>`,
      'QUIT',
    ]);
  });

  it('valid when the catch-all probe is inconclusive (the server did accept the address)', async () => {
    const net = network({
      '192.0.2.1': { rcpt: mailboxes({ alice: 250, [PROBE]: [450, '4.7.1 try later'] }) },
    });
    expect(await smtpCheck.run(stateFor(net.open, 'alice'))).toEqual({ status: 'valid', sub_status: null });
  });

  it('valid without a probe when catchAll is off', async () => {
    const net = network({ '192.0.2.1': {} });
    const state = stateFor(net.open, 'alice', { options: { catchAll: false } });
    expect(await smtpCheck.run(state)).toEqual({ status: 'valid', sub_status: null });
    expect(net.hosts['192.0.2.1']!.opens()).toBe(1);
  });

  it.each([
    [[550, '5.1.1 user unknown'], 'invalid', 'mailbox_not_found'],
    [[550, '5.2.1 mailbox disabled'], 'invalid', 'mailbox_disabled'],
    [[552, '5.2.2 mailbox full'], 'invalid', 'mailbox_quota_exceeded'],
    [[450, '4.2.0 greylisted, try again'], 'unknown', 'greylisted'],
    [[451, '4.3.0 local error'], 'unknown', 'mail_server_temporary_error'],
    [[554, '5.7.1 blocked using spamhaus'], 'unknown', 'antispam_system'],
  ] as const)('RCPT %j gives %s/%s', async ([code, text], status, subStatus) => {
    const net = network({ '192.0.2.1': { rcpt: () => reply(code, text) } });
    const state = stateFor(net.open, 'bob');
    expect(await smtpCheck.run(state)).toEqual({ status, sub_status: subStatus });
    expect(net.hosts['192.0.2.1']!.opens()).toBe(1);
  });

  it('a refused MAIL FROM is about us, never about the address', async () => {
    const net = network({ '192.0.2.1': { mail: () => reply(550, 'sender rejected') } });
    expect(await smtpCheck.run(stateFor(net.open, 'alice'))).toEqual({
      status: 'unknown',
      sub_status: 'antispam_system',
    });
  });

  it('a UTF-8 local part at a server without SMTPUTF8 is not asked: unknown/smtp_not_checked', async () => {
    const net = network({ '192.0.2.1': { extensions: [] } });
    expect(await smtpCheck.run(stateFor(net.open, 'josé'))).toEqual({
      status: 'unknown',
      sub_status: 'smtp_not_checked',
    });
    expect(net.hosts['192.0.2.1']!.sessions[0]!.commands).toEqual([]);
  });

  it('sends the SMTPUTF8 envelope to a server that offers it', async () => {
    const net = network({ '192.0.2.1': { rcpt: mailboxes({ josé: 250 }) } });
    expect(await smtpCheck.run(stateFor(net.open, 'josé'))).toEqual({ status: 'valid', sub_status: null });
    expect(net.hosts['192.0.2.1']!.sessions[0]!.commands[0]).toBe('MAIL FROM:<verify@probe.test> SMTPUTF8');
  });

  it('uses mailFrom when given', async () => {
    const net = network({ '192.0.2.1': { rcpt: mailboxes({ alice: 250 }) } });
    await smtpCheck.run(stateFor(net.open, 'alice', { options: { mailFrom: 'bounce@sender.test' } }));
    expect(net.hosts['192.0.2.1']!.sessions[0]!.commands[0]).toBe('MAIL FROM:<bounce@sender.test>');
  });
});

describe('smtpCheck host order', () => {
  it('moves on to the next MX when the first cannot be connected to, and reports the one used', async () => {
    const net = network({ '192.0.2.2': { rcpt: mailboxes({ alice: 250 }) } });
    const state = stateFor(net.open, 'alice');
    expect(await smtpCheck.run(state)).toEqual({ status: 'valid', sub_status: null });
    expect(state.mx_record).toBe('mx2.example.com');
  });

  it('moves on to the next MX after a 421', async () => {
    const net = network({ '192.0.2.1': { closeAfterRcpts: 0 }, '192.0.2.2': { rcpt: mailboxes({}) } });
    const state = stateFor(net.open, 'alice');
    expect(await smtpCheck.run(state)).toEqual({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(state.mx_record).toBe('mx2.example.com');
  });

  it('tries every address of a host before the next host', async () => {
    const net = network({ '192.0.2.9': { rcpt: mailboxes({ alice: 250 }) } });
    const state = stateFor(net.open, 'alice', {
      mailHosts: [
        { host: 'mx1.example.com', priority: 10, addresses: ['192.0.2.8', '192.0.2.9'] },
        { host: 'mx2.example.com', priority: 20, addresses: ['192.0.2.2'] },
      ],
    });
    expect(await smtpCheck.run(state)).toEqual({ status: 'valid', sub_status: null });
    expect(state.mx_record).toBe('mx1.example.com');
  });

  it('gives the last failure when no host answers, keeping the first MX as mx_record', async () => {
    const net = network({});
    const state = stateFor(net.open, 'alice');
    expect(await smtpCheck.run(state)).toEqual({ status: 'unknown', sub_status: 'failed_smtp_connection' });
    expect(state.mx_record).toBe('mx1.example.com');
  });

  it('stops after maxMxHosts hosts', async () => {
    const net = network({ '192.0.2.2': {} });
    const state = stateFor(net.open, 'alice', { options: { maxMxHosts: 1 } });
    expect(await smtpCheck.run(state)).toEqual({ status: 'unknown', sub_status: 'failed_smtp_connection' });
    expect(net.hosts['192.0.2.2']!.opens()).toBe(0);
  });

  it('does not move on after a policy refusal at the greeting', async () => {
    const net = network({
      '192.0.2.1': {
        openError: () =>
          new SmtpError('rejected', 'no', { smtpReply: reply(554, '5.7.1 go away'), stage: 'greeting' }),
      },
      '192.0.2.2': {},
    });
    expect(await smtpCheck.run(stateFor(net.open, 'alice'))).toEqual({
      status: 'unknown',
      sub_status: 'antispam_system',
    });
    expect(net.hosts['192.0.2.2']!.opens()).toBe(0);
  });
});

describe('smtpCheck scope, budget and trace', () => {
  it('does nothing without mail hosts, or with smtp or dns off; the provider is still named', async () => {
    const net = network({ '192.0.2.1': {} });
    expect(await smtpCheck.run(stateFor(net.open, 'alice', { mailHosts: null }))).toBeUndefined();
    expect(await smtpCheck.run(stateFor(net.open, 'alice', { mailHosts: [] }))).toBeUndefined();
    const google = [{ host: 'aspmx.l.google.com', priority: 1, addresses: ['192.0.2.1'] }];
    const off = stateFor(net.open, 'alice', { mailHosts: google, options: { smtp: false } });
    expect(await smtpCheck.run(off)).toBeUndefined();
    expect(off.smtp_provider).toBe('google');
    expect(await smtpCheck.run(stateFor(net.open, 'alice', { options: { dns: false } }))).toBeUndefined();
    expect(net.hosts['192.0.2.1']!.opens()).toBe(0);
  });

  it('names the provider from the MX hosts', async () => {
    const net = network({ '192.0.2.1': {} });
    const state = stateFor(net.open, 'alice', {
      mailHosts: [{ host: 'example-com.mail.protection.outlook.com', priority: 0, addresses: ['192.0.2.1'] }],
    });
    await smtpCheck.run(state);
    expect(state.smtp_provider).toBe('microsoft');
  });

  it('timeout_exceeded when the budget is already spent, without connecting', async () => {
    const net = network({ '192.0.2.1': {} });
    const state = stateFor(net.open, 'alice', { deadline: Date.now() - 1 });
    expect(await smtpCheck.run(state)).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });
    expect(net.hosts['192.0.2.1']!.opens()).toBe(0);
    expect(state.reason).toBe(
      'mx1.example.com [192.0.2.1]: not tried: the time budget was spent before it could be asked',
    );
  });

  it('timeout_exceeded when the server stalls past the budget', async () => {
    const net = network({ '192.0.2.1': { manual: true } });
    // A budget long enough for the (in-memory) session to open on a loaded machine, spent waiting for the greeting.
    const state = stateFor(net.open, 'alice', { deadline: Date.now() + 1_000 });
    expect(await smtpCheck.run(state)).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });
    // Tried and cut short: not to be mistaken for an address that never got a session.
    expect(state.reason).toBe('mx1.example.com [192.0.2.1]: the verification time budget is spent');
  });

  it('timeout_exceeded when the caller aborts', async () => {
    const net = network({ '192.0.2.1': { manual: true } });
    const controller = new AbortController();
    const state = stateFor(net.open, 'alice', { signal: controller.signal });
    const verdict = smtpCheck.run(state);
    setTimeout(() => controller.abort(), 10);
    expect(await verdict).toEqual({ status: 'unknown', sub_status: 'timeout_exceeded' });
  });

  it('records the dialogue, the hosts tried and the catch-all probe with trace on', async () => {
    const net = network({ '192.0.2.2': { rcpt: mailboxes({ alice: 250 }) } });
    const state = stateFor(net.open, 'alice', { options: { trace: true } });
    await smtpCheck.run(state);
    expect(state.transcript).toEqual([
      '* mx1.example.com 192.0.2.1:25',
      '* failed: failed_smtp_connection',
      '* mx2.example.com 192.0.2.2:25',
      'S: 220 fake ESMTP',
      'C: MAIL FROM:<verify@probe.test>',
      'S: 250 ok',
      'C: RCPT TO:<alice@example.com>',
      'S: 250 ok',
      '* catch-all probe of example.com at mx2.example.com 192.0.2.2:25, in a session of its own',
      'S: 220 fake ESMTP',
      'C: MAIL FROM:<verify@probe.test>',
      'S: 250 ok',
      `C: RCPT TO:<${PROBE}@example.com>`,
      'S: 550 5.1.1 user unknown',
      '* catch-all probe: refused',
    ]);
  });
});

describe('smtpCheck and provider profiles', () => {
  const at = (host: string): MailHost[] => [{ host, priority: 10, addresses: ['192.0.2.1'] }];
  const YAHOO = 'mta5.am0.yahoodns.net';

  it('reads a reply as the answering provider means it: Microsoft 365 edge block there, policy elsewhere', async () => {
    const edgeBlock = {
      rcpt: () => reply(550, '5.4.1 Recipient address rejected: Access denied'),
    };
    const m365 = stateFor(network({ '192.0.2.1': edgeBlock }).open, 'bob', {
      mailHosts: at('contoso-com.mail.protection.outlook.com'),
    });
    expect(await smtpCheck.run(m365)).toEqual({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(m365.reason).toContain(
      'answered RCPT TO with 550 5.4.1 Recipient address rejected: Access denied',
    );
    const elsewhere = stateFor(network({ '192.0.2.1': edgeBlock }).open, 'bob', {
      mailHosts: at('mx.example.com'),
    });
    expect(await smtpCheck.run(elsewhere)).toEqual({ status: 'unknown', sub_status: 'antispam_system' });
  });

  it("Microsoft 365's edge block refuses the catch-all probe: conclusive, cached, one probe per domain", async () => {
    const rcpt = (recipient: string) =>
      recipient.startsWith('alice@') || recipient.startsWith('carol@')
        ? reply(250, '2.1.5 Recipient OK')
        : reply(550, '5.4.1 Recipient address rejected: Access denied. AS(201806281)');
    const net = network({ '192.0.2.1': { rcpt } });
    const hosts = at('contoso-com.mail.protection.outlook.com');
    const first = stateFor(net.open, 'alice', { mailHosts: hosts });
    expect(await smtpCheck.run(first)).toEqual({ status: 'valid', sub_status: null });
    // A second address on the same prober: the refused probe is cached, so no second probe is sent.
    const second: CheckState = {
      ...first,
      address: address('carol'),
      reason: null,
    };
    expect(await smtpCheck.run(second)).toEqual({ status: 'valid', sub_status: null });
    const probes = net.hosts['192.0.2.1']!.sessions.flatMap((session) => session.commands).filter((command) =>
      command.startsWith(`RCPT TO:<${PROBE}@`),
    );
    expect(probes).toHaveLength(1);
  });

  it('an accept-all provider is never valid on a 250 alone (catch-all probe off)', async () => {
    const state = stateFor(network({ '192.0.2.1': {} }).open, 'alice', {
      mailHosts: at(YAHOO),
      options: { catchAll: false },
    });
    expect(await smtpCheck.run(state)).toEqual({ status: 'catch_all', sub_status: null });
    expect(state.accept_all).toBe(true);
    expect(state.reason).toBe(
      `${YAHOO} is Yahoo / AOL, which accepts every recipient at RCPT TO and bounces unknown ones later: its 250 does not show that the mailbox exists`,
    );
  });

  it('an accept-all provider stays catch_all when the probe is inconclusive', async () => {
    const rcpt = mailboxes({ alice: 250, [PROBE]: [450, '4.3.0 try later'] });
    const state = stateFor(network({ '192.0.2.1': { rcpt } }).open, 'alice', { mailHosts: at(YAHOO) });
    expect(await smtpCheck.run(state)).toEqual({ status: 'catch_all', sub_status: null });
    expect(state.accept_all).toBe(true);
  });

  it('an accept-all provider that refuses the random address is valid: its 250 is not alone', async () => {
    const state = stateFor(network({ '192.0.2.1': { rcpt: mailboxes({ alice: 250 }) } }).open, 'alice', {
      mailHosts: at(YAHOO),
    });
    expect(await smtpCheck.run(state)).toEqual({ status: 'valid', sub_status: null });
    expect(state.accept_all).toBe(false);
  });
});

describe('smtpCheck reason', () => {
  it('quotes the deciding reply exactly, and at most 300 characters of it', async () => {
    const text = '5.1.1 <bob@example.com>: Recipient address rejected: User unknown in virtual mailbox table';
    const state = stateFor(network({ '192.0.2.1': { rcpt: () => reply(550, text) } }).open, 'bob');
    expect(await smtpCheck.run(state)).toEqual({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(state.reason).toBe(`mx1.example.com [192.0.2.1] answered RCPT TO with 550 ${text}`);

    const long = `5.7.1 blocked ${'x'.repeat(1000)}`;
    const bounded = stateFor(network({ '192.0.2.1': { rcpt: () => reply(554, long) } }).open, 'bob');
    expect(await smtpCheck.run(bounded)).toEqual({ status: 'unknown', sub_status: 'antispam_system' });
    expect(bounded.reason).toBe(
      `mx1.example.com [192.0.2.1] answered RCPT TO with 554 ${long.slice(0, 300)}`,
    );
  });
});
