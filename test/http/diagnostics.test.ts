import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OptionsError } from '../../src/errors.js';
import { createHandler } from '../../src/http/handler.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { type RawServerHarness, startRawServer } from '../support/raw-server.js';
import { fakeVerifier } from './support.js';

let mx: RawServerHarness;

beforeAll(async () => {
  mx = await startRawServer({
    host: '127.0.0.2',
    script: async (peer) => {
      await peer.write('220 mx.probe.test ESMTP\r\n');
      for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
        if (/^EHLO /i.test(line)) await peer.write('250-mx.probe.test Hello [127.0.0.1]\r\n250 8BITMIME\r\n');
        else if (/^QUIT/i.test(line)) return void (await peer.write('221 bye\r\n'));
        else await peer.write('502 no\r\n');
      }
    },
  });
});

afterAll(async () => {
  await mx.close();
});

const resolver = staticResolver({
  'probe.test': { mx: [{ priority: 10, exchange: 'mx.probe.test' }] },
  'mx.probe.test': { a: ['127.0.0.2'] },
  '1.0.0.127.in-addr.arpa': { ptr: ['mail.sender.test'] },
  'mail.sender.test': { a: ['127.0.0.1'] },
  'sender.test': { mx: [{ priority: 10, exchange: 'mail.sender.test' }], txt: ['v=spf1 ip4:127.0.0.1 -all'] },
});

function request(key: string | null = 'k1'): Request {
  return new Request('http://localhost/v1/diagnostics', {
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });
}

function handlerWith(diagnostics: unknown, clock?: () => number) {
  return createHandler({
    apiKeys: ['k1'],
    verifier: fakeVerifier(),
    console: false,
    verifierOptions: {
      resolver,
      smtpPort: mx.port,
      heloHost: 'mail.sender.test',
      mailFrom: 'verify@sender.test',
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
    },
    diagnostics: diagnostics as boolean,
    ...(clock === undefined ? {} : { clock }),
  });
}

describe('GET /v1/diagnostics', () => {
  it('is off by default: 404 with a key, 401 without', async () => {
    const handler = createHandler({ apiKeys: ['k1'], verifier: fakeVerifier(), console: false });
    const off = await handler(request());
    expect(off.status).toBe(404);
    expect((await off.json()).error.code).toBe('not_found');
    expect((await handler(request(null))).status).toBe(401);
    expect(mx.connections()).toBe(0);
    await handler.close();
  });

  it("when on, answers the report of diagnose() with the verifier's settings, reused for cacheMs", async () => {
    let now = 1_000_000;
    const handler = handlerWith(
      { options: { probeDomain: 'probe.test', blocklists: [], timeoutMs: 5_000 }, cacheMs: 60_000 },
      () => now,
    );
    const before = mx.connections();
    const [first, second] = await Promise.all([handler(request()), handler(request())]);
    expect(first.status).toBe(200);
    const report = await first.json();
    expect(await second.json()).toEqual(report);
    expect(report.probe_domain).toBe('probe.test');
    expect(report.helo_host).toBe('mail.sender.test');
    expect(report.checks.find((check: { name: string }) => check.name === 'port25').status).toBe('pass');
    expect(report.checks.find((check: { name: string }) => check.name === 'spf').status).toBe('pass');
    expect(mx.connections() - before).toBe(1);
    now += 30_000;
    await (await handler(request())).json();
    expect(mx.connections() - before).toBe(1);
    now += 31_000;
    await (await handler(request())).json();
    expect(mx.connections() - before).toBe(2);
    expect((await handler(request(null))).status).toBe(401);
    await handler.close();
  });

  it('refuses a malformed diagnostics option when the handler is made', () => {
    expect(() => handlerWith('yes')).toThrow(OptionsError);
    expect(() => handlerWith({ cacheMs: -1 })).toThrow(/diagnostics.cacheMs/);
  });
});
