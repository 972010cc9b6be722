/**
 * The flags every verifying command shares, their `MAILVET_*` environment twins, and the verifier options they
 * make. Flags win over the environment; a repeatable flag given once replaces the whole environment list.
 * @module
 */
import { isIP } from 'node:net';
import { cachedResolver } from '../dns/cached.js';
import { nodeResolver } from '../dns/node.js';
import type { Resolver } from '../dns/types.js';
import { OptionsError } from '../errors.js';
import { VERIFY_FIELDS } from '../option-fields.js';
import { DEFAULTS, type VerifyOptions } from '../options.js';
import { parseProxyUrl, socksTransport } from '../smtp/socks.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { quote, usageError } from './io.js';

/** Flags shared by `verify` and `bulk`. */
export const VERIFY_FLAGS: readonly FlagSpec[] = [
  {
    name: 'timeout',
    type: 'string',
    value: '<s>',
    description: 'budget of one verification, in seconds (default 10)',
  },
  { name: 'dns', type: 'string', value: '<ip[:port]>', multiple: true, description: 'DNS server to ask' },
  {
    name: 'smtp-port',
    type: 'string',
    value: '<port>',
    description: 'SMTP port of mail servers (default 25)',
  },
  { name: 'helo', type: 'string', value: '<host>', description: 'host name sent in EHLO' },
  { name: 'from', type: 'string', value: '<address>', description: 'envelope sender for MAIL FROM' },
  {
    name: 'proxy',
    type: 'string',
    value: '<socks5://host:port>',
    description: 'reach mail servers through a SOCKS proxy',
  },
  {
    name: 'allow-address',
    type: 'string',
    value: '<cidr>',
    multiple: true,
    description: 'let the SSRF guard through this non-public range',
  },
  {
    name: 'allow-tld',
    type: 'string',
    value: '<tld>',
    multiple: true,
    description: 'accept this special-use TLD',
  },
  { name: 'no-smtp', type: 'boolean', description: 'skip the SMTP probe' },
  { name: 'no-dns', type: 'boolean', description: 'skip DNS and SMTP: offline checks only' },
  {
    name: 'concurrency',
    type: 'string',
    value: '<n>',
    description: `most simultaneous SMTP sessions (default ${DEFAULTS.concurrency})`,
  },
  { name: 'trace', type: 'boolean', description: 'record the SMTP dialogue' },
];

/** The settings read from flags and environment, validated, before any seam is built. */
export interface CliSettings {
  readonly timeoutMs: number | undefined;
  /** DNS servers in node:dns form (`1.2.3.4`, `1.2.3.4:53`, `[::1]:53`). Empty: the system's. */
  readonly dnsServers: readonly string[];
  readonly smtpPort: number | undefined;
  readonly heloHost: string | undefined;
  readonly mailFrom: string | undefined;
  /** SOCKS proxy URL. */
  readonly proxy: string | undefined;
  readonly allowAddresses: readonly string[];
  readonly allowTlds: readonly string[];
  readonly smtp: boolean;
  readonly dns: boolean;
  readonly concurrency: number;
  readonly trace: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** One value with the name of where it came from, for error messages. */
export interface Sourced<T> {
  readonly label: string;
  readonly value: T;
}

/** The value of a single-valued flag, else of its variable (empty counts as unset), with where it came from. */
export function single(
  args: ParsedArgs,
  env: Env,
  flag: string,
  variable: string,
): Sourced<string> | undefined {
  const fromFlag = args.string(flag);
  if (fromFlag !== undefined) return { label: `--${flag}`, value: fromFlag };
  const fromEnv = env[variable];
  if (fromEnv === undefined || fromEnv === '') return undefined;
  return { label: variable, value: fromEnv };
}

/** The values of a repeatable flag, else of its comma-separated variable, with where they came from. */
export function many(args: ParsedArgs, env: Env, flag: string, variable: string): Sourced<readonly string[]> {
  const fromFlags = args.list(flag);
  if (fromFlags.length > 0) return { label: `--${flag}`, value: fromFlags };
  const entries = (env[variable] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return { label: variable, value: entries };
}

/** A boolean flag, else its variable (1/true/yes/on or 0/false/no/off); a usage error for anything else. */
export function switched(args: ParsedArgs, env: Env, flag: string, variable: string): boolean {
  if (args.flag(flag)) return true;
  const raw = env[variable];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(value)) return true;
  if (['', '0', 'false', 'no', 'off'].includes(value)) return false;
  throw usageError(`${variable} must be 1/true/yes or 0/false/no, got ${quote(raw)}`);
}

/** Reads an integer flag or variable within bounds. */
export function integer(source: Sourced<string>, min: number, max: number): number {
  const value = Number(source.value);
  if (!/^\d{1,9}$/.test(source.value.trim()) || value < min || value > max) {
    throw usageError(`${source.label} must be an integer ${min}-${max}, got ${quote(source.value)}`);
  }
  return value;
}

/** Longest allowed `--timeout`, in seconds. */
const MAX_TIMEOUT_S = 600;

function seconds(source: Sourced<string>): number {
  const value = Number(source.value);
  if (!/^\d{1,6}(\.\d{1,3})?$/.test(source.value.trim()) || value <= 0 || value > MAX_TIMEOUT_S) {
    throw usageError(
      `${source.label} must be a number of seconds above 0 and at most ${MAX_TIMEOUT_S}, got ${quote(source.value)}`,
    );
  }
  return Math.max(1, Math.round(value * 1000));
}

/** Parses `ip`, `ip:port`, `[ipv6]` or `[ipv6]:port` into node:dns server form. */
export function dnsServer(label: string, raw: string): string {
  const value = raw.trim();
  let host = value;
  let port: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1] ?? '';
    port = bracketed[2];
  } else if (isIP(value) === 0 && value.includes(':') && value.indexOf(':') === value.lastIndexOf(':')) {
    [host = '', port] = value.split(':');
  }
  const family = isIP(host);
  const portNumber = port === undefined ? 53 : Number(port);
  if (
    family === 0 ||
    (port !== undefined && (!/^\d{1,5}$/.test(port) || portNumber < 1 || portNumber > 65_535))
  ) {
    throw usageError(
      `${label} must be an IP address with an optional port (1.2.3.4, 1.2.3.4:53, [::1]:53), got ${quote(raw)}`,
    );
  }
  if (port === undefined) return host;
  return family === 6 ? `[${host}]:${portNumber}` : `${host}:${portNumber}`;
}

/** Checks `ip` or `ip/prefix`. */
export function cidr(label: string, raw: string): string {
  const value = raw.trim();
  const [address = '', prefix, extra] = value.split('/');
  const family = isIP(address);
  const bits = family === 6 ? 128 : 32;
  const ok =
    family !== 0 &&
    extra === undefined &&
    (prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits));
  if (!ok)
    throw usageError(
      `${label} must be an IP address or a CIDR range (10.0.0.0/8, fd00::/8), got ${quote(raw)}`,
    );
  return value;
}

function tld(label: string, raw: string): string {
  const value = raw.trim().replace(/^\./, '').toLowerCase();
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(value)) {
    throw usageError(
      `${label} must be a top-level domain label such as test or localhost, got ${quote(raw)}`,
    );
  }
  return value;
}

function proxyUrl(source: Sourced<string>): string {
  try {
    parseProxyUrl(source.value.trim());
  } catch (error) {
    // The message never repeats the URL, which may hold a password.
    const reason =
      error instanceof OptionsError ? error.message.replace(/^proxy /, '') : 'is not a SOCKS URL';
    throw usageError(`${source.label} ${reason}`);
  }
  return source.value.trim();
}

/**
 * Reads the shared settings from parsed flags and the environment (flags win). Throws a usage error naming
 * the flag or variable for a malformed value.
 */
export function readSettings(args: ParsedArgs, env: Env): CliSettings {
  const timeout = single(args, env, 'timeout', 'MAILVET_TIMEOUT');
  const smtpPort = single(args, env, 'smtp-port', 'MAILVET_SMTP_PORT');
  const proxy = single(args, env, 'proxy', 'MAILVET_PROXY');
  const concurrency = single(args, env, 'concurrency', 'MAILVET_CONCURRENCY');
  const servers = many(args, env, 'dns', 'MAILVET_DNS');
  const addresses = many(args, env, 'allow-address', 'MAILVET_ALLOW_ADDRESS');
  const tlds = many(args, env, 'allow-tld', 'MAILVET_ALLOW_TLD');
  const dns = !switched(args, env, 'no-dns', 'MAILVET_NO_DNS');
  return {
    timeoutMs: timeout === undefined ? undefined : seconds(timeout),
    dnsServers: servers.value.map((server) => dnsServer(servers.label, server)),
    smtpPort:
      smtpPort === undefined
        ? undefined
        : integer(smtpPort, VERIFY_FIELDS.smtpPort.min, VERIFY_FIELDS.smtpPort.max),
    heloHost: single(args, env, 'helo', 'MAILVET_HELO')?.value,
    mailFrom: single(args, env, 'from', 'MAILVET_FROM')?.value,
    proxy: proxy === undefined ? undefined : proxyUrl(proxy),
    allowAddresses: addresses.value.map((entry) => cidr(addresses.label, entry)),
    allowTlds: tlds.value.map((entry) => tld(tlds.label, entry)),
    dns,
    smtp: dns && !switched(args, env, 'no-smtp', 'MAILVET_NO_SMTP'),
    concurrency:
      concurrency === undefined
        ? DEFAULTS.concurrency
        : integer(concurrency, VERIFY_FIELDS.concurrency.min, VERIFY_FIELDS.concurrency.max),
    trace: switched(args, env, 'trace', 'MAILVET_TRACE'),
  };
}

/** Verifier options built from settings, with the seams the CLI made for them. */
export interface BuiltOptions {
  readonly options: VerifyOptions;
  /** Releases the seams the CLI made (the verifier does not own them); call after `dispose()`. */
  close(): void;
}

/** Builds the verifier options of validated settings, with a resolver for `--dns` and a transport for `--proxy`. */
export function verifyOptionsOf(settings: CliSettings): BuiltOptions {
  const options: { -readonly [K in keyof VerifyOptions]: VerifyOptions[K] } = {
    dns: settings.dns,
    smtp: settings.smtp,
    trace: settings.trace,
    concurrency: settings.concurrency,
    allowAddresses: settings.allowAddresses,
    allowTlds: settings.allowTlds,
  };
  if (settings.timeoutMs !== undefined) options.timeoutMs = settings.timeoutMs;
  if (settings.smtpPort !== undefined) options.smtpPort = settings.smtpPort;
  if (settings.heloHost !== undefined) options.heloHost = settings.heloHost;
  if (settings.mailFrom !== undefined) options.mailFrom = settings.mailFrom;
  let resolver: Resolver | undefined;
  if (settings.dns && settings.dnsServers.length > 0) {
    resolver = cachedResolver(nodeResolver({ servers: settings.dnsServers }));
    options.resolver = resolver;
  }
  if (settings.smtp && settings.proxy !== undefined)
    options.transport = socksTransport({ proxy: settings.proxy });
  return {
    options,
    close() {
      resolver?.close?.();
    },
  };
}
