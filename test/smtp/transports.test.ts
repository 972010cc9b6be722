import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSmtpError, OptionsError } from '../../src/errors.js';
import { parseProxyUrl, socksTransport } from '../../src/smtp/socks.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import { transportContract } from '../../src/testing/transport-contract.js';
import { type SocksServerHarness, startSocksServer } from '../support/socks-server.js';

const tls = {
  key: readFileSync(new URL('../../fixtures/tls/key.pem', import.meta.url), 'utf8'),
  cert: readFileSync(new URL('../../fixtures/tls/cert.pem', import.meta.url), 'utf8'),
  servername: 'mx.test.local',
};

let open: SocksServerHarness;
let authed: SocksServerHarness;
beforeAll(async () => {
  open = await startSocksServer();
  authed = await startSocksServer({ host: '127.0.0.2', auth: { user: 'probe user', password: 'p@ss:word' } });
});
afterAll(async () => {
  await open.close();
  await authed.close();
});

transportContract('tcpTransport', () => tcpTransport(), { tls });
transportContract('socksTransport without authentication', () => socksTransport({ proxy: open.url }), {
  tls,
});
transportContract('socksTransport with user and password', () => socksTransport({ proxy: authed.url }), {
  tls,
});

const connectOptions = { timeoutMs: 2_000, maxLineLength: 512 };

async function kindOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'no failure';
  } catch (error) {
    return isSmtpError(error) ? error.kind : String(error);
  }
}

describe('tcpTransport', () => {
  it('refuses a host name: mail hosts must arrive resolved and guarded', async () => {
    expect(await kindOf(tcpTransport().connect({ host: 'localhost', port: 25 }, connectOptions))).toBe(
      'connection',
    );
  });

  it('validates its options', () => {
    expect(() => tcpTransport({ localAddress: 'not-an-ip' })).toThrow(OptionsError);
    expect(() => tcpTransport({ verifyTls: 'yes' as unknown as boolean })).toThrow(/verifyTls/);
  });

  it('connects from the given local address', async () => {
    const server = createServer((socket) => socket.end(`220 ${socket.remoteAddress}\r\n`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const channel = await tcpTransport({ localAddress: '127.0.0.9' }).connect(
      { host: '127.0.0.1', port },
      connectOptions,
    );
    expect(await channel.readLine(2_000)).toBe('220 127.0.0.9');
    channel.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('socksTransport', () => {
  it('sends the IP address to the proxy, never a name', async () => {
    const server = createServer((socket) => socket.end('220 hi\r\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.3', resolve));
    const { port } = server.address() as { port: number };
    const channel = await socksTransport({ proxy: open.url }).connect(
      { host: '127.0.0.3', port, hostname: 'mx.example.com' },
      connectOptions,
    );
    expect(await channel.readLine(2_000)).toBe('220 hi');
    channel.close();
    expect(open.destinations()).toContain(`127.0.0.3:${port}`);
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('fails with kind connection on a wrong password, without leaking it', async () => {
    const url = authed.url.replace(/:[^:@]*@/, ':wrong-secret@');
    try {
      await socksTransport({ proxy: url }).connect({ host: '127.0.0.1', port: 25 }, connectOptions);
      expect.unreachable();
    } catch (error) {
      expect(isSmtpError(error) && error.kind).toBe('connection');
      expect(String((error as Error).message)).not.toContain('wrong-secret');
    }
    expect(authed.failedLogins()).toBeGreaterThan(0);
  });

  it('fails with kind connection when the proxy is down', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const transport = socksTransport({ proxy: `socks5://127.0.0.1:${port}` });
    expect(await kindOf(transport.connect({ host: '127.0.0.1', port: 25 }, connectOptions))).toBe(
      'connection',
    );
  });

  it('fails with kind connection when the proxy refuses the destination', async () => {
    const transport = socksTransport({ proxy: open.url });
    // The test proxy only forwards to loopback: 192.0.2.1 (TEST-NET-1) gets "not allowed" and is never contacted.
    expect(await kindOf(transport.connect({ host: '192.0.2.1', port: 25 }, connectOptions))).toBe(
      'connection',
    );
  });

  it('parses proxy URLs', () => {
    expect(parseProxyUrl('socks5://10.0.0.5')).toEqual({ host: '10.0.0.5', port: 1080, type: 5 });
    expect(parseProxyUrl('socks5h://a%40b:p%3Ass@relay.example.net:9050')).toEqual({
      host: 'relay.example.net',
      port: 9050,
      type: 5,
      userId: 'a@b',
      password: 'p:ss',
    });
    expect(parseProxyUrl('socks4://ident@[::1]:1081')).toEqual({
      host: '::1',
      port: 1081,
      type: 4,
      userId: 'ident',
    });
  });

  it.each([
    ['', /SOCKS URL/],
    ['not a url', /SOCKS URL/],
    ['http://proxy:8080', /socks5:/],
    ['socks5://:1080', /host|SOCKS URL/],
    ['socks5://user@host:1080', /both a user name and a password/],
    ['socks4://u:p@host:1080', /no password/],
    ['socks5://host:1080/path', /path/],
    [`socks5://${'u'.repeat(300)}:p@host:1080`, /at most 255 bytes/],
    ['socks5://u:%E0%A4%A@host:1080', /percent-encoded/],
    ['socks5://host:99999', /SOCKS URL/],
  ])('rejects the proxy URL %j', (proxy, message) => {
    expect(() => socksTransport({ proxy })).toThrow(OptionsError);
    expect(() => socksTransport({ proxy })).toThrow(message);
  });

  it('never repeats credentials in option errors', () => {
    expect(() => parseProxyUrl('socks4://secret-id:secret-pass@host:1080')).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('secret') }),
    );
  });

  it('validates timeoutMs', () => {
    expect(() => socksTransport({ proxy: 'socks5://h:1', timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});
