/**
 * The job store of `mailvet serve`: memory by default, PGlite with `--data DIR`, PostgreSQL with `--store URL`.
 * @module
 */
import type { JobStore, StoreDamage } from '../bulk/types.js';
import { isMailvetError } from '../errors.js';
import type { ApiKeyHolder, ApiKeyStore } from '../postgres/api-keys.js';
import type { QueryObserver } from '../postgres/observed-driver.js';
import { redactUrl } from '../postgres/open-error.js';
import type { FlagSpec, ParsedArgs } from './args.js';
import { type Env, integer, single } from './config.js';
import { CliError, EXIT, quote, usageError } from './io.js';

/** The flags that choose the job store and how long finished jobs are kept. */
export const STORE_FLAGS: readonly FlagSpec[] = [
  {
    name: 'data',
    type: 'string',
    value: '<dir>',
    description: 'keep jobs in an embedded PostgreSQL (PGlite) in this directory, resumed after a restart',
  },
  {
    name: 'store',
    type: 'string',
    value: '<postgres://...>',
    description: 'keep jobs on this PostgreSQL server instead, resumed after a restart',
  },
  {
    name: 'lease-seconds',
    type: 'string',
    value: '<s>',
    description:
      'with --store: how long a job stays with a process that stopped answering before another takes it over (default 30)',
  },
  {
    name: 'retention-days',
    type: 'string',
    value: '<days>',
    description: 'delete finished jobs and their results this long after they end; 0 keeps them (default 30)',
  },
];

/** Longest retention accepted, in days (ten years). */
const MAX_RETENTION_DAYS = 3650;

/** Where `serve` keeps jobs, as the flags and environment say. */
export type StoreChoice =
  | { readonly kind: 'memory' }
  | { readonly kind: 'pglite'; readonly dataDir: string }
  | { readonly kind: 'postgres'; readonly connectionString: string; readonly leaseMs: number | undefined };

/** Reads `--data` / MAILVET_DATA and `--store` / MAILVET_STORE; both at once is a usage error. */
export function storeChoiceOf(args: ParsedArgs, env: Env): StoreChoice {
  const data = single(args, env, 'data', 'MAILVET_DATA');
  const store = single(args, env, 'store', 'MAILVET_STORE');
  if (data !== undefined && store !== undefined) {
    throw usageError(`${data.label} and ${store.label} cannot be used together: choose one job store`);
  }
  if (store === undefined && args.string('lease-seconds') !== undefined) {
    throw usageError('--lease-seconds applies to --store (PostgreSQL) only');
  }
  if (store !== undefined) {
    if (!/^postgres(ql)?:\/\/\S+$/.test(store.value)) {
      throw usageError(
        `${store.label} must be a postgres:// or postgresql:// URL, got ${quote(store.value)}`,
      );
    }
    const lease = single(args, env, 'lease-seconds', 'MAILVET_LEASE_SECONDS');
    const leaseMs = lease === undefined ? undefined : integer(lease, 1, 3600) * 1000;
    return { kind: 'postgres', connectionString: store.value, leaseMs };
  }
  if (data !== undefined) {
    if (data.value.trim() === '' || data.value.includes('\0')) {
      throw usageError(`${data.label} must be a directory path, got ${quote(data.value)}`);
    }
    return { kind: 'pglite', dataDir: data.value };
  }
  return { kind: 'memory' };
}

/** Where jobs are kept, for the startup line (the PostgreSQL password is not shown). */
export function storePlace(choice: StoreChoice): string {
  if (choice.kind === 'memory') return 'in memory';
  if (choice.kind === 'pglite') return `in ${choice.dataDir}`;
  return `on ${redactUrl(choice.connectionString)}`;
}

/** `--retention-days` / MAILVET_RETENTION_DAYS in milliseconds, or `undefined` for the manager's default. */
export function retentionMsOf(args: ParsedArgs, env: Env): number | undefined {
  const source = single(args, env, 'retention-days', 'MAILVET_RETENTION_DAYS');
  return source === undefined ? undefined : integer(source, 0, MAX_RETENTION_DAYS) * 86_400_000;
}

/**
 * Opens the chosen durable store (`undefined` for memory), its statements told to `onQuery` when given. A store
 * that cannot be opened is a `CliError` naming the problem: exit 3 (unreachable, refused, not a PGlite directory,
 * a schema from the future).
 */
export async function openStore(choice: StoreChoice, onQuery?: QueryObserver): Promise<JobStore | undefined> {
  if (choice.kind === 'memory') return undefined;
  const { pgliteStore, postgresStore } = await import('../postgres/index.js');
  const observed = onQuery === undefined ? {} : { onQuery };
  try {
    return choice.kind === 'pglite'
      ? await pgliteStore({ dataDir: choice.dataDir, ...observed })
      : await postgresStore({
          connectionString: choice.connectionString,
          ...(choice.leaseMs === undefined ? {} : { leaseMs: choice.leaseMs }),
          ...observed,
        });
  } catch (error) {
    throw storeCliError(error);
  }
}

/**
 * The warnings of `mailvet serve` about damage the durable `store` found when it opened (one line per damaged
 * job, none when it is sound or not durable); `GET /healthz` answers 503 meanwhile.
 */
export function damageWarnings(store: JobStore | undefined): string[] {
  const damage = (store as { readonly damage?: readonly StoreDamage[] } | undefined)?.damage ?? [];
  return damage.map(
    ({ jobId, problem }) =>
      `mailvet: the job store is damaged: ${jobId === null ? problem : `job ${jobId} is ${problem}`}; its downloads fail part-way (restore the data from a backup)\n`,
  );
}

/** A store failure as the CLI reports it: the store's own message, exit 3 (2 for a bad option). */
export function storeCliError(error: unknown): CliError {
  const message = error instanceof Error ? error.message : String(error);
  const code = isMailvetError(error) && error.code === 'invalid_option' ? EXIT.usage : EXIT.io;
  return new CliError(code, message, { cause: error });
}

/** The API keys a durable `store` keeps (`mailvet keys`), or `undefined` for memory. */
export function apiKeysOf(store: JobStore | undefined): ApiKeyStore | undefined {
  return (store as Partial<ApiKeyHolder> | undefined)?.apiKeys;
}
