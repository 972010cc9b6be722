/**
 * `diagnose()`: can this host verify mailboxes at all, and will mail servers trust it? The report behind
 * `mailvet doctor` and `GET /v1/diagnostics`.
 * @module
 */

import { nodeResolver } from '../dns/node.js';
import { createAddressGuard } from '../net/guard.js';
import { defaultHeloHost } from '../smtp/host.js';
import { parseProxyUrl, socksTransport } from '../smtp/socks.js';
import { tcpTransport } from '../smtp/tcp.js';
import { blocklistCheck, heloCheck, reverseDnsCheck, senderDomainCheck, spfCheck } from './address-checks.js';
import { makeCheck } from './check.js';
import { dnsCheck, egressCheck, port25CheckOf, proxyCheckOf, proxyReachable } from './network-checks.js';
import { type DiagnoseOptions, resolveDiagnoseOptions } from './options.js';
import { type Port25Probe, probePort25 } from './port25.js';
import { CHECK_NAMES, type DiagnosticCheck, type DiagnosticsReport, verdictOf } from './types.js';

/**
 * Runs every check (DNS, SOCKS proxy, port 25, egress address, reverse DNS, HELO name, SPF, MAIL FROM domain,
 * blocklists) and returns the report. On the wire it sends only: DNS questions, and to the probe domain's best
 * MX one TCP connection with EHLO and QUIT (never MAIL or RCPT). Throws only for bad options (`OptionsError`);
 * whatever the network does becomes a check's status. The whole run stays within `timeoutMs`.
 * @example
 * const report = await diagnose({ heloHost: 'mx-check.example.net', mailFrom: 'verify@example.net' });
 * report.verdict; // 'warn'
 * report.checks.find((check) => check.name === 'reverse_dns'); // { status: 'fail', evidence: '203.0.113.7 has no PTR record', advice: '...' }
 */
export async function diagnose(options: DiagnoseOptions = {}): Promise<DiagnosticsReport> {
  const resolved = resolveDiagnoseOptions(options);
  const { now, probeDomain, smtpPort, connectTimeoutMs, replyTimeoutMs } = resolved;
  const proxy = resolved.proxy === undefined ? undefined : parseProxyUrl(resolved.proxy);
  const heloHost = resolved.heloHost ?? defaultHeloHost();
  const mailFrom = resolved.mailFrom ?? `verify@${heloHost}`;
  const guard = createAddressGuard(resolved.allowAddresses);
  const transport =
    resolved.transport ??
    (resolved.proxy === undefined
      ? tcpTransport()
      : socksTransport({ proxy: resolved.proxy, timeoutMs: connectTimeoutMs }));
  const ownResolver = resolved.resolver === undefined ? nodeResolver() : undefined;
  const resolver = resolved.resolver ?? (ownResolver as NonNullable<typeof ownResolver>);
  const signals = [AbortSignal.timeout(resolved.timeoutMs)];
  if (resolved.signal !== undefined) signals.push(resolved.signal);
  const signal = AbortSignal.any(signals);
  const started = now();
  const startedAt = new Date(started).toISOString();
  const checks = new Map<string, DiagnosticCheck>();

  try {
    const dns = await dnsCheck(resolver, probeDomain, smtpPort, guard, signal);
    checks.set('dns', dns.check);

    let probe: Port25Probe | null = null;
    let proxyDown: DiagnosticCheck | null = null;
    if (proxy !== undefined) proxyDown = await proxyReachable(proxy, connectTimeoutMs, signal);
    if (proxyDown !== null) {
      checks.set('proxy', proxyDown);
      checks.set(
        'port25',
        makeCheck('port25', 'skipped', 'the SOCKS proxy is down', 'Fix the proxy check first.'),
      );
    } else if (dns.target === null) {
      checks.set('port25', makeCheck('port25', 'skipped', dns.why, 'Fix the DNS check first.'));
    } else {
      probe = await probePort25(
        dns.target,
        { transport, heloHost, connectTimeoutMs, replyTimeoutMs, signal, now },
        proxy !== undefined,
      );
      checks.set(
        'port25',
        port25CheckOf(dns.target, probe, { connect: connectTimeoutMs, reply: replyTimeoutMs }),
      );
    }
    if (proxy === undefined) {
      checks.set('proxy', makeCheck('proxy', 'skipped', 'no proxy configured', null));
    } else if (proxyDown === null) {
      const proxyCheck = proxyCheckOf(proxy, probe);
      checks.set('proxy', proxyCheck);
      if (proxyCheck.status === 'fail') {
        checks.set(
          'port25',
          makeCheck('port25', 'skipped', 'the SOCKS handshake failed', 'Fix the proxy check first.'),
        );
      }
    }

    const egress = egressCheck(resolved.ip, probe);
    checks.set('egress', egress.check);
    const [reverse, spf, sender, blocklists] = await Promise.all([
      reverseDnsCheck(resolver, egress.ip, signal),
      spfCheck(resolver, egress.ip, mailFrom, signal),
      senderDomainCheck(resolver, mailFrom, signal),
      blocklistCheck(resolver, egress.ip, resolved.blocklists, signal),
    ]);
    checks.set('reverse_dns', reverse.check);
    checks.set('helo', heloCheck(heloHost, reverse.names));
    checks.set('spf', spf);
    checks.set('sender_domain', sender);
    checks.set('blocklists', blocklists);

    const ordered = CHECK_NAMES.map((name) => checks.get(name)).filter(
      (check): check is DiagnosticCheck => check !== undefined,
    );
    return {
      verdict: verdictOf(ordered),
      checks: ordered,
      egress_ip: egress.ip,
      helo_host: heloHost,
      mail_from: mailFrom,
      probe_domain: probeDomain,
      started_at: startedAt,
      duration_ms: Math.max(0, now() - started),
    };
  } finally {
    ownResolver?.close();
  }
}
