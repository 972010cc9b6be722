/**
 * The checks of the egress address and the sender's names, all by DNS: reverse DNS, HELO name, SPF, the MAIL
 * FROM domain, and blocklists.
 * @module
 */

import type { Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import { parseIp } from '../net/guard.js';
import { queryBlocklist } from './blocklists.js';
import { makeCheck } from './check.js';
import { evaluateSpf } from './spf.js';
import type { DiagnosticCheck } from './types.js';

const NO_IP = 'no egress address (see the egress check)';
const PASS_IP = 'Pass --ip with the public address of this host.';
const MAX_PTR_NAMES = 5;

function sameAddress(a: string, b: string): boolean {
  const x = parseIp(a);
  const y = parseIp(b);
  return (
    x !== null &&
    y !== null &&
    x.family === y.family &&
    x.bytes.every((byte, index) => byte === y.bytes[index])
  );
}

function reasonOf(error: unknown): string {
  return error instanceof DnsError ? error.reason : error instanceof Error ? error.message : String(error);
}

/** The outcome of {@link reverseDnsCheck}: the check, and the PTR names for the HELO check. */
export interface ReverseDns {
  readonly check: DiagnosticCheck;
  /** PTR names of the egress address (empty when none or unknown). */
  readonly names: readonly string[];
}

/** `reverse_dns`: the egress address has a PTR record, and its name resolves back to the address. */
export async function reverseDnsCheck(
  resolver: Resolver,
  ip: string | null,
  signal: AbortSignal,
): Promise<ReverseDns> {
  if (ip === null) return { check: makeCheck('reverse_dns', 'skipped', NO_IP, PASS_IP), names: [] };
  if (resolver.ptr === undefined) {
    return {
      check: makeCheck(
        'reverse_dns',
        'skipped',
        'the resolver has no ptr() lookup',
        'Use nodeResolver() (the default), or give your resolver ptr() and txt().',
      ),
      names: [],
    };
  }
  let answer: Awaited<ReturnType<NonNullable<Resolver['ptr']>>>;
  try {
    answer = await resolver.ptr(ip, { signal });
  } catch (error) {
    return {
      check: makeCheck(
        'reverse_dns',
        'warn',
        `the PTR lookup of ${ip} failed (${reasonOf(error)})`,
        'Run again; if it persists, the reverse zone of your address is broken: tell its owner (your provider).',
      ),
      names: [],
    };
  }
  if (answer.kind !== 'records' || answer.records.length === 0) {
    return {
      check: makeCheck(
        'reverse_dns',
        'fail',
        `${ip} has no PTR record`,
        'Ask the owner of the address (your provider, often in its console) to set its PTR to your HELO name, e.g. mail.example.net.',
        { ptr: [] },
      ),
      names: [],
    };
  }
  const names = answer.records.slice(0, MAX_PTR_NAMES).map((name) => name.toLowerCase().replace(/\.$/, ''));
  const confirmed: string[] = [];
  const resolved: Record<string, readonly string[]> = {};
  for (const name of names) {
    const forward = await resolver.addresses(name, { signal }).catch(() => null);
    const addresses = forward?.kind === 'records' ? forward.records : [];
    resolved[name] = addresses.slice(0, 8);
    if (addresses.some((address) => sameAddress(address, ip))) confirmed.push(name);
  }
  const details = { ptr: names, confirmed, forward: resolved };
  if (confirmed.length === 0) {
    const first = names[0] ?? '';
    const seen = (resolved[first] ?? []).join(', ') || 'no address';
    return {
      check: makeCheck(
        'reverse_dns',
        'fail',
        `${ip} has PTR ${first}, but ${first} resolves to ${seen}, not back to ${ip}`,
        `Add an ${ip.includes(':') ? 'AAAA' : 'A'} record for ${first} pointing to ${ip} (forward-confirmed reverse DNS).`,
        details,
      ),
      names,
    };
  }
  return {
    check: makeCheck('reverse_dns', 'pass', `${ip} → ${confirmed[0]} → ${ip}`, null, details),
    names,
  };
}

/** `helo`: the EHLO name is the PTR name of the egress address. */
export function heloCheck(heloHost: string, ptrNames: readonly string[]): DiagnosticCheck {
  const helo = heloHost.toLowerCase().replace(/\.$/, '');
  const details = { helo_host: heloHost, ptr: ptrNames };
  if (helo.startsWith('[')) {
    return makeCheck(
      'helo',
      'warn',
      `the EHLO name ${heloHost} is an address literal`,
      `Pass --helo with a host name${ptrNames[0] === undefined ? '' : ` (${ptrNames[0]})`}: many servers score literals as spam.`,
      details,
    );
  }
  if (ptrNames.length === 0) {
    return makeCheck(
      'helo',
      'skipped',
      'no PTR name to compare the EHLO name with',
      'Fix the reverse DNS check first.',
      details,
    );
  }
  if (ptrNames.includes(helo)) {
    return makeCheck(
      'helo',
      'pass',
      `the EHLO name ${helo} is the PTR name of the egress address`,
      null,
      details,
    );
  }
  return makeCheck(
    'helo',
    'warn',
    `the EHLO name ${helo} does not match the PTR name ${ptrNames.join(', ')}`,
    `Pass --helo ${ptrNames[0]} (or set MAILVET_HELO): servers compare the two.`,
    details,
  );
}

function domainOf(mailFrom: string): string {
  return mailFrom.slice(mailFrom.lastIndexOf('@') + 1).toLowerCase();
}

/** `spf`: the MAIL FROM domain's SPF policy authorises the egress address. */
export async function spfCheck(
  resolver: Resolver,
  ip: string | null,
  mailFrom: string,
  signal: AbortSignal,
): Promise<DiagnosticCheck> {
  const domain = domainOf(mailFrom);
  if (domain.startsWith('[')) {
    return makeCheck(
      'spf',
      'skipped',
      `the MAIL FROM domain ${domain} is an address literal`,
      'Pass --from with an address at your domain.',
    );
  }
  if (ip === null) return makeCheck('spf', 'skipped', NO_IP, PASS_IP);
  if (resolver.txt === undefined) {
    return makeCheck(
      'spf',
      'skipped',
      'the resolver has no txt() lookup',
      'Use nodeResolver() (the default), or give your resolver txt().',
    );
  }
  const evaluation = await evaluateSpf(ip, domain, { resolver, signal });
  const details = { ...evaluation };
  const mechanism = `${ip.includes(':') ? 'ip6' : 'ip4'}:${ip}`;
  const add = `Add ${mechanism} to the SPF record of ${domain}, or pass --from with an address at a domain that authorises ${ip}.`;
  const record = evaluation.record === null ? '' : ` (record: ${evaluation.record})`;
  switch (evaluation.result) {
    case 'pass':
      return makeCheck('spf', 'pass', `${domain} authorises ${ip} (${evaluation.matched})`, null, details);
    case 'fail':
      return makeCheck(
        'spf',
        'fail',
        `${domain} does not authorise ${ip}: ${evaluation.matched} matched${record}`,
        add,
        details,
      );
    case 'softfail':
    case 'neutral':
      return makeCheck(
        'spf',
        'warn',
        `${domain} gives ${evaluation.result} for ${ip}${record}`,
        add,
        details,
      );
    case 'none':
      return makeCheck(
        'spf',
        'warn',
        `${domain} publishes no SPF record`,
        `Publish a TXT record at ${domain}: "v=spf1 ${mechanism} -all" (merged with what else sends mail for it).`,
        details,
      );
    case 'permerror':
      return makeCheck(
        'spf',
        'fail',
        `the SPF record of ${domain} is broken: ${evaluation.reason}`,
        'Fix the record (an SPF checker shows the same error); receivers treat it as no policy or reject.',
        details,
      );
    case 'temperror':
      return makeCheck(
        'spf',
        'warn',
        `the SPF policy of ${domain} could not be read: ${evaluation.reason}`,
        'Run again; if it persists, a name server of the domain (or of an include) is failing.',
        details,
      );
    default:
      return makeCheck(
        'spf',
        'warn',
        `the SPF record of ${domain} could not be evaluated here: ${evaluation.reason}`,
        'Check it with a full SPF validator; this one supports ip4, ip6, a, mx, include, redirect and all.',
        details,
      );
  }
}

/** `sender_domain`: the MAIL FROM domain can receive mail (an MX, or an A record to fall back on). */
export async function senderDomainCheck(
  resolver: Resolver,
  mailFrom: string,
  signal: AbortSignal,
): Promise<DiagnosticCheck> {
  const domain = domainOf(mailFrom);
  const advice = `Use a MAIL FROM domain that receives mail (--from verify@your-domain), or give ${domain} an MX record.`;
  if (domain.startsWith('['))
    return makeCheck(
      'sender_domain',
      'skipped',
      `${domain} is an address literal`,
      'Pass --from with an address at your domain.',
    );
  try {
    const mx = await resolver.mx(domain, { signal });
    if (mx.kind === 'records') {
      const hosts = mx.records.filter((record) => record.exchange !== '').map((record) => record.exchange);
      if (hosts.length === 0) {
        return makeCheck(
          'sender_domain',
          'fail',
          `${domain} publishes a null MX: it accepts no mail, so bounces to it are lost`,
          advice,
          { mx: [] },
        );
      }
      return makeCheck('sender_domain', 'pass', `${domain} has MX ${hosts.slice(0, 3).join(', ')}`, null, {
        mx: hosts.slice(0, 10),
      });
    }
    if (mx.kind === 'nxdomain')
      return makeCheck('sender_domain', 'fail', `${domain} does not exist`, advice, { mx: [] });
    const addresses = await resolver.addresses(domain, { signal });
    if (addresses.kind === 'records') {
      return makeCheck(
        'sender_domain',
        'pass',
        `${domain} has no MX but an address (${addresses.records[0]}): mail falls back to it`,
        null,
        {
          mx: [],
          addresses: addresses.records.slice(0, 4),
        },
      );
    }
    return makeCheck('sender_domain', 'fail', `${domain} has neither an MX nor an address record`, advice, {
      mx: [],
    });
  } catch (error) {
    return makeCheck(
      'sender_domain',
      'warn',
      `the lookups of ${domain} failed (${reasonOf(error)})`,
      "Run again; if it persists, the domain's name servers are failing.",
    );
  }
}

/** `blocklists`: the egress address is on none of the configured DNS blocklists. */
export async function blocklistCheck(
  resolver: Resolver,
  ip: string | null,
  zones: readonly string[],
  signal: AbortSignal,
): Promise<DiagnosticCheck> {
  if (ip === null) return makeCheck('blocklists', 'skipped', NO_IP, PASS_IP);
  if (zones.length === 0)
    return makeCheck('blocklists', 'skipped', 'no blocklists configured', null, { lists: [] });
  const answers = await Promise.all(zones.map((zone) => queryBlocklist(resolver, ip, zone, signal)));
  const details = { lists: answers };
  const listed = answers.filter((answer) => answer.outcome === 'listed');
  if (listed.length > 0) {
    const shown = listed
      .map(
        (answer) =>
          `${answer.zone} (${answer.codes.join(', ')}${answer.reason === null ? '' : `: ${answer.reason}`})`,
      )
      .join('; ');
    return makeCheck(
      'blocklists',
      'fail',
      `${ip} is listed on ${shown}`,
      'Find out why (the reason above), fix it, and ask each list to delist the address; or send from another address.',
      details,
    );
  }
  const troubled = answers.filter((answer) => answer.outcome !== 'clear');
  if (troubled.length > 0) {
    return makeCheck(
      'blocklists',
      'warn',
      `${ip} is on none of ${answers.length - troubled.length} lists; no answer from ${troubled.map((answer) => `${answer.zone} (${answer.problem})`).join('; ')}`,
      'Query these lists through a resolver of your own (public resolvers are refused by some lists), or drop them with --blocklist.',
      details,
    );
  }
  return makeCheck('blocklists', 'pass', `${ip} is on none of ${zones.join(', ')}`, null, details);
}
