/**
 * Known results in `mailvet serve` and `mailvet worker`: on with a durable job store (kept in its database, shared by
 * every process on it: a worker fleet's too), with `--known-results-ttl` on a memory store too (in this process), off
 * with `--no-known-results`.
 * @module
 */
import { memoryKnownResults } from '../known/memory.js';
import { KNOWN_STATUSES, type KnownResultsTtl, type KnownStatus, MAX_KNOWN_TTL_MS } from '../known/ttl.js';
import type { KnownResults } from '../known/types.js';
import { hasKnownResults } from '../postgres/known-results.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { type Env, type Sourced, single, switched } from './config.js';
import { quote, usageError } from './io.js';
import type { StoreChoice } from './store.js';

/** The flags of known results. */
export const KNOWN_RESULTS_FLAGS: readonly FlagSpec[] = [
  {
    name: 'known-results-ttl',
    type: 'string',
    value: '<status=time,...>',
    description:
      'how long a verdict answers again without asking the mail server, per status (valid, invalid, catch_all, unknown; time in s, m, h or d; 0 keeps none), e.g. valid=7d,unknown=10m (default valid, invalid, catch_all 7d, unknown 10m); on by default with --data or --store',
  },
  {
    name: 'no-known-results',
    type: 'boolean',
    description: 'ask the mail server about every address, even one verified a minute ago',
  },
];

const UNIT_MS: Readonly<Record<string, number>> = {
  '': 1000,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * `--known-results-ttl` / MAILVET_KNOWN_RESULTS_TTL: `status=time` pairs, comma-separated; a time is an integer with
 * `s`, `m`, `h` or `d` (seconds without one), at most 90 days. A usage error names the flag and the bad part.
 * @example
 * knownTtlOf({ label: '--known-results-ttl', value: 'valid=30d,unknown=5m' }); // { valid: 2592000000, unknown: 300000 }
 */
export function knownTtlOf(source: Sourced<string>): Partial<KnownResultsTtl> {
  const ttl: Partial<Record<KnownStatus, number>> = {};
  const parts = source.value.split(',').map((part) => part.trim());
  for (const part of parts) {
    const match = /^([a-z_]{1,20})=(\d{1,9})([smhd]?)$/.exec(part);
    const status = match?.[1] ?? '';
    if (match === null || !(KNOWN_STATUSES as readonly string[]).includes(status)) {
      throw usageError(
        `${source.label} must be status=time pairs (statuses ${KNOWN_STATUSES.join(', ')}; time like 7d, 10m, 30s), got ${quote(part.slice(0, 60))}`,
      );
    }
    const ms = Number(match[2]) * UNIT_MS[match[3] ?? '']!;
    if (ms > MAX_KNOWN_TTL_MS) {
      throw usageError(`${source.label}: ${status} must be at most 90d, got ${quote(part.slice(0, 60))}`);
    }
    if (Object.hasOwn(ttl, status)) throw usageError(`${source.label} names ${status} twice`);
    ttl[status as KnownStatus] = ms;
  }
  return ttl;
}

/** Whether and where `serve` or `worker` keeps known results, as the flags, the environment and the job store say. */
export type KnownResultsChoice =
  | { readonly kind: 'off' }
  | { readonly kind: 'on'; readonly ttl: Partial<KnownResultsTtl> | undefined };

/**
 * Reads `--known-results-ttl` and `--no-known-results` (MAILVET_KNOWN_RESULTS_TTL, MAILVET_NO_KNOWN_RESULTS): on by
 * default with a durable store (a fleet's PostgreSQL store too: its workers and API nodes share them, each job's
 * owner their namespace), on a memory store only when a TTL is given.
 */
export function knownResultsChoiceOf(args: ParsedArgs, env: Env, store: StoreChoice): KnownResultsChoice {
  const source = single(args, env, 'known-results-ttl', 'MAILVET_KNOWN_RESULTS_TTL');
  const ttl = source === undefined ? undefined : knownTtlOf(source);
  if (switched(args, env, 'no-known-results', 'MAILVET_NO_KNOWN_RESULTS')) {
    if (source !== undefined)
      throw usageError(`${source.label} and --no-known-results cannot be used together`);
    return { kind: 'off' };
  }
  if (store.kind === 'memory' && ttl === undefined) return { kind: 'off' };
  return { kind: 'on', ttl };
}

/** Known results opened for a server, and how to stop their sweep (after writing the verdicts that wait). */
export interface OpenedKnownResults {
  readonly knownResults: KnownResults;
  close(): Promise<void>;
}

/** The known results of `choice`: in `store`'s database when it can keep them, else in this process. */
export function openKnownResults(choice: KnownResultsChoice, store: unknown): OpenedKnownResults | undefined {
  if (choice.kind === 'off') return undefined;
  if (hasKnownResults(store)) {
    const known = store.knownResults();
    return { knownResults: known, close: () => known.close() };
  }
  return { knownResults: memoryKnownResults(), close: async () => {} };
}
