/**
 * The job store's schema and its forward-only migrations, applied at open under an advisory lock.
 * @module
 */
import { MailvetError } from '../errors.js';
import type { SqlClient, SqlDriver } from './driver.js';

/** A valid schema name: it is spliced into SQL, so nothing but a plain identifier. */
const SCHEMA_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;

/** Checks a schema name; returns it or throws `invalid_option`. */
export function checkSchemaName(schema: unknown): string {
  if (typeof schema !== 'string' || !SCHEMA_PATTERN.test(schema)) {
    throw new MailvetError(
      'invalid_option',
      `schema must be 1-63 characters of a-z 0-9 _ starting with a letter or _, got ${JSON.stringify(schema)}`,
    );
  }
  return schema;
}

/**
 * The migrations, in order: version `i + 1` is `MIGRATIONS[i]`. Never edit a released one; append.
 * `{s}` is the schema. Results are JSON text (not JSONB): the store only writes and reads them whole.
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE {s}.jobs (
     id text PRIMARY KEY,
     seq bigserial NOT NULL,
     owner text,
     name text,
     status text NOT NULL,
     armed boolean NOT NULL DEFAULT false,
     total integer NOT NULL,
     completed integer NOT NULL,
     counts jsonb NOT NULL,
     created_at bigint NOT NULL,
     started_at bigint,
     completed_at bigint,
     error jsonb,
     greylist_delays_ms jsonb NOT NULL,
     lease_owner text,
     lease_until bigint,
     epoch integer NOT NULL DEFAULT 1
   );
   CREATE INDEX jobs_unfinished ON {s}.jobs (seq) WHERE status IN ('queued', 'processing');
   CREATE TABLE {s}.inputs (
     job_id text NOT NULL,
     first integer NOT NULL,
     emails text[] NOT NULL,
     PRIMARY KEY (job_id, first)
   );
   CREATE TABLE {s}.results (
     job_id text NOT NULL,
     position integer NOT NULL,
     status text NOT NULL,
     result text NOT NULL,
     PRIMARY KEY (job_id, position)
   );
   CREATE TABLE {s}.retries (
     job_id text NOT NULL,
     position integer NOT NULL,
     attempt integer NOT NULL,
     due_at bigint NOT NULL,
     result text NOT NULL,
     PRIMARY KEY (job_id, position)
   );`,
  // 2: jobs of a worker fleet (`mailvet/bullmq`): no lease (every API node serves them, workers write their
  // results), and inputs not yet handed to the queue, so that a crash between the two is repaired.
  `ALTER TABLE {s}.jobs ADD COLUMN fleet boolean NOT NULL DEFAULT false;
   ALTER TABLE {s}.inputs ADD COLUMN queued boolean NOT NULL DEFAULT true;
   CREATE INDEX inputs_unqueued ON {s}.inputs (job_id, first) WHERE NOT queued;`,
  // 3: source rows of jobs made from a CSV file: the header on the job, each row (a CSV line) beside its address
  // in the same inputs row (NULL for addresses added without rows, and for every job without a header).
  `ALTER TABLE {s}.jobs ADD COLUMN source jsonb;
   ALTER TABLE {s}.inputs ADD COLUMN source_rows text[];`,
  // 4: the webhook ({ url, events }) of a fleet job, so that any API node can deliver its events.
  `ALTER TABLE {s}.jobs ADD COLUMN webhook jsonb;`,
  // 5: API keys (`mailvet keys`): only the SHA-256 digest of each key; while a rotation's grace lasts, the
  // digest of the key it replaced too. Times are epoch milliseconds. A name is unique among keys not revoked.
  `CREATE TABLE {s}.api_keys (
     id text PRIMARY KEY,
     name text NOT NULL,
     hash text NOT NULL,
     scopes text[] NOT NULL,
     requests_per_second double precision,
     addresses_per_day bigint,
     created_at bigint NOT NULL,
     last_used_at bigint,
     revoked_at bigint,
     previous_hash text,
     previous_until bigint
   );
   CREATE UNIQUE INDEX api_keys_live_name ON {s}.api_keys (name) WHERE revoked_at IS NULL;`,
  // 6: usage per tenant, UTC day (YYYY-MM-DD), kind (single, bulk) and status; each key's daily quota used; each
  // key's request-rate bucket (tokens, and when they were counted), shared by every API node.
  `CREATE TABLE {s}.usage (
     tenant text NOT NULL,
     day text NOT NULL,
     kind text NOT NULL,
     status text NOT NULL,
     count bigint NOT NULL,
     PRIMARY KEY (tenant, day, kind, status)
   );
   CREATE TABLE {s}.quota (
     key text NOT NULL,
     day text NOT NULL,
     used bigint NOT NULL,
     PRIMARY KEY (key, day)
   );
   CREATE TABLE {s}.rate_buckets (
     key text PRIMARY KEY,
     tokens double precision NOT NULL,
     updated_at bigint NOT NULL,
     allowed boolean NOT NULL
   );`,
  // 7: known results (the verdicts of addresses a mail server was asked about), shared by every process on the
  // database; `key` is the namespace (tenant) and the address, `verdict` JSON text, the times in ms since the epoch.
  `CREATE TABLE {s}.known_results (
     key text PRIMARY KEY,
     verdict text NOT NULL,
     checked_at bigint NOT NULL,
     expires_at bigint NOT NULL
   );
   CREATE INDEX known_results_expiry ON {s}.known_results (expires_at);`,
  // 8: each stored key's webhook signing secret (`whsec_...`, kept as given: the server signs with it), and while
  // a rotation's grace lasts the secret it replaced, which signs beside it until then (epoch milliseconds).
  `ALTER TABLE {s}.api_keys ADD COLUMN webhook_secret text;
   ALTER TABLE {s}.api_keys ADD COLUMN previous_webhook_secret text;
   ALTER TABLE {s}.api_keys ADD COLUMN previous_webhook_secret_until bigint;`,
  // 9: whether a fleet job was created with `fresh`,
  // so that every worker that takes its chunks asks the mail servers again instead of answering from known results.
  `ALTER TABLE {s}.jobs ADD COLUMN fresh boolean NOT NULL DEFAULT false;`,
];

/** The schema version this code writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** A stable 64-bit key for the advisory lock that serialises migrations of `schema`. */
function lockKey(schema: string): string {
  let hash = 0n;
  for (const char of `mailvet:${schema}`)
    hash = (hash * 31n + BigInt(char.codePointAt(0)!)) & 0x7fff_ffff_ffff_ffffn;
  return hash.toString();
}

async function currentVersion(client: SqlClient, schema: string): Promise<number> {
  const rows = await client.query(`SELECT max(version) AS version FROM ${schema}.schema_version`);
  return Number(rows[0]?.version ?? 0);
}

/**
 * Brings `schema` to {@link SCHEMA_VERSION}: creates it if missing and applies each missing migration in its
 * own transaction. Throws `store_error` naming the versions when the database is newer than this code.
 */
export async function migrate(driver: SqlDriver, schema: string): Promise<void> {
  await driver.transaction(async (client) => {
    await client.query(`SELECT pg_advisory_xact_lock(${lockKey(schema)})`);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
  });
  const found = await currentVersion(driver, schema);
  if (found > SCHEMA_VERSION) {
    throw new MailvetError(
      'store_error',
      `the job store's schema "${schema}" is at version ${found}, newer than this mailvet knows (${SCHEMA_VERSION}): upgrade mailvet, or use another schema`,
    );
  }
  for (let version = found + 1; version <= SCHEMA_VERSION; version++) {
    await driver.transaction(async (client) => {
      await client.query(`SELECT pg_advisory_xact_lock(${lockKey(schema)})`);
      if ((await currentVersion(client, schema)) >= version) return; // another process applied it
      for (const statement of MIGRATIONS[version - 1]!.replaceAll('{s}', schema).split(/;\s*$/m)) {
        if (statement.trim() !== '') await client.query(statement);
      }
      await client.query(`INSERT INTO ${schema}.schema_version (version) VALUES ($1)`, [version]);
    });
  }
}
