/**
 * The MX check: finds the domain's mail hosts (RFC 5321 §5.1, RFC 7505) and lets only guarded addresses through.
 * @module
 */

import { watchOptionalAbort } from '../abort-watch.js';
import type { DnsAnswer, MxRecord } from '../contracts/dns.js';
import { DnsError } from '../errors.js';
import { type AddressGuard, createAddressGuard, type GuardDecision } from '../net/guard.js';
import { lookupName } from '../net/name.js';
import { verdictOf } from '../result.js';
import { weakMemo } from '../weak-memo.js';
import type { Check, CheckOutcome, CheckState, MailHost } from './types.js';

/** One guard per `allowAddresses` list (options are resolved once, so the list object is stable). */
const guardFor = weakMemo((allow: readonly string[]): AddressGuard => createAddressGuard(allow));

/** A null MX (RFC 7505): `0 .`, which node:dns reports with an empty exchange. */
function isNullMx(record: MxRecord): boolean {
  return record.exchange === '' || record.exchange === '.';
}

/** MX hosts by preference (ties keep the order DNS gave), each host once, without null MX entries. */
function byPreference(records: readonly MxRecord[]): Hosts {
  const seen = new Set<string>();
  const hosts: { host: string; priority: number }[] = [];
  for (const record of records
    .filter((entry) => !isNullMx(entry))
    .toSorted((a, b) => a.priority - b.priority)) {
    const host = record.exchange.toLowerCase().replace(/\.$/, '');
    if (seen.has(host)) continue;
    seen.add(host);
    hosts.push({ host, priority: record.priority });
  }
  return hosts;
}

/**
 * {@link byPreference} of each MX answer, kept while the answer object lives: a caching resolver hands out the
 * same answer for every address of a domain, which then costs no sort, set or string work.
 */
const hostsByPreference = weakMemo(byPreference);

/** An abort signal that fires when the caller aborts or the verification's budget is spent. */
function budget(state: CheckState): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const remaining = state.deadline - state.runtime.now();
  const outer = state.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted || remaining <= 0) {
    controller.abort(outer?.reason);
    return { signal: controller.signal, release() {} };
  }
  const unwatch = watchOptionalAbort(outer, onAbort);
  const timer = setTimeout(() => controller.abort(new Error('verification budget spent')), remaining);
  return {
    signal: controller.signal,
    release() {
      clearTimeout(timer);
      unwatch();
    },
  };
}

/**
 * How a failed lookup ends the check: the budget ran out or the caller aborted (whatever the resolver threw
 * then), or DNS could not answer. Anything else is a resolver bug, left for the verifier to report.
 */
function failed(state: CheckState, error: unknown, signal: AbortSignal): CheckOutcome {
  if (signal.aborted) return verdictOf('timeout_exceeded');
  if (!(error instanceof DnsError)) throw error;
  state.reason = dnsFailure(error);
  return verdictOf('dns_error');
}

type HostOutcome =
  | {
      readonly kind: 'addresses';
      readonly allowed: readonly string[];
      readonly blocked: number;
      /** The first refused address with the guard's reason, for the result's `reason`. */
      readonly refused: string | null;
    }
  | { readonly kind: 'error'; readonly message: string };

/** The result's `reason` for an address the SSRF guard refused. */
function refusal(subject: string, address: string, decision: GuardDecision): string {
  const why = decision.detail ?? (decision.reason === 'malformed' ? 'not an IP address' : decision.reason);
  return (
    `${subject} ${address} (${why}) is not globally routable: mailvet does not connect to it; ` +
    `to allow it, add it to allowAddresses (--allow-address ${address.includes(':') ? `${address}/128` : `${address}/32`})`
  );
}

/** The result's `reason` for a DNS failure. */
function dnsFailure(error: unknown): string {
  return error instanceof DnsError ? `DNS lookup failed: ${error.message}` : 'DNS lookup failed';
}

/**
 * {@link hostOutcome} of each address answer, per guard, kept while the answer object lives (a caching resolver
 * hands out the same one for every address of the host): the guard's parsing of each address is done once.
 */
const outcomesByGuard = weakMemo(
  (_guard: AddressGuard) =>
    new WeakMap<DnsAnswer<string>, { readonly host: string; readonly outcome: HostOutcome }>(),
);

function guardedHost(host: string, answer: DnsAnswer<string>, guard: AddressGuard): HostOutcome {
  const outcomes = outcomesByGuard(guard);
  const known = outcomes.get(answer);
  if (known !== undefined && known.host === host) return known.outcome;
  const outcome = hostOutcome(host, answer, guard);
  outcomes.set(answer, { host, outcome });
  return outcome;
}

/** What one host's address lookup gives: its addresses past the guard, how many were refused. */
function hostOutcome(host: string, answer: DnsAnswer<string>, guard: AddressGuard): HostOutcome {
  const found = answer.kind === 'records' ? [...new Set(answer.records)] : [];
  const allowed: string[] = [];
  let refused: string | null = null;
  for (const address of found) {
    const decision = guard.check(address);
    if (decision.allowed) allowed.push(address);
    else refused ??= refusal(`the mail host ${host} resolves to`, address, decision);
  }
  return { kind: 'addresses', allowed, blocked: found.length - allowed.length, refused };
}

/** An MX target that is no host name (garbage, an IP literal's brackets) holds no address. */
const NO_ADDRESS: HostOutcome = { kind: 'addresses', allowed: [], blocked: 0, refused: null };

type Hosts = readonly { readonly host: string; readonly priority: number }[];

/** The check's outcome once every host's lookup is done (or the budget ran out: `aborted`). */
function conclude(
  state: CheckState,
  hosts: Hosts,
  outcomes: readonly HostOutcome[],
  aborted: boolean,
  implicit: boolean,
): CheckOutcome {
  const mailHosts: MailHost[] = [];
  for (const [index, outcome] of outcomes.entries()) {
    const candidate = hosts[index];
    if (candidate !== undefined && outcome.kind === 'addresses' && outcome.allowed.length > 0) {
      mailHosts.push({ host: candidate.host, priority: candidate.priority, addresses: outcome.allowed });
    }
  }
  if (mailHosts.length > 0) {
    state.mailHosts = mailHosts;
    return undefined;
  }
  if (aborted) return verdictOf('timeout_exceeded');
  const error = outcomes.find((outcome) => outcome.kind === 'error');
  if (error !== undefined) {
    state.reason = error.message;
    return verdictOf('dns_error');
  }
  for (const outcome of outcomes) {
    if (outcome.kind === 'addresses' && outcome.refused !== null) {
      state.reason = outcome.refused;
      return verdictOf('unroutable_ip_address');
    }
  }
  const names = hosts.map(({ host }) => host).join(', ');
  state.reason = implicit
    ? `${names} has no MX record and no A/AAAA address`
    : `no MX host of the domain has a usable address (${names})`;
  return verdictOf('no_dns_entries');
}

async function resolveHosts(
  state: CheckState,
  hosts: Hosts,
  guard: AddressGuard,
  signal: AbortSignal,
  implicit: boolean,
): Promise<CheckOutcome> {
  const resolver = state.runtime.resolver;
  const outcomes = await Promise.all(
    hosts.map(async ({ host }): Promise<HostOutcome> => {
      if (lookupName(host) === null) return NO_ADDRESS;
      try {
        return guardedHost(host, await resolver.addresses(host, { signal }), guard);
      } catch (error) {
        if (signal.aborted || error instanceof DnsError) return { kind: 'error', message: dnsFailure(error) };
        throw error;
      }
    }),
  );
  return conclude(state, hosts, outcomes, signal.aborted, implicit);
}

/** Reads the MX answer: a verdict (NXDOMAIN, null MX), or the hosts to look up (at most `maxMxHosts`). */
function hostsOf(
  state: CheckState,
  domain: string,
  answer: DnsAnswer<MxRecord>,
): { readonly verdict: CheckOutcome } | { readonly hosts: Hosts; readonly implicit: boolean } {
  if (answer.kind === 'nxdomain') {
    state.reason = `${domain} does not exist (NXDOMAIN)`;
    return { verdict: verdictOf('no_dns_entries') };
  }
  const records = answer.kind === 'records' ? answer.records : [];
  if (records.length > 0 && records.every(isNullMx)) {
    state.reason = `${domain} publishes a null MX (RFC 7505): it accepts no mail`;
    return { verdict: verdictOf('does_not_accept_mail') };
  }
  // No MX at all: the domain itself is the implicit MX, preference 0 (RFC 5321 §5.1).
  const hosts = records.length > 0 ? hostsByPreference(records) : [{ host: domain, priority: 0 }];
  state.mx_record = hosts[0]?.host ?? null;
  return { hosts: hosts.slice(0, state.options.maxMxHosts), implicit: records.length === 0 };
}

/** Marks "not every answer is at hand": the lookups must really be made. */
const NOT_CACHED = Symbol('not cached');

/**
 * The check's outcome from answers the resolver has at hand (`Resolver.peek`), with no lookup under way and so
 * no abort signal, budget timer or promise; {@link NOT_CACHED} when one answer is missing (or the budget is
 * already spent, which the lookup path reports).
 */
function fromCache(state: CheckState, domain: string, guard: AddressGuard): CheckOutcome | typeof NOT_CACHED {
  const resolver = state.runtime.resolver;
  if (resolver.peek === undefined || state.signal?.aborted === true) return NOT_CACHED;
  if (state.runtime.now() >= state.deadline) return NOT_CACHED;
  const answer = resolver.peek('mx', domain);
  if (answer === undefined) return NOT_CACHED;
  const read = hostsOf(state, domain, answer);
  if ('verdict' in read) return read.verdict;
  const outcomes: HostOutcome[] = [];
  for (const { host } of read.hosts) {
    if (lookupName(host) === null) {
      outcomes.push(NO_ADDRESS);
      continue;
    }
    const addresses = resolver.peek('addresses', host);
    if (addresses === undefined) return NOT_CACHED;
    outcomes.push(guardedHost(host, addresses, guard));
  }
  return conclude(state, read.hosts, outcomes, false, read.implicit);
}

async function route(state: CheckState, domain: string, guard: AddressGuard): Promise<CheckOutcome> {
  const { signal, release } = budget(state);
  try {
    let answer: DnsAnswer<MxRecord>;
    try {
      answer = await state.runtime.resolver.mx(domain, { signal });
    } catch (error) {
      return failed(state, error, signal);
    }
    const read = hostsOf(state, domain, answer);
    if ('verdict' in read) return read.verdict;
    return await resolveHosts(state, read.hosts, guard, signal, read.implicit);
  } finally {
    release();
  }
}

/**
 * Finds where mail for the domain goes and which addresses may be contacted:
 * - MX records, by preference (ties in the order DNS gave them), at most `maxMxHosts` hosts;
 * - a null MX (RFC 7505) gives `invalid`/`does_not_accept_mail`;
 * - no MX records: the domain's own A/AAAA addresses (implicit MX, RFC 5321 §5.1);
 * - NXDOMAIN, or no usable host at all (no MX and no address, or MX hosts without addresses) gives
 *   `invalid`/`no_dns_entries`, which RFC 5321 §5.1 says must be reported as an error;
 * - SERVFAIL, REFUSED or a DNS timeout gives `unknown`/`dns_error`, never `invalid`; a spent budget
 *   `unknown`/`timeout_exceeded`;
 * - every address passes the SSRF guard (`allowAddresses`); hosts left without an address are dropped, and
 *   when addresses were found but all were refused, the verdict is `invalid`/`unroutable_ip_address`.
 *
 * On success it sets `state.mailHosts` (guarded addresses only) and `state.mx_record` (the most preferred MX
 * host; the SMTP check replaces it with the host it used). A domain literal (`user@[192.0.2.1]`) is its own
 * mail host. Does nothing when the `dns` option is off or the syntax check found no address. When the resolver
 * has every answer at hand (`Resolver.peek`, as `cachedResolver` does), the check decides synchronously, with no
 * abort controller or budget timer.
 */
export const mxCheck: Check = {
  name: 'mx',
  run(state) {
    const address = state.address;
    if (!state.options.dns || address === null) return undefined;
    const guard = guardFor(state.options.allowAddresses);
    const literal = address.literalAddress;
    if (literal !== null) {
      state.mx_record = literal;
      const decision = guard.check(literal);
      if (!decision.allowed) {
        state.reason = refusal('the address literal', literal, decision);
        return verdictOf('unroutable_ip_address');
      }
      state.mailHosts = [{ host: literal, priority: 0, addresses: [literal] }];
      return undefined;
    }
    const cached = fromCache(state, address.domain, guard);
    return cached === NOT_CACHED ? route(state, address.domain, guard) : cached;
  },
};
