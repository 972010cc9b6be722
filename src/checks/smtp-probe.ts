/**
 * The work of the SMTP check (checks/smtp.ts), imported on its first probe: asks the domain's mail hosts whether
 * they accept the address (`RCPT TO`), then whether they accept any address (the catch-all probe).
 * @module
 */

import { printable } from '../classify/printable.js';
import { type ProviderProfile, profileOfHost } from '../classify/profiles.js';
import { providerOf } from '../classify/provider.js';
import { classifyError, classifyReply } from '../classify/reply.js';
import type { Lease, PoolTarget, RcptOutcome, SessionSettings } from '../contracts/prober.js';
import type { TranscriptHook } from '../contracts/smtp.js';
import { isSmtpError } from '../errors.js';
import type { SubStatus, Verdict } from '../result.js';
import { verdictOf } from '../result.js';
import { endWithOutcome, smtpSpan } from '../smtp-spans.js';
import { endSpan } from '../tracing.js';
import type { CheckOutcome, CheckState, MailHost } from './types.js';

/** Most transcript lines kept for one verification (replies are bounded too, by the reply parser). */
export const MAX_TRANSCRIPT_LINES = 500;

const VALID: Verdict = Object.freeze({ status: 'valid', sub_status: null });
const CATCH_ALL: Verdict = Object.freeze({ status: 'catch_all', sub_status: null });

/**
 * The `sub_status` when the local part needs SMTPUTF8 (RFC 6531) and the server does not offer it: nothing
 * was asked, so nothing is known (never `invalid`).
 */
export const NO_SMTPUTF8: SubStatus = 'smtp_not_checked';

function budgetSpent(state: CheckState): boolean {
  return state.signal?.aborted === true || state.runtime.now() >= state.deadline;
}

/** Transcript lines: `C: ` for what we wrote, `S: ` for what the server sent, `* ` for notes. */
function transcriptOf(state: CheckState): { hook: TranscriptHook | undefined; note(line: string): void } {
  const lines = state.transcript;
  if (lines === null) return { hook: undefined, note() {} };
  const push = (line: string) => {
    if (lines.length < MAX_TRANSCRIPT_LINES) lines.push(line);
  };
  return {
    hook: (direction, line) => push(`${direction === 'client' ? 'C' : 'S'}: ${line}`),
    note: (line) => push(`* ${line}`),
  };
}

/**
 * Failures after which the next mail host is tried (RFC 5321 §5.1): no connection, no greeting, a reply
 * that did not come in time, a `421`, a host backing off (after a `421` or "too many errors"), or a STARTTLS
 * that this host could not give. Anything else (a policy refusal, a dropped dialogue, garbage) is this
 * domain's answer.
 */
function triesNextHost(error: unknown): boolean {
  if (!isSmtpError(error)) return false;
  switch (error.kind) {
    case 'connection':
    case 'no_greeting':
    case 'timeout':
    case 'tls':
    case 'backoff':
      return true;
    case 'rejected':
      return error.smtpReply?.code === 421;
    default:
      return false;
  }
}

function hostLabel(target: PoolTarget): string {
  const ip = target.host.includes(':') ? `[${target.host}]` : target.host;
  return `${target.hostname} ${ip}:${target.port}`;
}

/** The `reason` of an address accepted by a provider that accepts every recipient at `RCPT TO`. */
function acceptsAllReason(target: PoolTarget, profile: ProviderProfile): string {
  return `${target.hostname} is ${profile.name}, which accepts every recipient at RCPT TO and bounces unknown ones later: its 250 does not show that the mailbox exists`;
}

/**
 * The verdict of an accepted address: catch-all or valid, by the domain's answer to a random address (the
 * catch-all probe, option `catchAll`). At a provider known to accept every recipient at `RCPT TO` (Yahoo / AOL),
 * a 250 alone is never `valid`: the address is `catch_all` unless the probe sees a random address refused.
 */
async function catchAllVerdict(
  state: CheckState,
  target: PoolTarget,
  sender: string,
  settings: SessionSettings,
  lease: Lease,
  note: (line: string) => void,
  profile: ProviderProfile | null,
): Promise<Verdict> {
  const acceptsAll = profile?.acceptsAllAtRcpt === true;
  const catchAll = (): Verdict => {
    state.accept_all = true;
    if (profile?.acceptsAllAtRcpt) state.reason = acceptsAllReason(target, profile);
    return CATCH_ALL;
  };
  if (!state.options.catchAll) return acceptsAll ? catchAll() : VALID;
  const domain = state.address!.domain;
  const tracing = state.transcript !== null; // no transcript: no strings built for it
  if (tracing) note(`catch-all probe of ${domain} at ${hostLabel(target)}, in a session of its own`);
  const span = smtpSpan(state.span, 'mailvet.smtp.catch_all', target);
  try {
    const answer = await state.runtime.prober.catchAll(
      domain,
      target,
      { sender, settings },
      span === undefined ? lease : { ...lease, span },
    );
    span?.span.setAttribute('mailvet.catch_all.result', answer);
    endSpan(span);
    if (tracing) note(`catch-all probe: ${answer}`);
    if (answer === 'accepted') return catchAll();
    // 'refused' confirms the address; 'inconclusive' (the server deferred or blocked the probe) says nothing
    // against it, so the server's acceptance stands, unless the provider accepts everyone anyway.
    return answer === 'inconclusive' && acceptsAll ? catchAll() : VALID;
  } catch (error) {
    endSpan(span, error);
    // The probe itself never fails; only this verification's budget or signal can end the wait.
    if (isSmtpError(error)) {
      state.reason = `catch-all probe at ${hostLabel(target)}: ${printable(error.message)}`;
      return verdictOf('timeout_exceeded');
    }
    throw error;
  }
}

/** The most characters of a server's reply text quoted in a `reason`. */
const MAX_REASON_TEXT = 300;

/** The result's `reason` for the reply that decided: who said it, to which command, and what. */
function replyReason(target: PoolTarget, outcome: Extract<RcptOutcome, { kind: 'reply' }>): string {
  const { reply, stage } = outcome;
  const command = stage === 'mail' ? 'MAIL FROM' : 'RCPT TO';
  const text = printable(reply.text).slice(0, MAX_REASON_TEXT);
  return `${target.hostname} [${target.host}] answered ${command} with ${reply.code} ${text}`.trimEnd();
}

async function verdictOfOutcome(
  state: CheckState,
  outcome: RcptOutcome,
  target: PoolTarget,
  sender: string,
  settings: SessionSettings,
  lease: Lease,
  note: (line: string) => void,
): Promise<Verdict> {
  if (outcome.kind === 'no_smtputf8') {
    note('the local part needs SMTPUTF8, which this server does not offer: not asked');
    return verdictOf(NO_SMTPUTF8);
  }
  const profile = profileOfHost(target.hostname);
  const result = classifyReply(outcome.reply, outcome.stage, profile?.id ?? null);
  if (result !== 'accepted') {
    state.reason = replyReason(target, outcome);
    return verdictOf(result);
  }
  if (outcome.stage !== 'rcpt') {
    state.reason = replyReason(target, outcome);
    return verdictOf('smtp_protocol_error');
  }
  return catchAllVerdict(state, target, sender, settings, lease, note, profile);
}

/** What the probe of every address with the same options sends: session settings and envelope sender. */
interface Envelope {
  readonly heloHost: string;
  readonly settings: SessionSettings;
  readonly sender: string;
}

/**
 * The {@link Envelope} of each options object (a verifier's, or one call's with overrides), made once rather than
 * for every address: the pool also keys its sessions by the settings object.
 */
const envelopes = new WeakMap<CheckState['options'], Envelope>();

function envelopeOf(state: CheckState): Envelope {
  const { options } = state;
  const heloHost = options.heloHost ?? state.runtime.prober.heloHost;
  const known = envelopes.get(options);
  if (known !== undefined && known.heloHost === heloHost) return known;
  const envelope: Envelope = {
    heloHost,
    settings: {
      heloHost,
      tls: options.tls,
      connectTimeoutMs: options.connectTimeoutMs,
      replyTimeoutMs: options.replyTimeoutMs,
    },
    sender: options.mailFrom ?? `verify@${heloHost}`,
  };
  envelopes.set(options, envelope);
  return envelope;
}

/** Time kept between the end of the last attempt's waits and the end of the budget, in milliseconds. */
const ATTEMPT_MARGIN_MS = 25;

/**
 * The session settings of one attempt, with `msLeft` of budget and `attemptsLeft` mail host addresses still to try
 * (this one included): the connect, greeting and per-reply waits are at most half of what is left while another
 * address remains to be tried, else all of it, less a small margin. So a stalled host leaves time for the next one,
 * and a silent one is found silent (no greeting) before the budget ends, whatever the budget. `settings` itself when
 * its waits fit the share.
 * @example
 * attemptSettings({ heloHost: 'h', tls: 'never', connectTimeoutMs: 5000, replyTimeoutMs: 5000 }, 4000, 2);
 * // { ..., connectTimeoutMs: 1987, replyTimeoutMs: 1987 }
 */
export function attemptSettings(
  settings: SessionSettings,
  msLeft: number,
  attemptsLeft: number,
): SessionSettings {
  const share = Math.max(1, Math.floor((msLeft - ATTEMPT_MARGIN_MS) / (attemptsLeft > 1 ? 2 : 1)));
  const reply = settings.replyTimeoutMs ?? Number.POSITIVE_INFINITY;
  if (share >= settings.connectTimeoutMs && share >= reply) return settings;
  return {
    ...settings,
    connectTimeoutMs: Math.min(settings.connectTimeoutMs, share),
    replyTimeoutMs: Math.min(reply, share),
  };
}

/** The `reason` of an attempt that failed: the host, and what went wrong there. */
function failureReason(mailHost: MailHost, ip: string, error: unknown): string | undefined {
  return isSmtpError(error) ? `${mailHost.host} [${ip}]: ${printable(error.message)}` : undefined;
}

async function probe(state: CheckState, hosts: readonly MailHost[]): Promise<CheckOutcome> {
  const { options, runtime } = state;
  const address = state.address!;
  const { settings, sender } = envelopeOf(state);
  const transcript = transcriptOf(state);
  const lease: Lease = { deadline: state.deadline, signal: state.signal, trace: transcript.hook };
  let failure: SubStatus = 'failed_smtp_connection';

  const last = Math.min(hosts.length, options.maxMxHosts) - 1;
  let attemptsLeft = 0;
  for (let hostIndex = 0; hostIndex <= last; hostIndex++) attemptsLeft += hosts[hostIndex]!.addresses.length;
  for (let hostIndex = 0; hostIndex <= last; hostIndex++) {
    const mailHost = hosts[hostIndex]!;
    for (let ipIndex = 0; ipIndex < mailHost.addresses.length; ipIndex++, attemptsLeft--) {
      const ip = mailHost.addresses[ipIndex]!;
      // While a host backs off, a request with somewhere else to go does not wait for it.
      const fallback = hostIndex < last || ipIndex < mailHost.addresses.length - 1;
      if (budgetSpent(state)) {
        state.reason ??= `${mailHost.host} [${ip}]: not tried: the time budget was spent before it could be asked`;
        return verdictOf('timeout_exceeded');
      }
      const target: PoolTarget = { host: ip, port: options.smtpPort, hostname: mailHost.host };
      if (state.transcript !== null) transcript.note(hostLabel(target));
      const mark = state.transcript?.length ?? 0;
      const attempt = attemptSettings(settings, state.deadline - runtime.now(), attemptsLeft);
      const span = smtpSpan(state.span, 'mailvet.smtp.rcpt', target);
      let outcome: RcptOutcome;
      try {
        outcome = await runtime.prober.rcpt(
          target,
          { sender, recipient: address.normalized, smtpUtf8: address.smtpUtf8, settings: attempt, fallback },
          span === undefined ? lease : { ...lease, span },
        );
      } catch (error) {
        endSpan(span, error);
        const reason = failureReason(mailHost, ip, error);
        // A server that never greeted is silent, whichever wait ran out first: its own greeting timeout or the budget.
        const silent = isSmtpError(error) && error.kind === 'no_greeting';
        if (budgetSpent(state) && !silent) {
          if (reason !== undefined) state.reason = reason;
          return verdictOf('timeout_exceeded');
        }
        failure = classifyError(error);
        transcript.note(`failed: ${failure}`);
        if (reason !== undefined) state.reason = reason;
        if (triesNextHost(error)) continue;
        state.mx_record = mailHost.host;
        return verdictOf(failure);
      }
      endWithOutcome(span, outcome);
      if (outcome.reused) state.transcript?.splice(mark, 0, '* reusing an open session');
      state.mx_record = mailHost.host;
      return verdictOfOutcome(state, outcome, target, sender, attempt, lease, transcript.note);
    }
  }
  return verdictOf(failure);
}

/**
 * The SMTP check's work on the mail hosts the MX check found (see `smtpCheck`): names the provider, then probes
 * unless the `smtp` or `dns` option is off or the syntax check found no address.
 */
export function smtpOutcome(
  state: CheckState,
  hosts: readonly MailHost[],
): CheckOutcome | Promise<CheckOutcome> {
  state.smtp_provider = providerOf(hosts.map((host) => host.host));
  if (!state.options.smtp || !state.options.dns || state.address === null) return undefined;
  return probe(state, hosts);
}
