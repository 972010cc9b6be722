/**
 * How long a known result answers, by its status; and which results are never kept.
 * @module
 */
import { OptionsError } from '../errors.js';
import type { SubStatus } from '../result.js';
import type { KnownVerdict } from './types.js';

/** The statuses a mail server's answer can give, each with its own time to live. */
export const KNOWN_STATUSES = ['valid', 'invalid', 'catch_all', 'unknown'] as const;

/** A status a known result can have. */
export type KnownStatus = (typeof KNOWN_STATUSES)[number];

/**
 * How long a known result answers, in milliseconds, per status; `0` keeps no result of that status.
 * @default { valid: 604800000, invalid: 604800000, catch_all: 604800000, unknown: 600000 } (7 days; 10 minutes)
 */
export type KnownResultsTtl = Readonly<Record<KnownStatus, number>>;

/** The documented defaults of {@link KnownResultsTtl}: a mailbox's answer for days, a passing trouble for minutes. */
export const DEFAULT_KNOWN_TTL: KnownResultsTtl = Object.freeze({
  valid: 7 * 86_400_000,
  invalid: 7 * 86_400_000,
  catch_all: 7 * 86_400_000,
  unknown: 600_000,
});

/** Longest time to live of any status: 90 days. */
export const MAX_KNOWN_TTL_MS = 90 * 86_400_000;

/**
 * Sub-statuses never kept: they say something about this verification, not about the address (our own budget ran
 * out, our own code failed, nothing was asked).
 */
const NEVER_KEPT: ReadonlySet<SubStatus> = new Set([
  'timeout_exceeded',
  'exception_occurred',
  'smtp_not_checked',
]);

/**
 * Validates a per-status override (`undefined` gives the defaults): an object whose members are statuses of
 * {@link KNOWN_STATUSES}, each an integer 0-{@link MAX_KNOWN_TTL_MS}. Throws an `OptionsError` naming `option`
 * (or the member).
 */
export function resolveKnownTtl(value: unknown, option = 'knownResultsTtlMs'): KnownResultsTtl {
  if (value === undefined) return DEFAULT_KNOWN_TTL;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new OptionsError(option, `must be an object with members ${KNOWN_STATUSES.join(', ')}`);
  }
  const ttl: Record<KnownStatus, number> = { ...DEFAULT_KNOWN_TTL };
  for (const [status, ms] of Object.entries(value)) {
    if (!(KNOWN_STATUSES as readonly string[]).includes(status)) {
      throw new OptionsError(`${option}.${status}`, `is not a status (${KNOWN_STATUSES.join(', ')})`);
    }
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > MAX_KNOWN_TTL_MS) {
      throw new OptionsError(
        `${option}.${status}`,
        `must be an integer 0-${MAX_KNOWN_TTL_MS} (milliseconds)`,
      );
    }
    ttl[status as KnownStatus] = ms;
  }
  return Object.freeze(ttl);
}

/**
 * How long `verdict` is kept, in milliseconds: its status's time to live, or `0` (not kept) for a status outside
 * {@link KNOWN_STATUSES} or a sub-status that says nothing about the address (`timeout_exceeded`,
 * `exception_occurred`, `smtp_not_checked`).
 */
export function ttlOf(verdict: KnownVerdict, ttl: KnownResultsTtl): number {
  if (verdict.sub_status !== null && NEVER_KEPT.has(verdict.sub_status)) return 0;
  return Object.hasOwn(ttl, verdict.status) ? ttl[verdict.status as KnownStatus] : 0;
}
