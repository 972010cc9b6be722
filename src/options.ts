/**
 * Options of `verify` and `createVerifier`, their defaults, and their one-time validation.
 * @module
 */

import type { Check, ListOptions, ResolvedOptions } from './checks/types.js';
import type { Resolver } from './contracts/dns.js';
import type { TlsPolicy, Transport } from './contracts/smtp.js';
import { heloHostProblem, mailFromProblem } from './envelope-options.js';
import { OptionsError } from './errors.js';
import { type KnownResultsTtl, resolveKnownTtl } from './known/ttl.js';
import { type KnownResults, MAX_NAMESPACE_LENGTH } from './known/types.js';
import { parseCidrList } from './net/guard.js';
import { observerOption, type VerifierObserver } from './observer.js';
import {
  type BooleanField,
  type IntegerField,
  type OptionField,
  VERIFY_FIELDS,
  verifyBoolean,
  verifyInteger,
} from './option-fields.js';

export type { ListOptions, ListPatch, ResolvedOptions } from './checks/types.js';
export type { TlsPolicy };

/** Options of a verification. Every field is optional; defaults are in {@link DEFAULTS}. */
export interface VerifyOptions {
  /** Look up MX records. With `false` no network check runs. @default true */
  readonly dns?: boolean;
  /** Probe the mail server with `RCPT TO`. @default true */
  readonly smtp?: boolean;
  /** Accept internationalized (RFC 6531) local parts. @default true */
  readonly allowSmtpUtf8?: boolean;
  /** Accept quoted local parts (`"john doe"@example.com`). @default false */
  readonly allowQuotedLocal?: boolean;
  /** Accept domain literals (`user@[192.0.2.1]`). @default false */
  readonly allowDomainLiteral?: boolean;
  /** Special-use TLDs (or names such as `localhost`) to accept, e.g. `['test']`. @default [] */
  readonly allowTlds?: readonly string[];
  /** Addresses or domains that are `do_not_mail`/`blocklisted`. A domain entry also matches its subdomains. @default [] */
  readonly blocklist?: readonly string[];
  /** Addresses or domains never given a `do_not_mail` verdict (they are still checked). @default [] */
  readonly allowlist?: readonly string[];
  /** Give role addresses the verdict `do_not_mail`/`role_based`. @default false */
  readonly roleIsDoNotMail?: boolean;
  /** Extra popular domains that typo suggestions may point to. @default [] */
  readonly suggestDomains?: readonly string[];
  /** Changes to the built-in disposable, free and role lists. @default {} */
  readonly lists?: ListOptions;
  /** The checks to run, in order. @default DEFAULT_CHECKS */
  readonly checks?: readonly Check[];
  /** Names of checks to skip (e.g. `['typo']`). @default [] */
  readonly disableChecks?: readonly string[];

  /** DNS seam. @default cachedResolver(nodeResolver()) */
  readonly resolver?: Resolver;
  /** TCP seam. @default tcpTransport() */
  readonly transport?: Transport;
  /** Host name sent in EHLO/HELO. @default the machine's host name */
  readonly heloHost?: string;
  /** Envelope sender for `MAIL FROM`. @default `verify@<heloHost>` */
  readonly mailFrom?: string;
  /** SMTP port. @default 25 */
  readonly smtpPort?: number;
  /** Budget of one whole verification, in milliseconds. @default 10000 */
  readonly timeoutMs?: number;
  /** Budget of one TCP connect, in milliseconds. @default 5000 */
  readonly connectTimeoutMs?: number;
  /**
   * Longest wait for each reply of the mail server after the greeting (EHLO, MAIL, RCPT ...), in milliseconds,
   * so that a server that greets and then stalls gives way to the next MX host instead of spending the whole
   * budget. Applies to the sessions a verification opens. @default 5000
   */
  readonly replyTimeoutMs?: number;
  /** STARTTLS policy. @default 'never' */
  readonly tls?: TlsPolicy;
  /** CIDR ranges that the SSRF guard lets through although not globally routable. @default [] */
  readonly allowAddresses?: readonly string[];
  /** Probe a random local part to detect catch-all domains. @default true */
  readonly catchAll?: boolean;
  /** How long a domain's catch-all answer is cached, in milliseconds. @default 3600000 */
  readonly catchAllTtlMs?: number;
  /** Record the SMTP dialogue in `smtp_transcript`. @default false */
  readonly trace?: boolean;
  /** Most MX hosts tried per domain. @default 3 */
  readonly maxMxHosts?: number;
  /** Most simultaneous SMTP sessions to one MX host. @default 2 */
  readonly perMxConcurrency?: number;
  /** Most simultaneous SMTP sessions in all. @default 64 */
  readonly concurrency?: number;
  /** Most `RCPT TO` commands in one SMTP session before it is closed and a new one opened. @default 20 */
  readonly maxRcptPerSession?: number;
  /**
   * Most refused `RCPT TO` and `MAIL FROM` in one SMTP session before it is closed and a new one opened: below the
   * error limits of mail servers (Postfix slows down after 10 and drops the session after 20), which punish a
   * sender that probes many dead addresses in one session. A pipelined group can pass it by one, its own refused
   * `MAIL FROM`. @default 8
   */
  readonly maxRejectsPerSession?: number;
  /** How long an idle SMTP session is kept for reuse, in milliseconds. @default 5000 */
  readonly idleSessionMs?: number;
  /**
   * How long a mail host (`ip:port`) is left alone after it answered `421` (closing the session) or refused with
   * "too many errors" (Postfix's `421 4.7.0 Error: too many errors`), in milliseconds; `0` disables backoff.
   * Meanwhile no new session is opened to it: a verification moves on to its next MX host, or waits for the end
   * if its budget (`timeoutMs`) outlasts it, or else ends `unknown`/`mail_server_temporary_error`.
   * @default 30000
   */
  readonly mxBackoffMs?: number;
  /**
   * Callbacks told about finished verifications and handed readers of the DNS cache's and the SMTP pool's
   * counters (see {@link VerifierObserver}): where metrics come from. With none, nothing extra runs.
   * @default none
   */
  readonly observer?: VerifierObserver;
  /** Aborts the verification: it then ends `unknown`/`timeout_exceeded`. */
  readonly signal?: AbortSignal;
  /**
   * Known results (docs/known-results.md): the verdicts of addresses a mail server was asked about, kept for a time
   * that depends on the status, answer the next verification of the same address in the same namespace instead of a
   * new SMTP session (the syntax, list and DNS checks still run). With it, every result carries `checked_at`.
   * @default none (every verification asks the mail server)
   */
  readonly knownResults?: KnownResults;
  /**
   * How long a known result answers, in milliseconds, per status (`valid`, `invalid`, `catch_all`, `unknown`),
   * 0-7776000000 (90 days); `0` keeps none of that status. Members left out keep their default.
   * @default { valid: 604800000, invalid: 604800000, catch_all: 604800000, unknown: 600000 }
   */
  readonly knownResultsTtlMs?: Partial<KnownResultsTtl>;
  /** Ask the mail server even when a known result is kept (the new answer is kept in its place). @default false */
  readonly fresh?: boolean;
  /**
   * The namespace of known results this verification reads and writes: results kept in one never answer another
   * (the HTTP API and bulk jobs use the caller's tenant, the job's owner). At most 1024 characters, no NUL character
   * or lone surrogate. @default ''
   */
  readonly knownResultsNamespace?: string;
}

/**
 * The options that shape a verifier's shared resources (its resolver, transport, pools and caches): they can
 * be set on `createVerifier` only, never per call.
 */
export const VERIFIER_LEVEL_OPTIONS = Object.freeze([
  'resolver',
  'transport',
  'concurrency',
  'perMxConcurrency',
  'maxRcptPerSession',
  'maxRejectsPerSession',
  'idleSessionMs',
  'mxBackoffMs',
  'catchAllTtlMs',
  'knownResults',
  'knownResultsTtlMs',
  'observer',
] as const satisfies readonly (keyof VerifyOptions)[]);

/** A name in {@link VERIFIER_LEVEL_OPTIONS}. */
export type VerifierLevelOption = (typeof VERIFIER_LEVEL_OPTIONS)[number];

/**
 * What one `verifier.verify(email, overrides)` call may override: every {@link VerifyOptions} member except the
 * verifier-level ones, so the compiler (not a runtime `OptionsError`) says when one is passed per call.
 */
export type VerifyCallOptions = Omit<VerifyOptions, VerifierLevelOption>;

/** The scalar fields' defaults of a table: each integer and boolean row's `default`. */
function defaultsOf<T extends Record<string, OptionField>>(
  fields: T,
): {
  readonly [K in keyof T as T[K] extends IntegerField | BooleanField ? K : never]: T[K] extends IntegerField
    ? number
    : boolean;
} {
  const defaults: Record<string, number | boolean> = {};
  for (const [name, field] of Object.entries(fields)) {
    if (field.kind !== 'custom') defaults[name] = field.default;
  }
  return defaults as never;
}

/** The documented defaults, read off {@link VERIFY_FIELDS}. */
export const DEFAULTS = Object.freeze({ ...defaultsOf(VERIFY_FIELDS), tls: 'never' as TlsPolicy });

/** Every option's name: the rows of {@link VERIFY_FIELDS}, which must hold one per `VerifyOptions` member. */
const KNOWN_KEYS: ReadonlySet<string> = new Set(
  Object.keys(VERIFY_FIELDS satisfies Record<keyof Required<VerifyOptions>, OptionField>),
);

const MAX_LIST_ENTRIES = 1_000_000;
const MAX_ENTRY_LENGTH = 320;

function strings(value: unknown, key: string): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new OptionsError(key, 'must be an array of strings');
  if (value.length > MAX_LIST_ENTRIES)
    throw new OptionsError(key, `must have at most ${MAX_LIST_ENTRIES} entries`);
  for (const entry of value) {
    if (typeof entry !== 'string' || entry.length === 0 || entry.length > MAX_ENTRY_LENGTH) {
      throw new OptionsError(
        key,
        `entries must be non-empty strings of at most ${MAX_ENTRY_LENGTH} characters`,
      );
    }
  }
  return value as readonly string[];
}

/** Lower-cases and trims list entries; strips a leading `@` or `.` from domain entries. */
function entrySet(value: unknown, key: string): ReadonlySet<string> {
  return new Set(strings(value, key).map((entry) => entry.trim().toLowerCase().replace(/^[@.]/, '')));
}

function envelopeOption(options: VerifyOptions, key: 'heloHost' | 'mailFrom'): string | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  const problem = key === 'heloHost' ? heloHostProblem(value) : mailFromProblem(value);
  if (problem !== undefined) throw new OptionsError(key, problem);
  return value as string;
}

function listPatch(value: unknown, key: string): void {
  if (value === undefined || Array.isArray(value)) {
    strings(value, key);
    return;
  }
  if (typeof value !== 'object' || value === null)
    throw new OptionsError(key, 'must be an array or { add, remove }');
  const patch = value as Record<string, unknown>;
  for (const field of Object.keys(patch)) {
    if (field !== 'add' && field !== 'remove')
      throw new OptionsError(`${key}.${field}`, 'is not a known option');
  }
  strings(patch.add, `${key}.add`);
  strings(patch.remove, `${key}.remove`);
}

function lists(value: unknown): ListOptions {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError('lists', 'must be an object');
  }
  for (const [field, patch] of Object.entries(value)) {
    if (field !== 'disposable' && field !== 'free' && field !== 'role') {
      throw new OptionsError(`lists.${field}`, 'is not a known option');
    }
    listPatch(patch, `lists.${field}`);
  }
  return value as ListOptions;
}

function checks(value: unknown): readonly Check[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) throw new OptionsError('checks', 'must be an array of checks');
  for (const check of value) {
    if (
      typeof check !== 'object' ||
      check === null ||
      typeof check.name !== 'string' ||
      typeof check.run !== 'function'
    ) {
      throw new OptionsError('checks', 'entries must be objects with a string `name` and a `run` function');
    }
  }
  return value as readonly Check[];
}

function seam<T>(value: unknown, key: string, methods: readonly string[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null)
    throw new OptionsError(key, `must be an object with ${methods.join(', ')}`);
  for (const method of methods) {
    if (typeof (value as Record<string, unknown>)[method] !== 'function') {
      throw new OptionsError(key, `must have a ${method}() method`);
    }
  }
  return value as T;
}

function signalOption(signal: unknown): AbortSignal | undefined {
  if (signal !== undefined && !(typeof signal === 'object' && signal !== null && 'aborted' in signal)) {
    throw new OptionsError('signal', 'must be an AbortSignal');
  }
  return signal as AbortSignal | undefined;
}

/** A NUL character or a lone surrogate: what a database's text cannot hold. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Validates a known-results namespace (the `knownResultsNamespace` option): a string of at most
 * {@link MAX_NAMESPACE_LENGTH} characters without NUL characters or lone surrogates (what a job's owner may be).
 * Throws an `OptionsError` naming `option`.
 */
export function knownResultsNamespaceOf(value: unknown, option = 'knownResultsNamespace'): string {
  if (value === undefined) return '';
  if (typeof value !== 'string' || value.length > MAX_NAMESPACE_LENGTH || UNSTORABLE.test(value)) {
    throw new OptionsError(
      option,
      `must be a string of at most ${MAX_NAMESPACE_LENGTH} characters without NUL characters or lone surrogates`,
    );
  }
  return value;
}

const BUDGET_KEYS = new Set(['timeoutMs', 'connectTimeoutMs', 'replyTimeoutMs', 'signal']);

/** Most budgets kept per options object (the HTTP API's `timeout` parameter gives one per value asked for). */
const MAX_BUDGETS_PER_BASE = 32;

/** Options objects with a budget applied, by base and `timeoutMs/connectTimeoutMs/replyTimeoutMs`. */
const budgets = new WeakMap<ResolvedOptions, Map<string, ResolvedOptions>>();

/** The budget applied per frozen overrides object (which cannot change), with the base it was applied to. */
const frozenBudgets = new WeakMap<
  VerifyOptions,
  { readonly base: ResolvedOptions; readonly budgeted: ResolvedOptions | undefined }
>();

/**
 * The per-call fast path: when `overrides` set nothing but `timeoutMs`, `connectTimeoutMs`, `replyTimeoutMs` and/or
 * `signal` (what an HTTP request carries), validates just those and returns `base` with them applied, without
 * re-resolving everything. Returns `undefined` when `overrides` hold any other key, so the caller falls back to
 * {@link resolveOptions}.
 *
 * Without a signal of the call's own, the same budget on the same `base` gives the same object (up to
 * {@link MAX_BUDGETS_PER_BASE} budgets per base, then a new one per call): no copy of every option per request,
 * and what is cached per options object (the SMTP envelope and the pool's session profile) is made once. A frozen
 * `overrides` object (`Object.freeze`, as the HTTP API passes one per `timeout` value) is read once per base: the
 * next call with it returns the same answer at the cost of one lookup.
 */
export function applyBudget(base: ResolvedOptions, overrides: VerifyOptions): ResolvedOptions | undefined {
  const known = frozenBudgets.get(overrides);
  if (known?.base === base) return known.budgeted;
  const budgeted = budgetOf(base, overrides);
  if (Object.isFrozen(overrides)) frozenBudgets.set(overrides, { base, budgeted });
  return budgeted;
}

function budgetOf(base: ResolvedOptions, overrides: VerifyOptions): ResolvedOptions | undefined {
  let keys = 0;
  for (const key in overrides) {
    if (!BUDGET_KEYS.has(key)) return undefined;
    keys++;
  }
  if (keys === 0) return base;
  const timeoutMs =
    overrides.timeoutMs === undefined ? base.timeoutMs : verifyInteger(overrides, 'timeoutMs');
  const connectTimeoutMs =
    overrides.connectTimeoutMs === undefined
      ? base.connectTimeoutMs
      : verifyInteger(overrides, 'connectTimeoutMs');
  const replyTimeoutMs =
    overrides.replyTimeoutMs === undefined ? base.replyTimeoutMs : verifyInteger(overrides, 'replyTimeoutMs');
  const signal = overrides.signal === undefined ? base.signal : signalOption(overrides.signal);
  if (signal !== base.signal) return { ...base, timeoutMs, connectTimeoutMs, replyTimeoutMs, signal };
  if (
    timeoutMs === base.timeoutMs &&
    connectTimeoutMs === base.connectTimeoutMs &&
    replyTimeoutMs === base.replyTimeoutMs
  ) {
    return base;
  }
  const key = `${timeoutMs}/${connectTimeoutMs}/${replyTimeoutMs}`;
  let known = budgets.get(base);
  const cached = known?.get(key);
  if (cached !== undefined) return cached;
  const budgeted = { ...base, timeoutMs, connectTimeoutMs, replyTimeoutMs };
  if (known === undefined) {
    known = new Map();
    budgets.set(base, known);
  }
  if (known.size < MAX_BUDGETS_PER_BASE) known.set(key, budgeted);
  return budgeted;
}

/**
 * Validates options once and fills in defaults. Throws an {@link OptionsError} naming the first bad option.
 * Unknown keys are errors too, so that a misspelt option never goes unnoticed.
 */
export function resolveOptions(options: VerifyOptions = {}): ResolvedOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new OptionsError('options', 'must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!KNOWN_KEYS.has(key)) throw new OptionsError(key, 'is not a known option');
  }
  const tls = options.tls ?? DEFAULTS.tls;
  if (tls !== 'never' && tls !== 'opportunistic' && tls !== 'required') {
    throw new OptionsError('tls', "must be 'never', 'opportunistic' or 'required'");
  }
  const signal = signalOption(options.signal);
  return {
    dns: verifyBoolean(options, 'dns'),
    smtp: verifyBoolean(options, 'smtp'),
    allowSmtpUtf8: verifyBoolean(options, 'allowSmtpUtf8'),
    allowQuotedLocal: verifyBoolean(options, 'allowQuotedLocal'),
    allowDomainLiteral: verifyBoolean(options, 'allowDomainLiteral'),
    allowTlds: entrySet(options.allowTlds, 'allowTlds'),
    blocklist: entrySet(options.blocklist, 'blocklist'),
    allowlist: entrySet(options.allowlist, 'allowlist'),
    roleIsDoNotMail: verifyBoolean(options, 'roleIsDoNotMail'),
    suggestDomains: [...entrySet(options.suggestDomains, 'suggestDomains')],
    lists: lists(options.lists),
    checks: checks(options.checks),
    disableChecks: new Set(strings(options.disableChecks, 'disableChecks')),
    resolver: seam<Resolver>(options.resolver, 'resolver', ['mx', 'addresses']),
    transport: seam<Transport>(options.transport, 'transport', ['connect']),
    heloHost: envelopeOption(options, 'heloHost'),
    mailFrom: envelopeOption(options, 'mailFrom'),
    smtpPort: verifyInteger(options, 'smtpPort'),
    timeoutMs: verifyInteger(options, 'timeoutMs'),
    connectTimeoutMs: verifyInteger(options, 'connectTimeoutMs'),
    replyTimeoutMs: verifyInteger(options, 'replyTimeoutMs'),
    tls,
    allowAddresses: parseCidrList(strings(options.allowAddresses, 'allowAddresses')).map(
      (range) => range.text,
    ),
    catchAll: verifyBoolean(options, 'catchAll'),
    catchAllTtlMs: verifyInteger(options, 'catchAllTtlMs'),
    trace: verifyBoolean(options, 'trace'),
    maxMxHosts: verifyInteger(options, 'maxMxHosts'),
    perMxConcurrency: verifyInteger(options, 'perMxConcurrency'),
    concurrency: verifyInteger(options, 'concurrency'),
    maxRcptPerSession: verifyInteger(options, 'maxRcptPerSession'),
    maxRejectsPerSession: verifyInteger(options, 'maxRejectsPerSession'),
    idleSessionMs: verifyInteger(options, 'idleSessionMs'),
    mxBackoffMs: verifyInteger(options, 'mxBackoffMs'),
    observer: observerOption(options.observer),
    signal,
    knownResults: seam<KnownResults>(options.knownResults, 'knownResults', ['get', 'set']),
    knownResultsTtl: resolveKnownTtl(options.knownResultsTtlMs),
    fresh: verifyBoolean(options, 'fresh'),
    knownResultsNamespace: knownResultsNamespaceOf(options.knownResultsNamespace),
  };
}
