/**
 * Options of `diagnose()`, validated once, with documented defaults.
 * @module
 */

import type { Resolver } from '../dns/types.js';
import { heloHostProblem, mailFromProblem } from '../envelope-options.js';
import { OptionsError } from '../errors.js';
import { parseCidrList, parseIp } from '../net/guard.js';
import { lookupName } from '../net/name.js';
import { integerOption } from '../option-fields.js';
import type { Transport } from '../smtp/types.js';
import { DEFAULT_BLOCKLISTS } from './blocklists.js';

/** Options of `diagnose()`. Every field is optional. */
export interface DiagnoseOptions {
  /** DNS seam. Needs `ptr()` and `txt()` for the reverse DNS, SPF and blocklist reasons. @default nodeResolver() */
  readonly resolver?: Resolver;
  /** TCP seam for the port 25 check. Not with `proxy`. @default tcpTransport(), or socksTransport({ proxy }) */
  readonly transport?: Transport;
  /** SOCKS proxy URL (`socks5://user:pass@host:1080`): the port 25 check goes through it, and the proxy check runs. */
  readonly proxy?: string;
  /** EHLO name to check (and send). @default the machine's host name */
  readonly heloHost?: string;
  /** Envelope sender whose domain's SPF is checked. @default `verify@<heloHost>` */
  readonly mailFrom?: string;
  /** Domain whose MX the DNS and port 25 checks contact (EHLO and QUIT only). @default 'gmail.com' */
  readonly probeDomain?: string;
  /** The egress address, when the probe MX does not echo it. @default parsed from the EHLO reply */
  readonly ip?: string;
  /** SMTP port of the probe MX. @default 25 */
  readonly smtpPort?: number;
  /** Budget of the whole diagnosis, in milliseconds. @default 30000 */
  readonly timeoutMs?: number;
  /** Budget of the TCP connect (to the MX, or to the proxy), in milliseconds. @default 5000 */
  readonly connectTimeoutMs?: number;
  /** Longest wait for the banner and for the EHLO reply, in milliseconds. @default 10000 */
  readonly replyTimeoutMs?: number;
  /** CIDR ranges the SSRF guard lets through (the probe MX's addresses pass the guard). @default [] */
  readonly allowAddresses?: readonly string[];
  /** Special-use TLDs accepted in `probeDomain`, `heloHost` and the MAIL FROM domain (e.g. `['test']`). @default [] */
  readonly allowTlds?: readonly string[];
  /** DNS blocklist zones to query for the egress address. @default DEFAULT_BLOCKLISTS */
  readonly blocklists?: readonly string[];
  /** Aborts the diagnosis; checks still running report what they saw. */
  readonly signal?: AbortSignal;
  /** Clock in milliseconds. @default Date.now */
  readonly now?: () => number;
}

/** Validated options, defaults filled in (the seams are still optional: `diagnose()` makes the defaults). */
export interface ResolvedDiagnoseOptions {
  readonly resolver: Resolver | undefined;
  readonly transport: Transport | undefined;
  readonly proxy: string | undefined;
  readonly heloHost: string | undefined;
  readonly mailFrom: string | undefined;
  readonly probeDomain: string;
  readonly ip: string | undefined;
  readonly smtpPort: number;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly replyTimeoutMs: number;
  readonly allowAddresses: readonly string[];
  readonly allowTlds: readonly string[];
  readonly blocklists: readonly string[];
  readonly signal: AbortSignal | undefined;
  readonly now: () => number;
}

/** The defaults of {@link DiagnoseOptions}. */
export const DIAGNOSE_DEFAULTS = Object.freeze({
  probeDomain: 'gmail.com',
  smtpPort: 25,
  timeoutMs: 30_000,
  connectTimeoutMs: 5_000,
  replyTimeoutMs: 10_000,
});

const MAX_BLOCKLISTS = 20;

function stringList(value: unknown, option: string, max: number): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > max || value.some((entry) => typeof entry !== 'string')) {
    throw new OptionsError(option, `must be an array of at most ${max} strings`);
  }
  return value as string[];
}

/** A DNS name of at least two labels, ASCII (A-labels for IDNs), or a special-use TLD the caller allowed. */
function domainOption(value: unknown, option: string, allowTlds: readonly string[]): string {
  const name = typeof value === 'string' ? lookupName(value) : null;
  const shown = JSON.stringify(String(value).slice(0, 64));
  if (name === null) {
    throw new OptionsError(
      option,
      `must be an ASCII domain name (A-labels for international names), got ${shown}`,
    );
  }
  const tld = name.slice(name.lastIndexOf('.') + 1);
  if (!name.includes('.') && !allowTlds.includes(tld)) {
    throw new OptionsError(option, `must be a domain name with a dot, got ${shown}`);
  }
  return name;
}

/** Validates `options` (an `OptionsError` names the first bad one) and fills in the defaults. */
export function resolveDiagnoseOptions(options: DiagnoseOptions = {}): ResolvedDiagnoseOptions {
  if (typeof options !== 'object' || options === null) throw new OptionsError('options', 'must be an object');
  const allowTlds = stringList(options.allowTlds, 'allowTlds', 100).map((tld) =>
    tld.toLowerCase().replace(/^\./, ''),
  );
  const allowAddresses = stringList(options.allowAddresses, 'allowAddresses', 1000);
  parseCidrList(allowAddresses);
  const resolver = options.resolver;
  if (
    resolver !== undefined &&
    (typeof resolver.mx !== 'function' || typeof resolver.addresses !== 'function')
  ) {
    throw new OptionsError('resolver', 'must be a Resolver with mx() and addresses()');
  }
  const transport = options.transport;
  if (transport !== undefined && typeof transport.connect !== 'function') {
    throw new OptionsError('transport', 'must be a Transport with connect()');
  }
  if (transport !== undefined && options.proxy !== undefined) {
    throw new OptionsError('proxy', 'cannot be combined with transport (the proxy makes its own transport)');
  }
  if (options.heloHost !== undefined) {
    const problem = heloHostProblem(options.heloHost);
    if (problem !== undefined) throw new OptionsError('heloHost', problem);
  }
  if (options.mailFrom !== undefined) {
    const problem = mailFromProblem(options.mailFrom);
    if (problem !== undefined) throw new OptionsError('mailFrom', problem);
  }
  if (options.ip !== undefined && (typeof options.ip !== 'string' || parseIp(options.ip) === null)) {
    throw new OptionsError(
      'ip',
      `must be an IPv4 or IPv6 address, got ${JSON.stringify(String(options.ip).slice(0, 64))}`,
    );
  }
  const blocklists =
    options.blocklists === undefined
      ? DEFAULT_BLOCKLISTS.map((list) => list.zone)
      : stringList(options.blocklists, 'blocklists', MAX_BLOCKLISTS).map((zone) =>
          domainOption(zone, 'blocklists', allowTlds),
        );
  const now = options.now ?? Date.now;
  if (typeof now !== 'function') throw new OptionsError('now', 'must be a function');
  if (options.signal !== undefined && !(options.signal instanceof AbortSignal)) {
    throw new OptionsError('signal', 'must be an AbortSignal');
  }
  return {
    resolver,
    transport,
    proxy: options.proxy,
    heloHost: options.heloHost,
    mailFrom: options.mailFrom,
    probeDomain: domainOption(options.probeDomain ?? DIAGNOSE_DEFAULTS.probeDomain, 'probeDomain', allowTlds),
    ip: options.ip,
    smtpPort: integerOption(options.smtpPort, 'smtpPort', DIAGNOSE_DEFAULTS.smtpPort, 1, 65_535),
    timeoutMs: integerOption(options.timeoutMs, 'timeoutMs', DIAGNOSE_DEFAULTS.timeoutMs, 1, 600_000),
    connectTimeoutMs: integerOption(
      options.connectTimeoutMs,
      'connectTimeoutMs',
      DIAGNOSE_DEFAULTS.connectTimeoutMs,
      1,
      600_000,
    ),
    replyTimeoutMs: integerOption(
      options.replyTimeoutMs,
      'replyTimeoutMs',
      DIAGNOSE_DEFAULTS.replyTimeoutMs,
      1,
      600_000,
    ),
    allowAddresses,
    allowTlds,
    blocklists,
    signal: options.signal,
    now,
  };
}
