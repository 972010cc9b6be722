/**
 * What a check is and what it sees.
 * @module
 */
import type { Resolver } from '../contracts/dns.js';
import type { TlsPolicy, Transport } from '../contracts/smtp.js';
import type { KnownResultsTtl } from '../known/ttl.js';
import type { KnownResults } from '../known/types.js';
import type { VerifierObserver } from '../observer.js';
import type { Verdict } from '../result.js';
import type { VerifierRuntime } from '../runtime.js';
import type { TraceSpan } from '../tracing.js';

/**
 * Changes to a built-in list: an array replaces the list, an object adds to and removes from it.
 * Entries are domains (disposable, free) or local parts (role); matching ignores case.
 */
export type ListPatch =
  | readonly string[]
  | { readonly add?: readonly string[]; readonly remove?: readonly string[] };

/** Overrides of the built-in data lists. */
export interface ListOptions {
  /** Disposable (throwaway) domains. Subdomains of a listed domain match too. */
  readonly disposable?: ListPatch;
  /** Free consumer mail providers. */
  readonly free?: ListPatch;
  /** Role local parts (info, sales, ...). */
  readonly role?: ListPatch;
}

/** Options after validation and defaulting. */
export interface ResolvedOptions {
  readonly dns: boolean;
  readonly smtp: boolean;
  readonly allowSmtpUtf8: boolean;
  readonly allowQuotedLocal: boolean;
  readonly allowDomainLiteral: boolean;
  readonly allowTlds: ReadonlySet<string>;
  readonly blocklist: ReadonlySet<string>;
  readonly allowlist: ReadonlySet<string>;
  readonly roleIsDoNotMail: boolean;
  readonly suggestDomains: readonly string[];
  readonly lists: ListOptions;
  readonly checks: readonly Check[] | undefined;
  readonly disableChecks: ReadonlySet<string>;
  readonly resolver: Resolver | undefined;
  readonly transport: Transport | undefined;
  readonly heloHost: string | undefined;
  readonly mailFrom: string | undefined;
  readonly smtpPort: number;
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly replyTimeoutMs: number;
  readonly tls: TlsPolicy;
  readonly allowAddresses: readonly string[];
  readonly catchAll: boolean;
  readonly catchAllTtlMs: number;
  readonly trace: boolean;
  readonly maxMxHosts: number;
  readonly perMxConcurrency: number;
  readonly concurrency: number;
  readonly maxRcptPerSession: number;
  readonly maxRejectsPerSession: number;
  readonly idleSessionMs: number;
  readonly mxBackoffMs: number;
  readonly observer: VerifierObserver | undefined;
  readonly signal: AbortSignal | undefined;
  readonly knownResults: KnownResults | undefined;
  readonly knownResultsTtl: KnownResultsTtl;
  readonly fresh: boolean;
  readonly knownResultsNamespace: string;
}

/** An address that passed the syntax check, in its canonical parts. */
export interface AddressParts {
  /** Local part, NFC-normalized, case kept. */
  readonly local: string;
  /** Domain in ASCII (A-label) form, lower case. For a domain literal: the literal with brackets. */
  readonly domain: string;
  /** Domain in Unicode (U-label) form, lower case. */
  readonly unicodeDomain: string;
  /** `local@domain` (ASCII domain). */
  readonly normalized: string;
  /** True when the local part needs SMTPUTF8 (RFC 6531). */
  readonly smtpUtf8: boolean;
  /** The IP address of a domain literal (`[192.0.2.1]` gives `192.0.2.1`), else `null`. */
  readonly literalAddress: string | null;
}

/** One mail host of a domain, in preference order, with the addresses found for it. */
export interface MailHost {
  /** The MX host name (or the domain itself for an implicit MX). */
  readonly host: string;
  /** MX preference. */
  readonly priority: number;
  /** Addresses that passed the SSRF guard. */
  readonly addresses: readonly string[];
}

/**
 * The state a verification builds up as its checks run. Checks read it and fill in their findings;
 * the verifier turns it into a `VerificationResult`.
 */
export interface CheckState {
  /** The input, trimmed. */
  readonly email: string;
  /** The options of this verification. */
  readonly options: ResolvedOptions;
  /** Shared resources of the verifier: resolver, transport, pools, caches, clock. */
  readonly runtime: VerifierRuntime;
  /** Time (by `runtime.now()`) at which this verification's budget (`timeoutMs`) is spent. */
  readonly deadline: number;
  /** The caller's abort signal, if any. */
  readonly signal: AbortSignal | undefined;
  /** Set by the syntax check. */
  address: AddressParts | null;
  /** Local part as read from the input (even when the syntax check fails), or `null`. */
  user: string | null;
  /** Domain as read from the input (ASCII, lower case when convertible), or `null`. */
  domain: string | null;
  /** The address or its domain is on the caller's allowlist: no `do_not_mail` verdict applies. */
  allowlisted: boolean;
  disposable: boolean;
  role: boolean;
  free: boolean;
  accept_all: boolean;
  did_you_mean: string | null;
  mx_record: string | null;
  smtp_provider: string | null;
  /** Set by the MX check: mail hosts to probe, in order. */
  mailHosts: readonly MailHost[] | null;
  /** SMTP transcript lines, collected when the `trace` option is on. */
  transcript: string[] | null;
  /** Why the verdict is what it is (the result's `reason`), set by the check that knows; `null` for none. */
  reason: string | null;
  /**
   * The span of the check being run, when an OpenTelemetry SDK records this verification (docs/operations.md,
   * "Traces"), else `undefined`: a check may start its own child spans under it (`childSpan(state.span, ...)`).
   */
  span: TraceSpan | undefined;
  /** Ask the mail server even when a known result is kept (the call's `fresh` option). */
  readonly fresh: boolean;
  /** The namespace of known results this verification reads and writes (the call's `knownResultsNamespace`). */
  readonly knownResultsNamespace: string;
  /** When a known result answered: the time its mail server was asked (ms since the epoch); else `null`. */
  checkedAt: number | null;
}

/** What a check returns: a final {@link Verdict} stops the run; `undefined` lets the next check go. */
export type CheckOutcome = Verdict | undefined;

/** The names of the built-in checks, in their default order. */
export type BuiltinCheckName = 'syntax' | 'lists' | 'typo' | 'mx' | 'smtp';

/**
 * One composable step of a verification. Built-ins are exported; add your own through the `checks` option.
 * @example
 * const noExample: Check = {
 *   name: 'no-example',
 *   run: (state) => (state.domain?.endsWith('.example') ? verdictOf('failed_syntax_check') : undefined),
 * };
 */
export interface Check {
  /** Unique name, used by `disableChecks`. */
  readonly name: string;
  /** Runs the check. Synchronous checks may return their outcome directly. */
  run(state: CheckState): CheckOutcome | Promise<CheckOutcome>;
  /**
   * When true, the check still runs after an earlier check gave the final verdict, to annotate the result
   * (the built-in typo check does, so an address that fails the syntax check on a near-miss domain still gets
   * `did_you_mean`). Its outcome and any error it throws are then ignored. @default false
   */
  readonly annotatesFailures?: boolean;
}
