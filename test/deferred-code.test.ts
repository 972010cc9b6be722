/**
 * Code imported on first use (issue 30, cold start): the prober of a runtime, Node's resolver and transport. They
 * behave as the code they stand for once it is loaded, and hold nothing open when closed before.
 */
import { describe, expect, it } from 'vitest';
import { deferredNodeResolver, nodeDefaults } from '../src/node-runtime.js';
import { resolveOptions } from '../src/options.js';
import { createRuntime } from '../src/runtime.js';
import { smtpProbing } from '../src/smtp/probing.js';
import { happyReply, scriptedTransport } from '../src/testing/scripted-channel.js';

const TARGET = { host: '192.0.2.10', port: 25, hostname: 'mx.shop.test' };
const SETTINGS = { heloHost: 'probe.example', tls: 'never' as const, connectTimeoutMs: 1000 };

describe('the deferred prober', () => {
  it('counts nothing before its first probe, then probes and counts as the prober does', async () => {
    const transport = scriptedTransport(() => ({
      respond: (command) => (command.startsWith('RCPT') ? '550 5.1.1 no such user' : happyReply(command)),
    }));
    const runtime = createRuntime(
      resolveOptions({ transport, heloHost: 'probe.example' }),
      nodeDefaults,
      smtpProbing,
    );
    try {
      const { prober } = runtime;
      expect(prober.heloHost).toBe('probe.example');
      expect(prober.stats()).toMatchObject({ opened: 0, rcpts: 0, catchAllProbes: 0 });
      const request = {
        sender: 'probe@example.net',
        recipient: 'nobody@shop.test',
        smtpUtf8: false,
        settings: SETTINGS,
      };
      const outcome = await prober.rcpt(TARGET, request, { deadline: Date.now() + 5000 });
      expect(outcome).toMatchObject({ kind: 'reply', stage: 'rcpt', reply: { code: 550 } });
      await expect(
        prober.catchAll(
          'shop.test',
          TARGET,
          { sender: 'probe@example.net', settings: SETTINGS },
          { deadline: Date.now() + 5000 },
        ),
      ).resolves.toBe('refused');
      expect(prober.stats()).toMatchObject({ opened: 2, rcpts: 2, catchAllProbes: 1 });
    } finally {
      await runtime.close();
    }
  });

  it('refuses a probe after it was closed before its first one, and makes no pool for it', async () => {
    const transport = scriptedTransport(() => ({}));
    const runtime = createRuntime(
      resolveOptions({ transport, heloHost: 'probe.example' }),
      nodeDefaults,
      smtpProbing,
    );
    const { prober } = runtime;
    await runtime.close();
    const request = {
      sender: 'probe@example.net',
      recipient: 'a@shop.test',
      smtpUtf8: false,
      settings: SETTINGS,
    };
    await expect(prober.rcpt(TARGET, request, { deadline: Date.now() + 1000 })).rejects.toMatchObject({
      code: 'disposed',
    });
    expect(prober.stats().opened).toBe(0);
  });
});

describe('the deferred Node resolver', () => {
  it('peeks at nothing and closes cleanly before its first lookup', () => {
    const resolver = deferredNodeResolver({ servers: ['127.0.0.1:53'] });
    expect(resolver.peek?.('mx', 'example.com')).toBeUndefined();
    resolver.close?.();
    resolver.close?.();
  });

  it('has the counters a verifier observer reads (the DNS series of the metrics), all 0 before its code loads', () => {
    const resolver = deferredNodeResolver({ servers: ['127.0.0.1:53'] });
    expect(resolver.stats()).toEqual({ hits: 0, misses: 0, coalesced: 0, size: 0 });
    resolver.close?.();
  });

  it('rejects the first lookup with the OptionsError of bad options, not at construction', async () => {
    const resolver = deferredNodeResolver({ servers: ['not a server'] });
    await expect(resolver.mx('example.com')).rejects.toMatchObject({ name: 'OptionsError' });
    resolver.close?.();
  });
});
