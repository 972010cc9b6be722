/**
 * The API keys of `mailvet keys`, in the job store's `api_keys` table (migration 5): a key's name, scopes,
 * limits and times, and only the SHA-256 digest of the key (and, while a rotation's grace lasts, of the key it
 * replaced), and its webhook signing secret (migration 8), kept as given since the server signs with it.
 * @module
 */
import { MailvetError } from '../errors.js';
import type { Scope } from '../io/api-key.js';
import type { Row, SqlClient } from './driver.js';
import { num, numOrNull } from './rows.js';

/** A stored key, as `mailvet keys list` shows it and the API checks it. Times are epoch milliseconds. */
export interface ApiKeyRecord {
  /** The public id (8 base62 characters), the part after `mv_`. */
  readonly id: string;
  /** The owner's name for it, unique among keys not revoked. */
  readonly name: string;
  /** The hex SHA-256 digest of the key. */
  readonly hash: string;
  /** What the key may do. */
  readonly scopes: readonly Scope[];
  /** Its own request rate (requests per second), or `null` for the server's. */
  readonly requestsPerSecond: number | null;
  /** Addresses it may verify per UTC day, or `null` for no quota. */
  readonly addressesPerDay: number | null;
  readonly createdAt: number;
  /** When it was last used (updated at most once a minute per API node), or `null`. */
  readonly lastUsedAt: number | null;
  /** When it was revoked, or `null`. */
  readonly revokedAt: number | null;
  /** The digest of the key a rotation replaced, valid until `previousUntil`, or `null`. */
  readonly previousHash: string | null;
  readonly previousUntil: number | null;
  /** The key's webhook signing secret (`whsec_...`), or `null`: its jobs cannot ask for a webhook. */
  readonly webhookSecret: string | null;
  /** The secret a rotation replaced, signing beside the new one until `previousWebhookSecretUntil`, or `null`. */
  readonly previousWebhookSecret: string | null;
  readonly previousWebhookSecretUntil: number | null;
}

/**
 * The secrets that sign a key's webhooks at `now`: its secret, then the replaced one while its grace lasts;
 * `undefined` for a revoked key or one without a secret.
 */
export function webhookSecretsOf(record: ApiKeyRecord, now: number): readonly string[] | undefined {
  if (record.revokedAt !== null || record.webhookSecret === null) return undefined;
  const previous = record.previousWebhookSecret;
  const graced = previous !== null && (record.previousWebhookSecretUntil ?? 0) > now;
  return graced ? [record.webhookSecret, previous] : [record.webhookSecret];
}

/** What {@link ApiKeyStore.create} stores: a record without its times of use, with or without a webhook secret. */
export type NewApiKeyRecord = Omit<
  ApiKeyRecord,
  | 'lastUsedAt'
  | 'revokedAt'
  | 'previousHash'
  | 'previousUntil'
  | 'webhookSecret'
  | 'previousWebhookSecret'
  | 'previousWebhookSecretUntil'
> & {
  /** Its webhook signing secret. @default null */
  readonly webhookSecret?: string | null;
};

/** The keys table of a job store. */
export interface ApiKeyStore {
  /** Stores a new key. Throws {@link ApiKeyConflictError} when its id, or a live key's name, is taken. */
  create(record: NewApiKeyRecord): Promise<void>;
  /** Every key, revoked ones included, oldest first. */
  list(): Promise<ApiKeyRecord[]>;
  /** The key with this public id, revoked or not. */
  get(id: string): Promise<ApiKeyRecord | undefined>;
  /** The key not revoked whose id or name is `idOrName`. */
  find(idOrName: string): Promise<ApiKeyRecord | undefined>;
  /** Revokes a key not yet revoked; `false` when there is none with that id. */
  revoke(id: string, at: number): Promise<boolean>;
  /**
   * Gives a live key a new digest; the old one stays valid until `graceUntil`. `false` when there is no live key
   * with that id.
   */
  rotate(id: string, hash: string, graceUntil: number): Promise<boolean>;
  /**
   * Sets a live key's webhook secret (`null` removes it and any replaced one). With `previousUntil`, the secret
   * it replaces keeps signing until then; with `null` it is dropped at once. `false` when there is no live key
   * with that id.
   */
  setWebhookSecret(id: string, secret: string | null, previousUntil: number | null): Promise<boolean>;
  /** Records a use of the key at `at` (never moves the time back). */
  touch(id: string, at: number): Promise<void>;
}

/** Thrown by {@link ApiKeyStore.create} when the id, or the name of a key not revoked, is taken. */
export class ApiKeyConflictError extends MailvetError {
  override name = 'ApiKeyConflictError';
  /** What is taken. */
  readonly field: 'id' | 'name';

  constructor(field: 'id' | 'name', value: string) {
    super(
      'api_key_conflict',
      field === 'name'
        ? `a key named ${JSON.stringify(value)} exists already (revoke it, or choose another name)`
        : `a key with the id ${value} exists already`,
    );
    this.field = field;
  }
}

/** SQLSTATE of a duplicate key. */
const UNIQUE_VIOLATION = '23505';

function textOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function recordOf(row: Row): ApiKeyRecord {
  return {
    id: String(row.id),
    name: String(row.name),
    hash: String(row.hash),
    scopes: (row.scopes as Scope[]) ?? [],
    requestsPerSecond: numOrNull(row.requests_per_second),
    addressesPerDay: numOrNull(row.addresses_per_day),
    createdAt: num(row.created_at),
    lastUsedAt: numOrNull(row.last_used_at),
    revokedAt: numOrNull(row.revoked_at),
    previousHash: textOrNull(row.previous_hash),
    previousUntil: numOrNull(row.previous_until),
    webhookSecret: textOrNull(row.webhook_secret),
    previousWebhookSecret: textOrNull(row.previous_webhook_secret),
    previousWebhookSecretUntil: numOrNull(row.previous_webhook_secret_until),
  };
}

/** The keys table in `schema` (migrated by the job store's open) on `client`. */
export function sqlApiKeys(client: SqlClient, schema: string): ApiKeyStore {
  const t = `${schema}.api_keys`;
  return {
    async create(record) {
      try {
        await client.query(
          `INSERT INTO ${t} (id, name, hash, scopes, requests_per_second, addresses_per_day, created_at,
             webhook_secret)
           VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $8)`,
          [
            record.id,
            record.name,
            record.hash,
            [...record.scopes],
            record.requestsPerSecond,
            record.addressesPerDay,
            record.createdAt,
            record.webhookSecret ?? null,
          ],
        );
      } catch (error) {
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        const byId = await client.query(`SELECT 1 FROM ${t} WHERE id = $1`, [record.id]);
        throw byId.length > 0
          ? new ApiKeyConflictError('id', record.id)
          : new ApiKeyConflictError('name', record.name);
      }
    },

    async list() {
      return (await client.query(`SELECT * FROM ${t} ORDER BY created_at, id`)).map(recordOf);
    },

    async get(id) {
      const rows = await client.query(`SELECT * FROM ${t} WHERE id = $1`, [id]);
      return rows.length === 0 ? undefined : recordOf(rows[0]!);
    },

    async find(idOrName) {
      const rows = await client.query(
        `SELECT * FROM ${t} WHERE revoked_at IS NULL AND (id = $1 OR name = $1) ORDER BY (id = $1) DESC LIMIT 1`,
        [idOrName],
      );
      return rows.length === 0 ? undefined : recordOf(rows[0]!);
    },

    async revoke(id, at) {
      const rows = await client.query(
        `UPDATE ${t} SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL RETURNING id`,
        [id, at],
      );
      return rows.length > 0;
    },

    async rotate(id, hash, graceUntil) {
      const rows = await client.query(
        `UPDATE ${t} SET previous_hash = hash, previous_until = $3, hash = $2
         WHERE id = $1 AND revoked_at IS NULL RETURNING id`,
        [id, hash, graceUntil],
      );
      return rows.length > 0;
    },

    async setWebhookSecret(id, secret, previousUntil) {
      const rows = await client.query(
        `UPDATE ${t} SET
           previous_webhook_secret = CASE WHEN $3::bigint IS NULL THEN NULL ELSE webhook_secret END,
           previous_webhook_secret_until = $3::bigint,
           webhook_secret = $2::text
         WHERE id = $1 AND revoked_at IS NULL RETURNING id`,
        [id, secret, previousUntil],
      );
      return rows.length > 0;
    },

    async touch(id, at) {
      await client.query(
        `UPDATE ${t} SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`,
        [id, at],
      );
    },
  };
}

/** A job store that also keeps API keys (`pgliteStore()` and `postgresStore()`). */
export interface ApiKeyHolder {
  /** The store's API keys, in the same database as its jobs. */
  readonly apiKeys: ApiKeyStore;
}
