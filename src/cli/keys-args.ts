/**
 * The values of `mailvet keys` flags: a key's name, scopes, rate, quota and a rotation's grace, each checked
 * into a usage error (exit 2) that says what is accepted.
 * @module
 */
import { SCOPES, type Scope } from '../io/api-key.js';
import { osaDistance } from '../typo/distance.js';
import { quote, usageError } from './io.js';

/** Longest key name, in characters. */
export const MAX_KEY_NAME = 64;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** Checks `--name`: 1-64 ASCII letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export function keyNameOf(raw: string | undefined): string {
  if (raw === undefined) throw usageError('keys create needs --name <name> (e.g. --name billing-app)');
  if (raw.length === 0 || raw.length > MAX_KEY_NAME || !NAME.test(raw)) {
    throw usageError(
      `--name must be 1-${MAX_KEY_NAME} characters of A-Z a-z 0-9 . _ - starting with a letter or digit, got ${quote(raw)}`,
    );
  }
  return raw;
}

/** The scope `raw` was most likely meant to be, if it is within two edits of one. */
function nearestScope(raw: string): Scope | undefined {
  if (raw.length > 40) return undefined;
  let best: Scope | undefined;
  let bestDistance = 3;
  for (const scope of SCOPES) {
    const distance = osaDistance(raw.toLowerCase(), scope, bestDistance - 1);
    if (distance < bestDistance) {
      best = scope;
      bestDistance = distance;
    }
  }
  return best;
}

/** Checks `--scopes verify,bulk:read`: a comma list of {@link SCOPES}, at least one, duplicates dropped. */
export function scopesOf(raw: string | undefined): Scope[] {
  const known = SCOPES.join(', ');
  if (raw === undefined) throw usageError(`keys create needs --scopes <list>: a comma list of ${known}`);
  const names = raw.split(',').map((name) => name.trim());
  if (names.every((name) => name === '')) throw usageError(`--scopes must name at least one of ${known}`);
  const scopes: Scope[] = [];
  for (const name of names) {
    if (name === '') continue;
    if (!(SCOPES as readonly string[]).includes(name)) {
      const hint = nearestScope(name);
      throw usageError(
        `unknown scope ${quote(name)} in --scopes${hint === undefined ? '' : ` (did you mean ${hint}?)`}; scopes: ${known}`,
      );
    }
    if (!scopes.includes(name as Scope)) scopes.push(name as Scope);
  }
  return scopes;
}

const RATE = /^(\d{1,9}(?:\.\d{1,6})?)\/(s|sec|second|m|min|minute|h|hour)$/;
const SECONDS: Readonly<Record<string, number>> = {
  s: 1,
  sec: 1,
  second: 1,
  m: 60,
  min: 60,
  minute: 60,
  h: 3600,
  hour: 3600,
};

/** Most requests per second a key's `--rate` may allow. */
export const MAX_RATE_PER_SECOND = 100_000;

/** Checks `--rate 20/s` (also `/min`, `/hour`) into requests per second, or `null` when absent. */
export function rateOf(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const match = RATE.exec(raw.trim());
  const perSecond = match === null ? Number.NaN : Number(match[1]) / (SECONDS[match[2]!] as number);
  if (!(perSecond > 0) || perSecond > MAX_RATE_PER_SECOND) {
    throw usageError(
      `--rate must be a number of requests per s, min or hour above 0 and at most ${MAX_RATE_PER_SECOND}/s (e.g. 20/s, 600/min), got ${quote(raw)}`,
    );
  }
  return perSecond;
}

/** Most addresses per day a key's `--quota` may allow (a trillion). */
export const MAX_QUOTA_PER_DAY = 1_000_000_000_000;

/** Checks `--quota 100000/day` into addresses per UTC day, or `null` when absent. */
export function quotaOf(raw: string | undefined): number | null {
  if (raw === undefined) return null;
  const match = /^(\d{1,13})\/(d|day)$/.exec(raw.trim());
  const perDay = match === null ? Number.NaN : Number(match[1]);
  if (!(perDay >= 1) || perDay > MAX_QUOTA_PER_DAY) {
    throw usageError(
      `--quota must be a whole number of addresses per day, 1-${MAX_QUOTA_PER_DAY} (e.g. 100000/day), got ${quote(raw)}`,
    );
  }
  return perDay;
}

const DURATION = /^(\d{1,7})(s|m|h|d)$/;
const DURATION_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Longest grace of a rotation (30 days). */
export const MAX_GRACE_MS = 30 * 86_400_000;

/**
 * Checks `--grace 1h` (s, m, h or d; `0s` ends the old key or secret at once) into milliseconds. `missing` is the
 * error when it is not given.
 */
export function graceMsOf(
  raw: string | undefined,
  missing = 'keys rotate needs --grace <duration>: how long the old key keeps working (e.g. 1h, 0s)',
): number {
  if (raw === undefined) throw usageError(missing);
  const match = DURATION.exec(raw.trim());
  const ms = match === null ? Number.NaN : Number(match[1]) * (DURATION_MS[match[2]!] as number);
  if (!(ms >= 0) || ms > MAX_GRACE_MS) {
    throw usageError(`--grace must be a duration such as 90s, 30m, 1h or 2d, at most 30d, got ${quote(raw)}`);
  }
  return ms;
}
