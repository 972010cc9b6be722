/**
 * The report of `diagnose()` / `mailvet doctor` / `GET /v1/diagnostics`: one entry per check, each with its
 * evidence and one line on what to do, and a closing verdict. Field names are the JSON wire shape.
 * @module
 */

/** The outcome of one check. `skipped`: the check could not run (its reason is the evidence). */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skipped';

/** The checks, in the order they are reported. */
export const CHECK_NAMES = Object.freeze([
  'dns',
  'proxy',
  'port25',
  'egress',
  'reverse_dns',
  'helo',
  'spf',
  'sender_domain',
  'blocklists',
] as const);

/** The stable name of a check. */
export type CheckName = (typeof CHECK_NAMES)[number];

/** One check's result. */
export interface DiagnosticCheck {
  /** Stable name. */
  readonly name: CheckName;
  /** Short human title (`Port 25`). */
  readonly title: string;
  readonly status: CheckStatus;
  /** What was seen: one line (the answers, the banner, the error). */
  readonly evidence: string;
  /** One line on what to do, or `null` when the check passed. */
  readonly advice: string | null;
  /** Structured evidence, different per check (see docs/doctor.md). JSON values only. */
  readonly details: Readonly<Record<string, unknown>>;
}

/** The whole report. */
export interface DiagnosticsReport {
  /** `fail` when a check failed, else `warn` when one warned, else `pass`. Skipped checks do not count. */
  readonly verdict: 'pass' | 'warn' | 'fail';
  /** Every check, in {@link CHECK_NAMES} order. */
  readonly checks: readonly DiagnosticCheck[];
  /** The egress address the address-based checks used, or `null` when unknown. */
  readonly egress_ip: string | null;
  /** The EHLO name checked. */
  readonly helo_host: string;
  /** The envelope sender checked. */
  readonly mail_from: string;
  /** The domain whose MX was contacted. */
  readonly probe_domain: string;
  /** When the diagnosis started (ISO 8601). */
  readonly started_at: string;
  /** How long it took, in milliseconds. */
  readonly duration_ms: number;
}

/** The verdict of a list of checks: the worst status among them, skipped ones left out. */
export function verdictOf(checks: readonly Pick<DiagnosticCheck, 'status'>[]): DiagnosticsReport['verdict'] {
  if (checks.some((check) => check.status === 'fail')) return 'fail';
  if (checks.some((check) => check.status === 'warn')) return 'warn';
  return 'pass';
}
