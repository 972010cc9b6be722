import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import { OptionsError } from '../../src/errors.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import { DEFAULT_KNOWN_TTL, ttlOf } from '../../src/known/ttl.js';
import type { KnownResults } from '../../src/known/types.js';
import type { VerifyOptions } from '../../src/options.js';
import { createVerifier } from '../../src/verifier.js';
import { FakeClock } from '../bulk/support.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let grey: SmtpServerHarness;

beforeAll(async () => {
  smtp = await startSmtpServer({
    host: '127.0.0.2',
    catchAll: true,
    mailboxes: { nobody: 'missing' },
  });
  grey = await startSmtpServer({ host: '127.0.0.3', port: smtp.port, greylist: true, catchAll: true });
  dns = await startDnsServer({
    'known.test': { mx: [{ priority: 10, exchange: 'mx.known.test' }] },
    'mx.known.test': { a: ['127.0.0.2'] },
    'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
    'mx.grey.test': { a: ['127.0.0.3'] },
  });
});

afterAll(async () => {
  await smtp?.close();
  await grey?.close();
  await dns?.close();
});

function options(known: KnownResults, extra: VerifyOptions = {}): VerifyOptions {
  return {
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    idleSessionMs: 0, // no session kept: a verification that asks opens one
    catchAll: false, // the servers accept every other address: no probe
    knownResults: known,
    ...extra,
  };
}

const asked = (server: SmtpServerHarness, address: string) =>
  server.rcpts().filter((rcpt) => rcpt.toLowerCase() === address).length;

describe('a verifier with known results', () => {
  it('answers the second verification of an address from what it kept: no session, no RCPT', async () => {
    const clock = new FakeClock(Date.now());
    const verifier = createVerifier(options(memoryKnownResults({ clock })));
    try {
      const first = await verifier.verify('nobody@known.test');
      expect(first).toMatchObject({ status: 'invalid', sub_status: 'mailbox_not_found' });
      expect(first.checked_at).toBe(new Date(clock.now()).toISOString());
      const sessions = smtp.connections();
      const rcpts = asked(smtp, 'nobody@known.test');
      clock.advance(60_000);
      const second = await verifier.verify('nobody@known.test');
      expect(smtp.connections()).toBe(sessions);
      expect(asked(smtp, 'nobody@known.test')).toBe(rcpts);
      expect(second).toEqual(first); // reason, mx_record and checked_at (of the first check) included
    } finally {
      await verifier.dispose();
    }
  });

  it('asks again with fresh: true, and keeps the new answer', async () => {
    const clock = new FakeClock(Date.now());
    const verifier = createVerifier(options(memoryKnownResults({ clock })));
    try {
      const first = await verifier.verify('fresh@known.test');
      clock.advance(1000);
      const refreshed = await verifier.verify('fresh@known.test', { fresh: true });
      expect(asked(smtp, 'fresh@known.test')).toBe(2);
      expect(refreshed.checked_at).toBe(new Date(clock.now()).toISOString());
      expect(refreshed.checked_at).not.toBe(first.checked_at);
      clock.advance(1000);
      const cached = await verifier.verify('fresh@known.test');
      expect(asked(smtp, 'fresh@known.test')).toBe(2);
      expect(cached.checked_at).toBe(refreshed.checked_at);
    } finally {
      await verifier.dispose();
    }
  });

  it('keeps each status for its own time: valid for days, greylisted (unknown) for minutes', async () => {
    const clock = new FakeClock(Date.now());
    const verifier = createVerifier(options(memoryKnownResults({ clock })));
    try {
      expect((await verifier.verify('ttl@known.test')).status).toBe('valid');
      expect(await verifier.verify('late@grey.test')).toMatchObject({
        status: 'unknown',
        sub_status: 'greylisted',
      });
      clock.advance(DEFAULT_KNOWN_TTL.unknown - 1);
      await verifier.verify('ttl@known.test');
      expect((await verifier.verify('late@grey.test')).sub_status).toBe('greylisted');
      expect(asked(grey, 'late@grey.test')).toBe(1);
      clock.advance(1); // the greylisted answer has expired; the valid one has days left
      expect((await verifier.verify('late@grey.test')).status).toBe('valid');
      expect(asked(grey, 'late@grey.test')).toBe(2);
      expect((await verifier.verify('ttl@known.test')).status).toBe('valid');
      expect(asked(smtp, 'ttl@known.test')).toBe(1);
      clock.advance(DEFAULT_KNOWN_TTL.valid);
      await verifier.verify('ttl@known.test');
      expect(asked(smtp, 'ttl@known.test')).toBe(2);
    } finally {
      await verifier.dispose();
    }
  });

  it('follows knownResultsTtlMs: 0 keeps nothing of that status', async () => {
    const verifier = createVerifier(options(memoryKnownResults(), { knownResultsTtlMs: { invalid: 0 } }));
    try {
      await verifier.verify('nobody@known.test', { knownResultsNamespace: 'ttl0' });
      const before = asked(smtp, 'nobody@known.test');
      await verifier.verify('nobody@known.test', { knownResultsNamespace: 'ttl0' });
      expect(asked(smtp, 'nobody@known.test')).toBe(before + 1);
    } finally {
      await verifier.dispose();
    }
  });

  it("never answers one namespace (tenant) with another's result", async () => {
    const verifier = createVerifier(options(memoryKnownResults()));
    try {
      await verifier.verify('shared@known.test', { knownResultsNamespace: 'tenant-a' });
      await verifier.verify('shared@known.test', { knownResultsNamespace: 'tenant-b' });
      await verifier.verify('shared@known.test'); // the default namespace is a third one
      expect(asked(smtp, 'shared@known.test')).toBe(3);
      await verifier.verify('shared@known.test', { knownResultsNamespace: 'tenant-a' });
      expect(asked(smtp, 'shared@known.test')).toBe(3);
    } finally {
      await verifier.dispose();
    }
  });

  it('takes a store that fails as knowing nothing: the mail server answers', async () => {
    const broken: KnownResults = {
      get: () => Promise.reject(new Error('store down')),
      set: () => Promise.reject(new Error('store down')),
    };
    const verifier = createVerifier(options(broken));
    try {
      expect((await verifier.verify('broken@known.test')).status).toBe('valid');
      expect((await verifier.verify('broken@known.test')).status).toBe('valid');
      expect(asked(smtp, 'broken@known.test')).toBe(2);
    } finally {
      await verifier.dispose();
    }
  });

  it('stamps checked_at on results that asked no mail server, and only with known results', async () => {
    const withKnown = createVerifier({ knownResults: memoryKnownResults(), dns: false });
    const without = createVerifier({ dns: false });
    try {
      const result = await withKnown.verify('not an address');
      expect(Date.parse(result.checked_at!)).toBeGreaterThan(Date.now() - 60_000);
      expect('checked_at' in (await without.verify('a@b.test'))).toBe(false);
    } finally {
      await withKnown.dispose();
      await without.dispose();
    }
  });

  it('refuses bad options, naming each', async () => {
    const verifier = createVerifier({ knownResults: memoryKnownResults(), dns: false });
    try {
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ fresh: 'maybe' }, /^fresh must be a boolean/],
        [{ fresh: 'trüe' }, /^fresh must be a boolean/],
        [{ knownResultsNamespace: 'a\u0000b' }, /^knownResultsNamespace must be a string/],
        [{ knownResultsNamespace: 'lone \ud800 half' }, /^knownResultsNamespace must be a string/],
        [{ knownResultsNamespace: 'x'.repeat(1025) }, /^knownResultsNamespace/],
        [{ knownResultsNamespace: 42 }, /^knownResultsNamespace/],
        [{ knownResults: memoryKnownResults() }, /^knownResults can only be set on createVerifier/],
        [{ knownResultsTtlMs: { valid: 1 } }, /^knownResultsTtlMs can only be set on createVerifier/],
      ];
      for (const [overrides, message] of bad) {
        await expect(verifier.verify('a@b.test', overrides as never)).rejects.toThrow(message);
      }
    } finally {
      await verifier.dispose();
    }
    const badDefaults: [Record<string, unknown>, RegExp][] = [
      [{ knownResults: {} }, /^knownResults must have a get\(\) method/],
      [{ knownResultsTtlMs: { valid: -1 } }, /^knownResultsTtlMs.valid must be an integer 0-7776000000/],
      [{ knownResultsTtlMs: { unknown: 90 * 86_400_000 + 1 } }, /^knownResultsTtlMs.unknown/],
      [{ knownResultsTtlMs: { valid: 1.5 } }, /^knownResultsTtlMs.valid/],
      [{ knownResultsTtlMs: { do_not_mail: 1 } }, /^knownResultsTtlMs.do_not_mail is not a status/],
      [{ knownResultsTtlMs: 5 }, /^knownResultsTtlMs must be an object/],
      [{ fresh: 1 }, /^fresh must be a boolean/],
    ];
    for (const [defaults, message] of badDefaults) {
      expect(() => createVerifier(defaults as never)).toThrow(OptionsError);
      expect(() => createVerifier(defaults as never)).toThrow(message);
    }
  });
});

describe('ttlOf', () => {
  const verdict = { accept_all: false, mx_record: null, smtp_provider: null, reason: null };
  it.each([
    ['valid', null, DEFAULT_KNOWN_TTL.valid],
    ['invalid', 'mailbox_not_found', DEFAULT_KNOWN_TTL.invalid],
    ['catch_all', null, DEFAULT_KNOWN_TTL.catch_all],
    ['unknown', 'greylisted', DEFAULT_KNOWN_TTL.unknown],
    ['unknown', 'failed_smtp_connection', DEFAULT_KNOWN_TTL.unknown],
    ['unknown', 'timeout_exceeded', 0], // our own budget ran out: says nothing of the address
    ['unknown', 'exception_occurred', 0],
    ['unknown', 'smtp_not_checked', 0],
    ['do_not_mail', 'disposable', 0],
  ] as const)('%s/%s is kept %i ms', (status, sub_status, ms) => {
    expect(ttlOf({ ...verdict, status, sub_status }, DEFAULT_KNOWN_TTL)).toBe(ms);
  });
});
