/**
 * The checks that go on the network: the resolver answers (`dns`), the SOCKS proxy works (`proxy`), port 25
 * reaches a mail server (`port25`), and which address the server saw (`egress`).
 * @module
 */

import type { Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import { type AddressGuard, isRoutable } from '../net/guard.js';
import { connectSocket } from '../smtp/connect.js';
import type { SocksProxyConfig } from '../smtp/socks.js';
import { makeCheck } from './check.js';
import { echoedAddress } from './egress.js';
import type { Port25Probe } from './port25.js';
import type { DiagnosticCheck } from './types.js';

/** Where the port 25 probe connects: an address of the probe domain's best MX that passed the guard. */
export interface ProbeTarget {
  readonly host: string;
  readonly port: number;
  readonly hostname: string;
}

const MAX_MX_TRIED = 3;

function failure(error: unknown): string {
  if (error instanceof DnsError) return `${error.reason}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * `dns`: the resolver answers the MX question of the probe domain. Also finds the probe target (first MX, by
 * preference, with an address the guard allows).
 */
export async function dnsCheck(
  resolver: Resolver,
  domain: string,
  port: number,
  guard: AddressGuard,
  signal: AbortSignal,
): Promise<{ check: DiagnosticCheck; target: ProbeTarget | null; why: string }> {
  let answer: Awaited<ReturnType<Resolver['mx']>>;
  try {
    answer = await resolver.mx(domain, { signal });
  } catch (error) {
    return {
      check: makeCheck(
        'dns',
        'fail',
        `the MX lookup of ${domain} got no answer (${failure(error)})`,
        'Make the resolver answer: check /etc/resolv.conf, or pass --dns with a resolver you run or your provider runs.',
      ),
      target: null,
      why: 'DNS does not answer',
    };
  }
  const hosts =
    answer.kind === 'records'
      ? answer.records
          .filter((record) => record.exchange !== '')
          .toSorted((a, b) => a.priority - b.priority)
          .map((record) => record.exchange)
      : [];
  if (hosts.length === 0) {
    const seen =
      answer.kind === 'records' ? 'a null MX' : answer.kind === 'nxdomain' ? 'no such domain' : 'no MX';
    return {
      check: makeCheck(
        'dns',
        'warn',
        `the resolver answers, but ${domain} has ${seen}`,
        'Pass --probe-domain with a domain that receives mail (default gmail.com).',
        { mx: [] },
      ),
      target: null,
      why: `${domain} has no MX to connect to`,
    };
  }
  const shown = hosts.slice(0, 3).join(', ') + (hosts.length > 3 ? ` (+${hosts.length - 3} more)` : '');
  const check = makeCheck('dns', 'pass', `MX of ${domain}: ${shown}`, null, { mx: hosts.slice(0, 10) });
  const refused: string[] = [];
  for (const hostname of hosts.slice(0, MAX_MX_TRIED)) {
    const addresses = await resolver.addresses(hostname, { signal }).catch(() => null);
    if (addresses?.kind !== 'records') continue;
    const allowed = addresses.records.find((address) => guard.allows(address));
    if (allowed !== undefined) return { check, target: { host: allowed, port, hostname }, why: '' };
    refused.push(...addresses.records.slice(0, 2));
  }
  const why =
    refused.length > 0
      ? `the MX hosts resolve only to non-public addresses (${refused.join(', ')}); allow them with --allow-address`
      : 'no address found for the MX hosts';
  return { check, target: null, why };
}

/** `proxy`, first half: the proxy accepts a TCP connection. Returns the failed check, or `null` when reachable. */
export async function proxyReachable(
  proxy: SocksProxyConfig,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<DiagnosticCheck | null> {
  const where = `${proxy.host}:${proxy.port}`;
  try {
    const socket = await connectSocket(
      { host: proxy.host, port: proxy.port },
      { timeoutMs, signal, allowHostname: true },
    );
    socket.destroy();
    return null;
  } catch (error) {
    return makeCheck(
      'proxy',
      'fail',
      `cannot reach the SOCKS proxy ${where}: ${failure(error)}`,
      'Start the proxy, or fix --proxy (host, port, socks5:// or socks4://).',
      { proxy: where, reachable: false },
    );
  }
}

/** `proxy`, second half: what the tunnelled port 25 probe says about the SOCKS handshake. */
export function proxyCheckOf(proxy: SocksProxyConfig, probe: Port25Probe | null): DiagnosticCheck {
  const where = `${proxy.host}:${proxy.port}`;
  if (probe === null) {
    return makeCheck(
      'proxy',
      'warn',
      `the proxy ${where} accepts connections; the SOCKS handshake was not tried (no MX to connect to)`,
      'Fix the DNS check first, then run again.',
      { proxy: where, reachable: true, handshake: null },
    );
  }
  if (probe.outcome !== 'proxy') {
    return makeCheck('proxy', 'pass', `SOCKS handshake with ${where} and CONNECT through it worked`, null, {
      proxy: where,
      reachable: true,
      handshake: true,
    });
  }
  const message = probe.error?.message ?? '';
  const cause = (probe.error?.cause as Error | undefined)?.message ?? message;
  if (/rejected connection/i.test(cause)) {
    return makeCheck(
      'proxy',
      'pass',
      `SOCKS handshake with ${where} worked; the proxy could not open the onward connection (${cause})`,
      null,
      { proxy: where, reachable: true, handshake: true },
    );
  }
  return makeCheck(
    'proxy',
    'fail',
    `the SOCKS handshake with ${where} failed: ${cause}`,
    'Check the proxy type (socks5:// or socks4://) and the user name and password in --proxy.',
    { proxy: where, reachable: true, handshake: false },
  );
}

const ADVICE_BLOCKED =
  'Outbound port 25 is blocked: ask your provider to open it (most clouds block it by default), or send through --proxy on a host that may use port 25.';

/** `port25`: the probe's outcome as a check. */
export function port25CheckOf(
  target: ProbeTarget,
  probe: Port25Probe,
  timeouts: { connect: number; reply: number },
) {
  const where = `${target.hostname} [${target.host}]:${target.port}`;
  const details = {
    host: target.hostname,
    address: target.host,
    port: target.port,
    outcome: probe.outcome,
    banner: probe.banner,
    ehlo: probe.ehlo,
    elapsed_ms: probe.elapsedMs,
    transcript: probe.transcript,
  };
  const error = probe.error?.message ?? '';
  switch (probe.outcome) {
    case 'banner':
      return makeCheck(
        'port25',
        'pass',
        `${where} greeted: "${probe.banner ?? ''}"; EHLO answered`,
        null,
        details,
      );
    case 'refused':
      return makeCheck('port25', 'fail', `the connection to ${where} was refused`, ADVICE_BLOCKED, details);
    case 'connect_timeout':
      return makeCheck(
        'port25',
        'fail',
        `no answer from ${where} within ${timeouts.connect} ms: the usual sign of a provider blocking port 25`,
        ADVICE_BLOCKED,
        details,
      );
    case 'banner_timeout':
      return makeCheck(
        'port25',
        'fail',
        `connected to ${where}, but no banner within ${timeouts.reply} ms (a tarpit, or a middlebox holding port 25)`,
        'Try another --probe-domain; if every server stays silent, something between you and them intercepts port 25.',
        details,
      );
    case 'rejected':
      return makeCheck(
        'port25',
        'fail',
        `${where} refused the session: ${error}`,
        'The server refuses your address: see the blocklist and reverse DNS checks.',
        details,
      );
    case 'ehlo_failed':
      return makeCheck(
        'port25',
        'warn',
        `${where} greeted, but EHLO got no usable reply (${error})`,
        'Check the HELO name (--helo): some servers refuse names that do not resolve.',
        details,
      );
    case 'proxy':
      return makeCheck(
        'port25',
        'fail',
        `the proxy could not connect to ${where}: ${error}`,
        'Port 25 is blocked beyond the proxy: use a proxy on a host that may send on port 25.',
        details,
      );
    case 'aborted':
      return makeCheck(
        'port25',
        'fail',
        `the diagnosis budget ran out while talking to ${where}`,
        'Raise --timeout.',
        details,
      );
    default:
      return makeCheck('port25', 'fail', `cannot connect to ${where}: ${error}`, ADVICE_BLOCKED, details);
  }
}

/**
 * `egress`: the address mail servers see, from `ip` or from the EHLO reply's echo. A loopback, private or other
 * special-purpose address is a warning whatever `allowAddresses` opens: that list lets the probe reach internal
 * hosts, it does not make this host's address one that mail servers on the internet see.
 */
export function egressCheck(
  ip: string | undefined,
  probe: Port25Probe | null,
): { check: DiagnosticCheck; ip: string | null } {
  const echoed = probe?.ehlo == null ? null : echoedAddress(probe.ehlo);
  const address = ip ?? echoed;
  const source = ip !== undefined ? 'option' : echoed !== null ? 'ehlo' : null;
  const details = { address, source, echoed };
  if (address === null) {
    return {
      check: makeCheck(
        'egress',
        'skipped',
        probe?.outcome === 'banner'
          ? 'the mail server did not echo the client address in its EHLO reply'
          : 'no EHLO reply to read the client address from',
        'Pass --ip with the public address of this host (the reverse DNS, SPF and blocklist checks need it).',
        details,
      ),
      ip: null,
    };
  }
  if (ip !== undefined && echoed !== null && echoed !== ip) {
    return {
      check: makeCheck(
        'egress',
        'warn',
        `--ip says ${ip}, but the mail server saw ${echoed}`,
        `Check which address this host sends from; the checks below use ${ip}.`,
        details,
      ),
      ip,
    };
  }
  const from = source === 'option' ? 'given with --ip' : 'as echoed in the EHLO reply';
  if (!isRoutable(address)) {
    return {
      check: makeCheck(
        'egress',
        'warn',
        `${address} (${from}) is not a public address`,
        'Mail servers on the internet see your NAT or proxy address: pass that one with --ip.',
        details,
      ),
      ip: address,
    };
  }
  return { check: makeCheck('egress', 'pass', `${address} (${from})`, null, details), ip: address };
}
