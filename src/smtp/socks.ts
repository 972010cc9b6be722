/**
 * A transport through a SOCKS proxy (the `socks` package): port 25 is blocked on most clouds, so verification
 * often has to go out through a relay that may open it. The proxy receives the mail server's IP address
 * (already resolved and guarded), never a host name. The `socks` package and the socket code are loaded on the
 * first connect, so a process that never connects (most `mailvet verify` runs) does not pay for loading them.
 * @module
 */
import type { SocksProxy } from 'socks';
import { watchOptionalAbort } from '../abort-watch.js';
import { OptionsError, SmtpError } from '../errors.js';
import type { Transport } from './types.js';

/** Options of {@link socksTransport}. */
export interface SocksTransportOptions {
  /**
   * The proxy, as a URL: `socks5://host:port`, `socks5://user:pass@host:port` (user name and password
   * percent-encoded), `socks5h://...` (same as socks5 here), `socks4://userid@host:port` or `socks4a://...`.
   * The port defaults to 1080.
   */
  readonly proxy: string;
  /** Longest SOCKS negotiation (after the TCP connect to the proxy), in milliseconds; the connect budget still applies. @default 10000 */
  readonly timeoutMs?: number;
  /** Verify the server's certificate on STARTTLS. @default false (see docs/smtp.md) */
  readonly verifyTls?: boolean;
}

/** A parsed proxy URL. */
export interface SocksProxyConfig {
  readonly host: string;
  readonly port: number;
  readonly type: 4 | 5;
  readonly userId?: string;
  readonly password?: string;
}

const TYPES: Readonly<Record<string, 4 | 5>> = { 'socks4:': 4, 'socks4a:': 4, 'socks5:': 5, 'socks5h:': 5 };
const MAX_CREDENTIAL_BYTES = 255;

function credential(value: string, name: string): string {
  let decoded: string;
  try {
    decoded = decodeURIComponent(value);
  } catch {
    throw new OptionsError('proxy', `has a badly percent-encoded ${name}`);
  }
  if (new TextEncoder().encode(decoded).byteLength > MAX_CREDENTIAL_BYTES) {
    throw new OptionsError('proxy', `${name} must be at most ${MAX_CREDENTIAL_BYTES} bytes`);
  }
  return decoded;
}

/**
 * Parses and checks a proxy URL. Throws `OptionsError` (option `proxy`) naming the problem; the message never
 * repeats the credentials.
 * @example
 * parseProxyUrl('socks5://alice:s3cret@10.0.0.5:1080'); // { host: '10.0.0.5', port: 1080, type: 5, userId: 'alice', password: 's3cret' }
 */
export function parseProxyUrl(proxy: unknown): SocksProxyConfig {
  if (typeof proxy !== 'string' || proxy.length === 0 || proxy.length > 2048) {
    throw new OptionsError('proxy', 'must be a SOCKS URL such as socks5://host:1080');
  }
  let url: URL;
  try {
    url = new URL(proxy);
  } catch {
    throw new OptionsError('proxy', 'must be a SOCKS URL such as socks5://host:1080');
  }
  const type = TYPES[url.protocol];
  if (type === undefined) throw new OptionsError('proxy', 'must use socks5:, socks5h:, socks4: or socks4a:');
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (host === '') throw new OptionsError('proxy', 'must name the proxy host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw new OptionsError('proxy', 'must not have a path, query or fragment');
  }
  const port = url.port === '' ? 1080 : Number(url.port);
  const userId = url.username === '' ? undefined : credential(url.username, 'user name');
  const password = url.password === '' ? undefined : credential(url.password, 'password');
  if (type === 4 && password !== undefined)
    throw new OptionsError('proxy', 'SOCKS4 takes a user id but no password');
  if (type === 5 && (userId === undefined) !== (password === undefined)) {
    throw new OptionsError('proxy', 'SOCKS5 needs both a user name and a password, or neither');
  }
  return {
    host,
    port,
    type,
    ...(userId === undefined ? {} : { userId }),
    ...(password === undefined ? {} : { password }),
  };
}

/**
 * Reaches mail servers through a SOCKS4/5 proxy.
 * @example
 * const verifier = createVerifier({ transport: socksTransport({ proxy: 'socks5://user:pass@relay.example.net:1080' }) });
 */
export function socksTransport(options: SocksTransportOptions): Transport {
  if (typeof options !== 'object' || options === null) throw new OptionsError('proxy', 'must be given');
  const proxy = parseProxyUrl(options.proxy);
  const negotiationMs = options.timeoutMs ?? 10_000;
  if (!Number.isInteger(negotiationMs) || negotiationMs < 1 || negotiationMs > 600_000) {
    throw new OptionsError('timeoutMs', 'must be an integer 1-600000');
  }
  const verifyTls = options.verifyTls ?? false;
  if (typeof verifyTls !== 'boolean') throw new OptionsError('verifyTls', 'must be a boolean');
  const via = `SOCKS proxy ${proxy.host}:${proxy.port}`;
  const socksProxy: SocksProxy = {
    host: proxy.host,
    port: proxy.port,
    type: proxy.type,
    ...(proxy.userId === undefined ? {} : { userId: proxy.userId }),
    ...(proxy.password === undefined ? {} : { password: proxy.password }),
  };

  return {
    async connect(target, connectOptions) {
      const started = Date.now();
      const { signal } = connectOptions;
      const [{ connectSocket }, { socketChannel }] = await Promise.all([
        import('./connect.js'),
        import('./line-channel.js'),
      ]);
      const socket = await connectSocket(
        { host: proxy.host, port: proxy.port },
        { timeoutMs: connectOptions.timeoutMs, signal, allowHostname: true },
      ).catch((error: SmtpError) => {
        throw error.kind === 'aborted'
          ? error
          : new SmtpError('connection', `cannot reach the ${via}: ${error.message}`, { cause: error });
      });
      const remaining = Math.max(
        1,
        Math.min(negotiationMs, connectOptions.timeoutMs - (Date.now() - started)),
      );
      const unwatch = watchOptionalAbort(signal, () => socket.destroy());
      try {
        const { SocksClient } = await import('socks');
        const { socket: tunnel } = await SocksClient.createConnection({
          proxy: socksProxy,
          command: 'connect',
          destination: { host: target.host, port: target.port },
          timeout: remaining,
          existing_socket: socket,
        });
        return socketChannel(tunnel, {
          maxLineLength: connectOptions.maxLineLength,
          verifyTls,
          ...(signal === undefined ? {} : { signal }),
        });
      } catch (error) {
        socket.destroy();
        if (signal?.aborted) throw new SmtpError('aborted', `connecting through the ${via} was aborted`);
        const reason = error instanceof Error ? error.message : String(error);
        throw new SmtpError(
          'connection',
          `cannot connect to ${target.host}:${target.port} through the ${via}: ${reason}`,
          {
            cause: error,
          },
        );
      } finally {
        unwatch();
      }
    },
  };
}
