/**
 * Signing with the `standardwebhooks` package: `webhook-id`, `webhook-timestamp`, `webhook-signature`.
 * @module
 */
import { Webhook } from 'standardwebhooks';
import { OptionsError } from '../errors.js';
import { WebhookRefusedError } from './errors.js';

const SECRET = /^whsec_[A-Za-z0-9+/]+={0,2}$/;
const MIN_KEY_BYTES = 24;
const MAX_KEY_BYTES = 64;

/**
 * Checks a list of `whsec_...` secrets (one, or two during a rotation) and returns them. Each must be
 * `whsec_` followed by 24-64 bytes of base64.
 */
export function checkSecrets(secrets: unknown, option = 'webhooks.secrets'): readonly string[] {
  if (!Array.isArray(secrets) || secrets.length < 1 || secrets.length > 2) {
    throw new OptionsError(option, 'must be a list of one or two whsec_ secrets (two while rotating)');
  }
  for (const [index, secret] of secrets.entries()) {
    if (typeof secret !== 'string' || !SECRET.test(secret)) {
      throw new OptionsError(option, `entry ${index} must be whsec_ followed by base64`);
    }
    const bytes = Buffer.from(secret.slice(6), 'base64').length;
    if (bytes < MIN_KEY_BYTES || bytes > MAX_KEY_BYTES) {
      throw new OptionsError(option, `entry ${index} must hold ${MIN_KEY_BYTES}-${MAX_KEY_BYTES} bytes`);
    }
  }
  return Object.freeze([...secrets] as string[]);
}

/**
 * A new random secret, `whsec_` and 32 bytes of base64.
 * @example
 * const secret = generateWebhookSecret(); // 'whsec_...'
 */
export function generateWebhookSecret(): string {
  const bytes = new Uint8Array(32);
  globalThis.crypto.getRandomValues(bytes);
  return `whsec_${Buffer.from(bytes).toString('base64')}`;
}

/** The Standard Webhooks headers of one delivery. */
export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  /** One `v1,<base64>` signature per secret, separated by spaces. */
  readonly 'webhook-signature': string;
}

/**
 * Signs `body` for message `id` at `timestampMs` with every secret (a receiver that knows either one accepts it).
 * @example
 * const headers = signWebhook([secret], 'msg_1', Date.now(), '{"type":"bulk.completed"}');
 * new Webhook(secret).verify(body, headers); // passes
 */
export function signWebhook(
  secrets: readonly string[],
  id: string,
  timestampMs: number,
  body: string,
): SignedHeaders {
  const seconds = Math.floor(timestampMs / 1000);
  const at = new Date(seconds * 1000);
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(' ');
  return { 'webhook-id': id, 'webhook-timestamp': String(seconds), 'webhook-signature': signature };
}

/**
 * The secrets that sign one attempt: what `current()` answers now when given (a stored key's secret may have been
 * rotated or removed), else `secrets`. Throws {@link WebhookRefusedError} (a failed attempt, retried on the
 * schedule) when the key has no secret now or its secrets cannot be read.
 */
export async function signingSecrets(signing: {
  readonly secrets: readonly string[];
  readonly current?: () => Promise<readonly string[] | undefined>;
}): Promise<readonly string[]> {
  if (signing.current === undefined) return signing.secrets;
  let found: readonly string[] | undefined;
  try {
    found = await signing.current();
  } catch (error) {
    throw new WebhookRefusedError("the webhook secret of the job's API key could not be read", {
      cause: error,
      serverDetail: `reading the webhook secret failed: ${error instanceof Error ? error.message : String(error)}`,
    });
  }
  if (found === undefined || found.length === 0) {
    throw new WebhookRefusedError(
      "the job's API key has no webhook secret now (removed, or the key revoked)",
    );
  }
  return found;
}
