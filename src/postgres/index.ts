/**
 * `mailvet/postgres`: durable job stores for `BulkJobManager`. `pgliteStore` keeps jobs in an embedded
 * PostgreSQL (a directory; needs `@electric-sql/pglite`), `postgresStore` on a PostgreSQL server (needs `pg`).
 * Both run the same schema and SQL; see docs/bulk.md, "Durable jobs".
 * @module
 */
export {
  ApiKeyConflictError,
  type ApiKeyHolder,
  type ApiKeyRecord,
  type ApiKeyStore,
  type NewApiKeyRecord,
} from './api-keys.js';
export { type DirectoryHolder, StoreLockedError } from './dir-lock.js';
export {
  hasKnownResults,
  type KnownResultsHost,
  STORE_KNOWN_DEFAULTS,
  type StoreKnownResults,
  type StoreKnownResultsOptions,
} from './known-results.js';
export type { QueryObserver } from './observed-driver.js';
export { SQL_STORE_DEFAULTS } from './options.js';
export { type PostgresStoreOptions, postgresStore } from './pg.js';
export { type PgliteJobStore, type PgliteStoreOptions, pgliteStore } from './pglite.js';
export { SCHEMA_VERSION } from './schema.js';
export { LeaseLostError, type SqlJobStore, type SqlStoreOptions } from './sql-store.js';
