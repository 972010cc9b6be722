/**
 * The webhook secrets of stored API keys (`mailvet keys ... --webhook-secret`), read from the key store by a
 * job's tenant (`key:<id>`) each time they are needed: when a job asks for a webhook, and before each delivery
 * attempt, so that a secret set, rotated or removed with `mailvet keys webhook-secret` takes effect at once on
 * every API node.
 * @module
 */
import { webhookSecretsOf } from '../postgres/api-keys.js';
import { HttpError } from './errors.js';
import { type ApiKeyLookup, storedKeyTenant } from './store-keys.js';

/** The prefix of a stored key's tenant. */
const TENANT_PREFIX = storedKeyTenant('');

/** Reads the secrets that sign a tenant's webhooks now; `undefined` for a tenant without any. */
export type StoredWebhookSecrets = (tenant: string) => Promise<readonly string[] | undefined>;

/**
 * Makes the reader of stored keys' webhook secrets over `store`; `clock` (milliseconds) ends a rotation's grace.
 * A tenant that is not a stored key's has none. A store that does not answer gives `503 service_unavailable`.
 * @example
 * const secretsOf = storedWebhookSecrets(store.apiKeys, Date.now);
 * await secretsOf('key:3kT9aZ1q'); // ['whsec_...'] (two while a rotation's grace lasts)
 */
export function storedWebhookSecrets(
  store: Pick<ApiKeyLookup, 'get'>,
  clock: () => number,
): StoredWebhookSecrets {
  return async (tenant) => {
    if (!tenant.startsWith(TENANT_PREFIX)) return undefined;
    let record: Awaited<ReturnType<ApiKeyLookup['get']>>;
    try {
      record = await store.get(tenant.slice(TENANT_PREFIX.length));
    } catch (error) {
      throw new HttpError('service_unavailable', 'the API key store does not answer; retry', {
        cause: error,
      });
    }
    return record === undefined ? undefined : webhookSecretsOf(record, clock());
  };
}
