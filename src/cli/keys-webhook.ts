/**
 * `mailvet keys webhook-secret <id|name> [--rotate --grace <duration> | --remove]`: gives a stored key its
 * webhook signing secret (`whsec_...`), rotates it (the old one keeps signing beside the new one for the grace)
 * or removes it. A new secret is printed once, alone on standard output; the store keeps it as given, since the
 * server signs with it.
 * @module
 */
import type { ApiKeyRecord, ApiKeyStore } from '../postgres/api-keys.js';
import { generateWebhookSecret } from '../webhooks/sign.js';
import type { ParsedArgs } from './args.js';
import { type CliIo, EXIT, quote, usageError, write } from './io.js';
import { graceMsOf } from './keys-args.js';

/** What `keys webhook-secret` was asked. */
export type WebhookSecretAction =
  | { readonly kind: 'set' }
  | { readonly kind: 'rotate'; readonly graceMs: number }
  | { readonly kind: 'remove' };

/** Reads `--rotate --grace <duration>` and `--remove` of `keys webhook-secret` (checked before the store opens). */
export function webhookSecretActionOf(args: ParsedArgs): WebhookSecretAction {
  const rotate = args.flag('rotate');
  const grace = args.string('grace');
  if (args.flag('remove')) {
    if (rotate || grace !== undefined)
      throw usageError('--remove cannot be combined with --rotate or --grace');
    return { kind: 'remove' };
  }
  if (rotate) {
    return {
      kind: 'rotate',
      graceMs: graceMsOf(
        grace,
        'keys webhook-secret --rotate needs --grace <duration>: how long the old secret keeps signing (e.g. 1h, 0s)',
      ),
    };
  }
  if (grace !== undefined) throw usageError('--grace applies to keys webhook-secret with --rotate only');
  return { kind: 'set' };
}

/** Runs `keys webhook-secret` on the live key `record`; resolves with the exit code. */
export async function changeWebhookSecret(
  record: ApiKeyRecord,
  action: WebhookSecretAction,
  keys: ApiKeyStore,
  io: CliIo,
  now: number,
): Promise<number> {
  const shown = `API key ${quote(record.name)} (id ${record.id})`;
  const revokedMeanwhile = () => usageError(`API key ${quote(record.name)} was revoked meanwhile`);
  if (action.kind === 'remove') {
    if (record.webhookSecret === null) throw usageError(`${shown} has no webhook secret`);
    if (!(await keys.setWebhookSecret(record.id, null, null))) throw revokedMeanwhile();
    await write(
      io.stderr,
      `mailvet: removed the webhook secret of ${shown}: its new jobs cannot ask for a webhook, and deliveries of its jobs fail until it has one again\n`,
    );
    return EXIT.ok;
  }
  if (action.kind === 'set' && record.webhookSecret !== null) {
    throw usageError(
      `${shown} has a webhook secret already: --rotate --grace <duration> replaces it, --remove drops it`,
    );
  }
  if (action.kind === 'rotate' && record.webhookSecret === null) {
    throw usageError(`${shown} has no webhook secret to rotate: run keys webhook-secret without --rotate`);
  }
  const secret = generateWebhookSecret();
  const until = action.kind === 'rotate' && action.graceMs > 0 ? now + action.graceMs : null;
  if (!(await keys.setWebhookSecret(record.id, secret, until))) throw revokedMeanwhile();
  await write(io.stdout, `${secret}\n`);
  const old =
    action.kind === 'set'
      ? ''
      : until === null
        ? ' The old secret signs no more.'
        : ` Until ${new Date(until).toISOString()} deliveries carry a signature by the old secret too.`;
  await write(
    io.stderr,
    `mailvet: ${action.kind === 'set' ? 'set' : 'rotated'} the webhook secret of ${shown}.${old} The secret is shown only now: give it to the receivers.\n`,
  );
  return EXIT.ok;
}
