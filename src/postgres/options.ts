/**
 * Validation of the options both SQL drivers share.
 * @module
 */
import { OptionsError } from '../errors.js';
import type { QueryObserver } from './observed-driver.js';
import { checkSchemaName } from './schema.js';
import type { SqlStoreOptions } from './sql-store.js';

/** The documented defaults of {@link SqlStoreOptions}. */
export const SQL_STORE_DEFAULTS = Object.freeze({ schema: 'mailvet', leaseMs: 30_000 });

/** {@link SqlStoreOptions} checked and defaulted. */
export function resolveSqlOptions(options: SqlStoreOptions): {
  schema: string;
  leaseMs: number;
  onQuery: QueryObserver | undefined;
} {
  let schema: string;
  try {
    schema = checkSchemaName(options.schema ?? SQL_STORE_DEFAULTS.schema);
  } catch {
    throw new OptionsError('schema', 'must be 1-63 characters of a-z 0-9 _, starting with a letter or _');
  }
  const leaseMs = options.leaseMs ?? SQL_STORE_DEFAULTS.leaseMs;
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < 1000 || leaseMs > 3_600_000) {
    throw new OptionsError('leaseMs', 'must be an integer 1000-3600000');
  }
  const onQuery = options.onQuery;
  if (onQuery !== undefined && typeof onQuery !== 'function') {
    throw new OptionsError('onQuery', 'must be a function');
  }
  return { schema, leaseMs, onQuery };
}
