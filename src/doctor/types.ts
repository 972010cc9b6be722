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

/**
 * The checks that decide whether mail servers will trust this host. When one of them is skipped with something
 * to do (its advice, e.g. "Pass --ip ..."), readiness is not known and the verdict is `incomplete`; a skip with
 * no advice is a choice (`--no-blocklists`) and does not count.
 */
export const READINESS_CHECKS: readonly CheckName[] = Object.freeze([
  'reverse_dns',
  'helo',
  'spf',
  'blocklists',
] as const);

/** The whole report. */
export interface DiagnosticsReport {
  /**
   * `fail` when a check failed; else `incomplete` when a check that decides readiness ({@link READINESS_CHECKS})
   * could not run; else `warn` when one warned; else `pass`.
   */
  readonly verdict: 'pass' | 'warn' | 'incomplete' | 'fail';
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

/** A check that decides readiness and could not run for a reason there is something to do about. */
export function blocksReadiness(check: Pick<DiagnosticCheck, 'status'> & Partial<DiagnosticCheck>): boolean {
  return (
    check.status === 'skipped' &&
    check.name !== undefined &&
    READINESS_CHECKS.includes(check.name) &&
    check.advice != null
  );
}

/**
 * The verdict of a list of checks: `fail` if one failed, else `incomplete` if one {@link blocksReadiness},
 * else `warn` if one warned, else `pass` (other skipped checks left out).
 * @example
 * verdictOf([{ status: 'pass' }, { status: 'skipped' }]); // 'pass'
 * verdictOf([{ name: 'spf', status: 'skipped', advice: 'Pass --ip ...' }]); // 'incomplete'
 */
export function verdictOf(
  checks: readonly (Pick<DiagnosticCheck, 'status'> & Partial<DiagnosticCheck>)[],
): DiagnosticsReport['verdict'] {
  if (checks.some((check) => check.status === 'fail')) return 'fail';
  if (checks.some(blocksReadiness)) return 'incomplete';
  if (checks.some((check) => check.status === 'warn')) return 'warn';
  return 'pass';
}
