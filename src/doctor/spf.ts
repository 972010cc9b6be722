/**
 * A named subset of SPF (RFC 7208) `check_host()`, evaluated over the {@link Resolver} seam, so that it runs
 * against any resolver (and a loopback DNS server in tests).
 *
 * Supported: the `v=spf1` record (exactly one), the mechanisms `all`, `include:`, `a`, `mx`, `ip4:`, `ip6:`
 * with the qualifiers `+ - ~ ?` and the `a`/`mx` CIDR lengths (`a:host/24//64`), the modifier `redirect=`,
 * the limit of 10 DNS-querying terms (`include`, `a`, `mx`, `redirect`; each `mx` also counts its MX hosts)
 * and of 2 void lookups. `exp=` and unknown modifiers are ignored, as RFC 7208 says.
 * Not supported: macros (`%{...}`), `ptr` and `exists`: a record that reaches one of them before a match
 * evaluates to `unsupported` (never a guess).
 *
 * Why not a library: mailauth (the maintained one) needs Node >= 22.19; haraka-plugin-spf and spf-check
 * query node:dns themselves, so they cannot use the configured resolver (nor a test server).
 * @module
 */

import type { DnsAnswer, Resolver } from '../dns/types.js';
import { DnsError } from '../errors.js';
import { type IpAddress, inRange, parseCidr, parseIp } from '../net/guard.js';
import { lookupName } from '../net/name.js';

/** The outcome of an SPF evaluation: RFC 7208's results, plus `unsupported` for terms outside the subset. */
export type SpfResult =
  | 'pass'
  | 'fail'
  | 'softfail'
  | 'neutral'
  | 'none'
  | 'permerror'
  | 'temperror'
  | 'unsupported';

/** What {@link evaluateSpf} found. */
export interface SpfEvaluation {
  readonly result: SpfResult;
  /** The domain whose policy was evaluated (the MAIL FROM domain). */
  readonly domain: string;
  /** That domain's SPF record, or `null` when it has none (or the lookup failed). */
  readonly record: string | null;
  /** The term that decided the result (`-all`, `ip4:192.0.2.0/24`, `include:_spf.example.net`), if any. */
  readonly matched: string | null;
  /** DNS-querying terms evaluated (the limit is 10). */
  readonly lookups: number;
  /** One line on why. */
  readonly reason: string;
}

/** Options of {@link evaluateSpf}. */
export interface SpfOptions {
  /** Answers TXT (required), A/AAAA and MX questions. */
  readonly resolver: Resolver;
  /** Aborts the DNS lookups (the result is then `temperror`). */
  readonly signal?: AbortSignal;
  /** Most DNS-querying terms (RFC 7208 4.6.4). @default 10 */
  readonly maxLookups?: number;
  /** Most lookups that answer no data or no such name (RFC 7208 4.6.4). @default 2 */
  readonly maxVoidLookups?: number;
}

type Qualifier = '+' | '-' | '~' | '?';

const RESULT_OF: Readonly<Record<Qualifier, SpfResult>> = {
  '+': 'pass',
  '-': 'fail',
  '~': 'softfail',
  '?': 'neutral',
};

interface Mechanism {
  readonly qualifier: Qualifier;
  readonly kind: 'all' | 'include' | 'a' | 'mx' | 'ip4' | 'ip6' | 'ptr' | 'exists';
  /** Domain of include, a, mx (null: the current domain). */
  readonly domain: string | null;
  /** Network of ip4/ip6. */
  readonly network: ReturnType<typeof parseCidr>;
  readonly cidr4: number;
  readonly cidr6: number;
  readonly text: string;
}

interface Policy {
  readonly mechanisms: readonly Mechanism[];
  readonly redirect: string | null;
}

/** Ends evaluation with a final result (permerror, temperror, unsupported). */
class SpfStop extends Error {
  constructor(
    readonly result: 'permerror' | 'temperror' | 'unsupported',
    readonly why: string,
  ) {
    super(why);
  }
}

const MAX_RECORD_LENGTH = 4096;
const MAX_MX_NAMES = 10;
const DUAL_CIDR = /^(.*?)(?:\/(\d{1,3}))?(?:\/\/(\d{1,3}))?$/;

function targetDomain(text: string, term: string): string {
  if (text.includes('%'))
    throw new SpfStop('unsupported', `${term} uses a macro, which this evaluator does not expand`);
  const name = lookupName(text);
  if (name === null || !name.includes('.')) throw new SpfStop('permerror', `${term} names an invalid domain`);
  return name;
}

function parseMechanism(term: string): Mechanism {
  const qualifier = (/^[+\-~?]/.test(term) ? term[0] : '+') as Qualifier;
  const body = qualifier === term[0] ? term.slice(1) : term;
  const separator = body.search(/[:/]/);
  const name = (separator === -1 ? body : body.slice(0, separator)).toLowerCase();
  const rest = separator === -1 ? '' : body.slice(separator);
  const base = { qualifier, domain: null, network: null, cidr4: 32, cidr6: 128, text: term };
  switch (name) {
    case 'all':
      if (rest !== '') throw new SpfStop('permerror', `${term} takes no argument`);
      return { ...base, kind: 'all' };
    case 'include':
    case 'exists':
      if (!rest.startsWith(':') || rest.length === 1)
        throw new SpfStop('permerror', `${term} needs a domain`);
      return {
        ...base,
        kind: name,
        domain: name === 'exists' ? rest.slice(1) : targetDomain(rest.slice(1), term),
      };
    case 'ptr':
      return { ...base, kind: 'ptr' };
    case 'ip4':
    case 'ip6': {
      const network = rest.startsWith(':') ? parseCidr(rest.slice(1)) : null;
      if (network === null || network.family !== (name === 'ip4' ? 4 : 6)) {
        throw new SpfStop('permerror', `${term} is not a valid ${name} network`);
      }
      return { ...base, kind: name, network };
    }
    case 'a':
    case 'mx': {
      const match = DUAL_CIDR.exec(rest);
      const host = match?.[1] ?? '';
      const cidr4 = match?.[2] === undefined ? 32 : Number(match[2]);
      const cidr6 = match?.[3] === undefined ? 128 : Number(match[3]);
      if (match === null || cidr4 > 32 || cidr6 > 128 || (host !== '' && !host.startsWith(':'))) {
        throw new SpfStop('permerror', `${term} is malformed`);
      }
      const domain = host === '' ? null : targetDomain(host.slice(1), term);
      return { ...base, kind: name, domain, cidr4, cidr6 };
    }
    default:
      throw new SpfStop('permerror', `${term} is not an SPF mechanism`);
  }
}

/** Parses a whole record first: a syntax error anywhere is a permerror, whatever would have matched. */
function parsePolicy(record: string): Policy {
  const mechanisms: Mechanism[] = [];
  let redirect: string | null = null;
  for (const term of record.split(' ').slice(1)) {
    if (term === '') continue;
    const modifier = /^([a-z][a-z0-9_.-]*)=(.*)$/i.exec(term);
    if (modifier !== null) {
      const name = (modifier[1] ?? '').toLowerCase();
      if (name === 'redirect') {
        if (redirect !== null) throw new SpfStop('permerror', 'the record has two redirect= modifiers');
        redirect = targetDomain(modifier[2] ?? '', term);
      }
      continue;
    }
    mechanisms.push(parseMechanism(term));
  }
  return { mechanisms, redirect };
}

function inNetwork(ip: IpAddress, address: string, cidr4: number, cidr6: number): boolean {
  const parsed = parseIp(address);
  if (parsed === null || parsed.family !== ip.family) return false;
  const range = parseCidr(`${address}/${parsed.family === 4 ? cidr4 : cidr6}`);
  return range !== null && inRange(ip, range);
}

/**
 * Evaluates the SPF policy of `domain` for a message from `ip` (RFC 7208 `check_host()`, within the subset
 * named in this module's description). Never throws for what DNS answers: a failed lookup gives `temperror`.
 * @example
 * const evaluation = await evaluateSpf('192.0.2.7', 'example.org', { resolver });
 * evaluation.result; // 'pass'
 * evaluation.matched; // 'ip4:192.0.2.0/24'
 */
export async function evaluateSpf(ip: string, domain: string, options: SpfOptions): Promise<SpfEvaluation> {
  const { resolver, signal } = options;
  const maxLookups = options.maxLookups ?? 10;
  const maxVoidLookups = options.maxVoidLookups ?? 2;
  const client = parseIp(ip);
  let lookups = 0;
  let voids = 0;
  let topRecord: string | null = null;
  const top = lookupName(domain);
  const finish = (result: SpfResult, matched: string | null, reason: string): SpfEvaluation => ({
    result,
    domain: top ?? domain,
    record: topRecord,
    matched,
    lookups,
    reason,
  });
  if (client === null) return finish('permerror', null, `${ip} is not an IP address`);
  if (top === null) return finish('none', null, `${domain} is not a valid domain`);
  const txt = resolver.txt?.bind(resolver);
  if (txt === undefined) return finish('unsupported', null, 'the resolver has no txt() lookup');

  const ask = async <T>(run: () => Promise<DnsAnswer<T>>, what: string): Promise<readonly T[]> => {
    let answer: DnsAnswer<T>;
    try {
      answer = await run();
    } catch (error) {
      const reason = error instanceof DnsError ? error.reason : 'error';
      throw new SpfStop('temperror', `${what} failed (${reason})`);
    }
    if (answer.kind === 'records') return answer.records;
    voids++;
    if (voids > maxVoidLookups)
      throw new SpfStop('permerror', `more than ${maxVoidLookups} lookups found nothing (${what})`);
    return [];
  };
  const count = (term: string) => {
    lookups++;
    if (lookups > maxLookups)
      throw new SpfStop('permerror', `more than ${maxLookups} DNS-querying terms (at ${term})`);
  };

  /** The SPF record of `name`, or null (none). */
  const recordOf = async (name: string): Promise<string | null> => {
    let answer: DnsAnswer<string>;
    try {
      answer = await txt(name, signal === undefined ? {} : { signal });
    } catch (error) {
      const reason = error instanceof DnsError ? error.reason : 'error';
      throw new SpfStop('temperror', `TXT lookup of ${name} failed (${reason})`);
    }
    const records = answer.kind === 'records' ? answer.records : [];
    const spf = records.filter((text) => /^v=spf1(?: |$)/i.test(text));
    if (spf.length > 1)
      throw new SpfStop('permerror', `${name} has ${spf.length} SPF records (one is allowed)`);
    const record = spf[0];
    if (record !== undefined && record.length > MAX_RECORD_LENGTH)
      throw new SpfStop('permerror', `the SPF record of ${name} is too long`);
    return record ?? null;
  };

  const lookupOptions = signal === undefined ? {} : { signal };
  const matches = async (mechanism: Mechanism, current: string, depth: number): Promise<boolean> => {
    switch (mechanism.kind) {
      case 'all':
        return true;
      case 'ip4':
      case 'ip6':
        return mechanism.network !== null && inRange(client, mechanism.network);
      case 'a': {
        count(mechanism.text);
        const host = mechanism.domain ?? current;
        const addresses = await ask(
          () => resolver.addresses(host, lookupOptions),
          `A/AAAA lookup of ${host}`,
        );
        return addresses.some((address) => inNetwork(client, address, mechanism.cidr4, mechanism.cidr6));
      }
      case 'mx': {
        count(mechanism.text);
        const host = mechanism.domain ?? current;
        const exchanges = (await ask(() => resolver.mx(host, lookupOptions), `MX lookup of ${host}`))
          .map((record) => record.exchange)
          .filter((exchange) => exchange !== '');
        if (exchanges.length > MAX_MX_NAMES)
          throw new SpfStop('permerror', `${mechanism.text}: ${host} has more than ${MAX_MX_NAMES} MX hosts`);
        for (const exchange of exchanges) {
          const addresses = await ask(
            () => resolver.addresses(exchange, lookupOptions),
            `A/AAAA lookup of ${exchange}`,
          );
          if (addresses.some((address) => inNetwork(client, address, mechanism.cidr4, mechanism.cidr6)))
            return true;
        }
        return false;
      }
      case 'include': {
        count(mechanism.text);
        const inner = await checkHost(mechanism.domain ?? current, depth + 1);
        if (inner.result === 'none')
          throw new SpfStop('permerror', `${mechanism.text}: ${mechanism.domain} has no SPF record`);
        return inner.result === 'pass';
      }
      default:
        throw new SpfStop(
          'unsupported',
          `${mechanism.text}: ${mechanism.kind} is outside the supported SPF subset`,
        );
    }
  };

  const checkHost = async (
    name: string,
    depth: number,
  ): Promise<{ result: SpfResult; matched: string | null }> => {
    const record = await recordOf(name);
    if (depth === 0) topRecord = record;
    if (record === null) return { result: 'none', matched: null };
    const policy = parsePolicy(record);
    for (const mechanism of policy.mechanisms) {
      if (await matches(mechanism, name, depth)) {
        return { result: RESULT_OF[mechanism.qualifier], matched: mechanism.text };
      }
    }
    if (policy.redirect !== null) {
      count(`redirect=${policy.redirect}`);
      const target = await checkHost(policy.redirect, depth + 1);
      if (target.result === 'none')
        throw new SpfStop('permerror', `redirect=${policy.redirect}: that domain has no SPF record`);
      return { result: target.result, matched: target.matched ?? `redirect=${policy.redirect}` };
    }
    return { result: 'neutral', matched: null };
  };

  try {
    const { result, matched } = await checkHost(top, 0);
    const reasons: Record<string, string> = {
      none: `${top} publishes no SPF record`,
      neutral: `the SPF record of ${top} ends without a match for ${ip}`,
    };
    return finish(result, matched, reasons[result] ?? `${matched ?? 'the record'} gives ${result} for ${ip}`);
  } catch (error) {
    if (error instanceof SpfStop) return finish(error.result, null, error.why);
    throw error;
  }
}
