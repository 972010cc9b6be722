/**
 * Webhook URLs: parsing (scheme, credentials, length) and the SSRF check that resolves the host through the
 * {@link Resolver} seam and passes every address through the same guard as MX hosts. The delivery then connects
 * to the address checked here, so DNS rebinding cannot switch it.
 * @module
 */
import { type AddressGuard, createAddressGuard, parseIp } from '../dns/guard.js';
import type { Resolver } from '../dns/types.js';
import { WebhookInputError, WebhookRefusedError } from './errors.js';

/** Longest webhook URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** A webhook URL that parsed, before its host is resolved. */
export interface WebhookUrl {
  readonly url: URL;
  /** The host name or IP literal (IPv6 without brackets), lower case. */
  readonly host: string;
  readonly port: number;
}

/** A webhook URL whose host resolved to addresses that all passed the guard; connect to `address`. */
export interface CheckedTarget extends WebhookUrl {
  /** The address to connect to (the first of those the host resolved to). */
  readonly address: string;
  readonly family: 4 | 6;
}

/**
 * Parses a webhook URL. Throws {@link WebhookInputError} (`invalid_request`) when `value` is not a string, is
 * longer than {@link MAX_WEBHOOK_URL_LENGTH} or is not an absolute URL, and {@link WebhookRefusedError}
 * (`webhook_refused`) for a scheme other than `https:` (or `http:` with `allowHttp`) or credentials in the URL.
 * Numeric host spellings (`http://2130706433/`, `http://0x7f.1/`) are normalized by the WHATWG URL parser to the
 * dotted quad they mean, so the guard judges the real address.
 * @example
 * parseWebhookUrl('https://hooks.example.com/mailvet').host; // 'hooks.example.com'
 */
export function parseWebhookUrl(value: unknown, allowHttp = false, field = 'webhook.url'): WebhookUrl {
  if (typeof value !== 'string') throw new WebhookInputError(field, 'must be a string');
  if (value.length > MAX_WEBHOOK_URL_LENGTH) {
    throw new WebhookInputError(field, `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new WebhookInputError(field, 'must be an absolute URL such as https://hooks.example.com/mailvet');
  }
  const schemes = allowHttp ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    throw new WebhookRefusedError(
      `${field} must use ${allowHttp ? 'https: or http:' : 'https:'} (got ${JSON.stringify(url.protocol.slice(0, 32))})`,
    );
  }
  if (url.username !== '' || url.password !== '') {
    throw new WebhookRefusedError(`${field} must not carry credentials (user:password@)`);
  }
  const bracketed = url.hostname.startsWith('[') && url.hostname.endsWith(']');
  const host = (bracketed ? url.hostname.slice(1, -1) : url.hostname).toLowerCase();
  if (host === '') throw new WebhookInputError(field, 'must name a host');
  url.hash = '';
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  return { url, host, port };
}

/** Options of {@link checkTarget}. */
export interface CheckTargetOptions {
  /** Resolves the host's addresses. */
  readonly resolver: Resolver;
  /** The address guard (built from `allowAddresses`). */
  readonly guard: AddressGuard;
  /** Aborts the lookup. */
  readonly signal?: AbortSignal;
}

function refuse(parsed: WebhookUrl, address: string, guard: AddressGuard): WebhookRefusedError | null {
  const decision = guard.check(address);
  if (decision.allowed) return null;
  const why = decision.detail ?? decision.reason;
  return new WebhookRefusedError(
    `the webhook host ${parsed.host} resolves to ${address}, which is not publicly routable (${why}); ` +
      'allow-list the range with allowAddresses to call it',
  );
}

/**
 * Resolves the host of `parsed` (an IP literal is taken as is) and checks every address with the guard: one
 * refused address refuses the URL (a name that answers a public and a private address could be rebound).
 * Throws {@link WebhookRefusedError}; never connects.
 */
export async function checkTarget(parsed: WebhookUrl, options: CheckTargetOptions): Promise<CheckedTarget> {
  const literal = parseIp(parsed.host);
  let addresses: readonly string[];
  if (literal !== null) {
    addresses = [parsed.host];
  } else if (parsed.host.includes(':') || /^[\d.]+$/.test(parsed.host)) {
    throw new WebhookRefusedError(`the webhook host ${JSON.stringify(parsed.host)} is not a valid address`);
  } else {
    let answer: Awaited<ReturnType<Resolver['addresses']>>;
    try {
      answer = await options.resolver.addresses(
        parsed.host,
        options.signal === undefined ? {} : { signal: options.signal },
      );
    } catch (error) {
      throw new WebhookRefusedError(`the webhook host ${parsed.host} could not be resolved`, {
        cause: error,
      });
    }
    if (answer.kind !== 'records' || answer.records.length === 0) {
      throw new WebhookRefusedError(`the webhook host ${parsed.host} has no addresses`);
    }
    addresses = answer.records;
  }
  for (const address of addresses) {
    const refused = refuse(parsed, address, options.guard);
    if (refused !== null) throw refused;
  }
  const address = addresses[0] as string;
  return { ...parsed, address, family: parseIp(address)?.family ?? 4 };
}

/** Builds the guard the notifier uses from `allowAddresses` (validated: an `OptionsError` names a bad entry). */
export function webhookGuard(allowAddresses: readonly string[] = []): AddressGuard {
  return createAddressGuard(allowAddresses);
}
