/**
 * Webhooks in the HTTP API: the server option, the per-API-key secrets and default URL, the `webhook` field
 * of `POST /v1/bulk`, and `GET /v1/bulk/{id}/webhooks`.
 * @module
 */
import type { BulkJobManagerApi } from '../bulk/types.js';
import { OptionsError } from '../errors.js';
import {
  createWebhookNotifier,
  type PreparedWebhook,
  type WebhookNotifierOptions,
} from '../webhooks/notifier.js';
import type { WebhookShare } from '../webhooks/share.js';
import { checkSecrets } from '../webhooks/sign.js';
import { sha256Hex } from './auth.js';
import type { Context, Operation } from './context.js';
import { HttpError } from './errors.js';
import type { ApiKeyLookup } from './store-keys.js';
import { storedWebhookSecrets } from './stored-webhooks.js';
import type { HttpWebhooks, ResolvedWebhookKey, WebhookKeyOptions } from './webhook-settings.js';
import { wireJob } from './wire.js';

export type { HttpWebhooks, WebhookKeyOptions };

/**
 * The `webhooks` option of `createHandler`: the notifier's options (resolver, transport, `allowAddresses`,
 * `allowHttpWebhooks`, timeouts, retry schedule, log) and the settings of each API key.
 */
export interface HttpWebhookOptions
  extends Omit<WebhookNotifierOptions, 'secrets' | 'present' | 'share' | 'secretsOf' | 'secretsChange'> {
  /**
   * Settings per API key, keyed by the key as given in `apiKeys` (with `authenticate`: by the tenant it
   * returns). A key without an entry cannot use webhooks (400), except a key of the handler's `apiKeyStore`
   * whose record holds a webhook secret (`mailvet keys ... --webhook-secret`): it signs with that one.
   */
  readonly keys: Readonly<Record<string, WebhookKeyOptions>>;
}

/** The key store of a handler (its `apiKeyStore`), whose keys' webhook secrets sign their jobs' deliveries. */
export interface StoredWebhookKeys {
  readonly store: Pick<ApiKeyLookup, 'get'>;
  /** Clock in milliseconds (ends a secret rotation's grace). */
  readonly clock: () => number;
}

/**
 * Validates the `webhooks` option and makes the notifier over `jobs`. `byKey` says whether `keys` are API
 * keys (turned into their tenants, the SHA-256 digests) or tenants already. With `stored`, a stored key (tenant
 * `key:<id>`) that `keys` does not list signs with the webhook secret the key store holds for it, read anew
 * for each job and before each delivery attempt.
 */
export function createHttpWebhooks(
  jobs: BulkJobManagerApi,
  options: HttpWebhookOptions,
  byKey: boolean,
  stored?: StoredWebhookKeys,
): HttpWebhooks {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('webhooks', 'must be an object');
  const { keys, ...rest } = options;
  if (typeof keys !== 'object' || keys === null) {
    throw new OptionsError('webhooks.keys', 'must map API keys to { secrets, url?, events? }');
  }
  const entries = Object.entries(keys).map(([key, settings]) => {
    if (typeof settings !== 'object' || settings === null) {
      throw new OptionsError('webhooks.keys', 'each entry must be { secrets, url?, events? }');
    }
    checkSecrets(settings.secrets, 'webhooks.keys[].secrets');
    return [key, settings] as const;
  });
  const tenants = byKey
    ? Promise.all(entries.map(async ([key, settings]) => [await sha256Hex(key), settings] as const)).then(
        (list) => new Map(list),
      )
    : Promise.resolve(new Map(entries));
  const storedSecrets = stored === undefined ? undefined : storedWebhookSecrets(stored.store, stored.clock);
  const secretsOf = async (owner: string | null) => {
    if (owner === null) return undefined;
    return (await tenants).get(owner)?.secrets ?? storedSecrets?.(owner);
  };
  // On an API node of a worker fleet, any node delivers a job's final events, whichever node created it; on a
  // durable store, a restarted server delivers the events of the jobs it resumes.
  const share = (jobs as Partial<{ webhookShare(): WebhookShare | undefined }>).webhookShare?.();
  const notifier = createWebhookNotifier(jobs, {
    ...rest,
    present: wireJob,
    ...(share === undefined ? {} : { share, secretsOf, secretsChange: storedSecrets !== undefined }),
  });
  return {
    notifier,
    async settingsOf(tenant): Promise<ResolvedWebhookKey | undefined> {
      if (tenant === undefined) return undefined;
      const own = (await tenants).get(tenant);
      if (own !== undefined || storedSecrets === undefined) return own;
      const secrets = await storedSecrets(tenant);
      return secrets === undefined ? undefined : { secrets, current: () => storedSecrets(tenant) };
    },
    close: () => notifier.close(),
  };
}

/**
 * The webhook a `POST /v1/bulk` asks for (`webhook` field), or the key's default one, checked: 400 for a
 * malformed one or one on a key without webhook settings, 422 for a URL the SSRF guard refuses.
 */
export async function requestedWebhook(
  context: Context,
  spec: unknown,
): Promise<PreparedWebhook | undefined> {
  const webhooks = context.services.webhooks;
  if (webhooks === undefined) {
    if (spec === undefined) return undefined;
    throw new HttpError('invalid_request', 'webhooks are not enabled on this server');
  }
  const settings = await webhooks.settingsOf(context.tenant);
  if (settings === undefined) {
    if (spec === undefined) return undefined;
    throw new HttpError('invalid_request', 'webhooks are not configured for this API key');
  }
  const chosen =
    spec !== undefined
      ? spec
      : settings.url === undefined
        ? undefined
        : { url: settings.url, ...(settings.events === undefined ? {} : { events: settings.events }) };
  if (chosen === undefined) return undefined;
  const { secrets, current } = settings;
  return webhooks.notifier.prepare(chosen, { secrets, ...(current === undefined ? {} : { current }) });
}

/** `GET /v1/bulk/{id}/webhooks` → `{ deliveries }`: every attempt, oldest first. */
export const listWebhookDeliveries: Operation = async (context) => {
  const id = context.params.id as string;
  const owner = context.tenant === undefined ? {} : { owner: context.tenant };
  const job = await context.services.jobs.get(id, owner);
  if (job === undefined) throw new HttpError('not_found', 'no such job');
  const deliveries = (await context.services.webhooks?.notifier.deliveries(id)) ?? [];
  return context.json(200, { deliveries });
};
