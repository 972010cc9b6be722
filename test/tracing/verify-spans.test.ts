/**
 * The spans of one verification (docs/operations.md, "Traces"), recorded by a registered in-memory SDK: their tree,
 * their attributes, that none carries the address, and that nothing is started when no SDK is registered or the
 * sampler drops the trace.
 */
import { AlwaysOffSampler, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { happyReply, scriptedTransport } from '../../src/testing/scripted-channel.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { tracingApi } from '../../src/tracing.js';
import { createVerifierWith } from '../../src/verifier-with.js';
import { registerTestSdk, spanTrees, type TestSdk, undocumented } from '../support/otel.js';

const PLATFORM = {
  resolver: () => {
    throw new Error('the platform resolver was used');
  },
  transport: () => {
    throw new Error('the platform transport was used');
  },
  heloHost: () => 'probe.example.net',
};

/** Jane's mailbox exists at shop.test; every other local part (the catch-all probe's too) is refused. */
function shopVerifier(catchAll = true) {
  const resolver = staticResolver({
    'shop.test': { mx: [{ priority: 10, exchange: 'mx.shop.test' }] },
    'mx.shop.test': { a: ['192.0.2.10'] },
  });
  const transport = scriptedTransport(() => ({
    respond: (command) =>
      command.startsWith('RCPT')
        ? command.includes('<jane@')
          ? '250 2.1.5 ok'
          : '550 5.1.1 no such user'
        : happyReply(command),
  }));
  return createVerifierWith(PLATFORM, {
    resolver,
    transport,
    catchAll,
    allowTlds: ['test'],
    allowAddresses: ['192.0.2.0/24'],
    mailFrom: 'probe@example.net',
  });
}

function named(spans: readonly ReadableSpan[], name: string): ReadableSpan[] {
  return spans.filter((span) => span.name === name);
}

let sdk: TestSdk | undefined;
afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
});

describe('verification spans', () => {
  it('records the tree of one verify(): checks, the SMTP attempt with its session and commands, the catch-all probe', async () => {
    sdk = registerTestSdk();
    const verifier = shopVerifier();
    try {
      const result = await verifier.verify('jane@shop.test');
      expect(result.status).toBe('valid');
    } finally {
      await verifier.dispose();
    }
    const spans = sdk.spans();
    expect(spanTrees(spans)).toEqual([
      {
        name: 'mailvet.verify',
        children: [
          { name: 'mailvet.check.syntax', children: [] },
          { name: 'mailvet.check.typo', children: [] },
          { name: 'mailvet.check.lists', children: [] },
          { name: 'mailvet.check.mx', children: [] },
          {
            name: 'mailvet.check.smtp',
            children: [
              {
                name: 'mailvet.smtp.rcpt',
                children: [
                  { name: 'mailvet.smtp.session', children: [] },
                  { name: 'mailvet.smtp.commands', children: [] },
                ],
              },
              {
                name: 'mailvet.smtp.catch_all',
                children: [
                  { name: 'mailvet.smtp.session', children: [] },
                  { name: 'mailvet.smtp.commands', children: [] },
                ],
              },
            ],
          },
        ],
      },
    ]);
    const [verify] = named(spans, 'mailvet.verify');
    expect(verify?.attributes).toMatchObject({ 'mailvet.status': 'valid' });
    expect(verify?.instrumentationScope.name).toBe('mailvet');
    expect(verify?.attributes['mailvet.sub_status']).toBeUndefined();
    const [rcpt] = named(spans, 'mailvet.smtp.rcpt');
    expect(rcpt?.attributes).toEqual({
      'server.address': 'mx.shop.test',
      'server.port': 25,
      'network.peer.address': '192.0.2.10',
      'network.peer.port': 25,
      'network.transport': 'tcp',
      'mailvet.smtp.reused': false,
      'mailvet.smtp.reply.code': 250,
      'mailvet.smtp.stage': 'rcpt',
    });
    const commands = named(spans, 'mailvet.smtp.commands');
    expect(commands.map((span) => span.attributes['mailvet.smtp.pipelined'])).toEqual([true, true]);
    expect(commands.map((span) => span.attributes['mailvet.smtp.mail_from'])).toEqual([true, true]);
    const [catchAll] = named(spans, 'mailvet.smtp.catch_all');
    expect(catchAll?.attributes['mailvet.catch_all.result']).toBe('refused');
    const [smtpCheck] = named(spans, 'mailvet.check.smtp');
    expect(smtpCheck?.attributes).toEqual({ 'mailvet.check.name': 'smtp', 'mailvet.check.final': true });
    expect(undocumented(spans)).toEqual([]);
  });

  it("puts no address, local part or address domain in any span, nor in a refused address's", async () => {
    sdk = registerTestSdk();
    const verifier = shopVerifier();
    try {
      expect((await verifier.verify('nobody@shop.test')).sub_status).toBe('mailbox_not_found');
      expect((await verifier.verify('jane@shop.test')).status).toBe('valid');
      expect((await verifier.verify('a b@@shop.test')).sub_status).toBe('failed_syntax_check');
    } finally {
      await verifier.dispose();
    }
    const values = sdk.spans().flatMap((span) => [span.name, ...Object.values(span.attributes).map(String)]);
    expect(values.length).toBeGreaterThan(40);
    for (const value of values) {
      expect(value).not.toMatch(/nobody|jane|a b|@/);
      expect(value).not.toBe('shop.test');
    }
    const refused = sdk.spans().find((span) => span.attributes['mailvet.smtp.reply.code'] === 550);
    expect(refused?.name).toBe('mailvet.smtp.rcpt');
    const syntax = named(sdk.spans(), 'mailvet.check.syntax').at(-1);
    expect(undocumented(sdk.spans())).toEqual([]);
    expect(syntax?.attributes).toMatchObject({
      'mailvet.check.final': true,
      'mailvet.sub_status': 'failed_syntax_check',
    });
  });

  it('reuses the session for a second address: no session span under its attempt', async () => {
    sdk = registerTestSdk();
    const verifier = shopVerifier(false);
    try {
      await verifier.verify('jane@shop.test');
      sdk.reset();
      await verifier.verify('nobody@shop.test');
    } finally {
      await verifier.dispose();
    }
    const [rcpt] = named(sdk.spans(), 'mailvet.smtp.rcpt');
    expect(rcpt?.attributes['mailvet.smtp.reused']).toBe(true);
    expect(named(sdk.spans(), 'mailvet.smtp.session')).toEqual([]);
    expect(named(sdk.spans(), 'mailvet.smtp.commands')).toHaveLength(1);
  });

  it('marks a check that throws as failed with its error type, never its message', async () => {
    sdk = registerTestSdk();
    const failing = {
      name: 'boom',
      run: () => {
        throw Object.assign(new Error('jane@shop.test exploded'), { code: 'custom_failure' });
      },
    };
    const transport = scriptedTransport(() => ({}));
    const verifier = createVerifierWith(PLATFORM, { checks: [failing], dns: false, transport });
    try {
      expect((await verifier.verify('jane@shop.test')).sub_status).toBe('exception_occurred');
    } finally {
      await verifier.dispose();
    }
    const [boom] = named(sdk.spans(), 'mailvet.check.boom');
    expect(boom?.attributes['error.type']).toBe('custom_failure');
    expect(boom?.status).toEqual({ code: 2, message: 'custom_failure' });
  });

  it('starts nothing when no SDK is registered, and nothing below a verification the sampler drops', async () => {
    expect(tracingApi()).toBeUndefined();
    sdk = registerTestSdk(new AlwaysOffSampler());
    const verifier = shopVerifier();
    try {
      expect((await verifier.verify('jane@shop.test')).status).toBe('valid');
    } finally {
      await verifier.dispose();
    }
    expect(sdk.spans()).toEqual([]);
  });
});
