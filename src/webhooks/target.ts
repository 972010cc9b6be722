/**
 * Webhook URLs: parsing (scheme, credentials, length) and the SSRF check that resolves the host through the
 * {@link Resolver} seam and passes every address through the same guard as MX hosts. The delivery then connects
 * to the address checked here, so DNS rebinding cannot switch it.
 * @module
 */

import type { Resolver } from '../dns/types.js';
import { type AddressGuard, createAddressGuard, parseIp } from '../net/guard.js';
import { WebhookInputError, WebhookRefusedError } from './errors.js';

/** Longest webhook URL accepted, in characters. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * How refusals name the settings that would allow a URL, so the message points at the knob the server's operator
 * has: the library's option names by default, the CLI's flags under `mailvet serve`.
 */
export interface WebhookSettingNames {
  /** The setting that opens an address range. @default 'allowAddresses' */
  readonly allowAddresses?: string;
  /** The setting that accepts `http:` URLs. @default 'allowHttpWebhooks' */
  readonly allowHttpWebhooks?: string;
}

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
 * (`webhook_refused`) for a scheme other than `https:` (or `http:` with `allowHttp`) or credentials in the URL;
 * refusing an `http:` URL, the message names `names.allowHttpWebhooks`.
 * Numeric host spellings (`http://2130706433/`, `http://0x7f.1/`) are normalized by the WHATWG URL parser to the
 * dotted quad they mean, so the guard judges the real address.
 * @example
 * parseWebhookUrl('https://hooks.example.com/mailvet').host; // 'hooks.example.com'
 */
export function parseWebhookUrl(
  value: unknown,
  allowHttp = false,
  field = 'webhook.url',
  names: WebhookSettingNames = {},
): WebhookUrl {
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
    const hint =
      url.protocol === 'http:'
        ? `; the server's operator can accept http: with ${names.allowHttpWebhooks ?? 'allowHttpWebhooks'}`
        : '';
    throw new WebhookRefusedError(
      `${field} must use ${allowHttp ? 'https: or http:' : 'https:'} (got ${JSON.stringify(url.protocol.slice(0, 32))})${hint}`,
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
  /** How the refusal names the setting that opens a range. @default option names */
  readonly names?: WebhookSettingNames;
}

function refuse(
  parsed: WebhookUrl,
  address: string,
  options: CheckTargetOptions,
): WebhookRefusedError | null {
  const decision = options.guard.check(address);
  if (decision.allowed) return null;
  const why = decision.detail ?? decision.reason;
  const setting = options.names?.allowAddresses ?? 'allowAddresses';
  return new WebhookRefusedError(
    `the webhook host ${parsed.host} is not publicly routable; the server's operator can open its range with ${setting}`,
    { serverDetail: `the webhook host ${parsed.host} resolves to ${address} (${why})` },
  );
}

/**
 * Resolves the host of `parsed` (an IP literal is taken as is) and checks every address with the guard: one
 * refused address refuses the URL (a name that answers a public and a private address could be rebound).
 * Throws {@link WebhookRefusedError}, whose message names the class of a refused address and never the address
 * (a tenant must not learn the server's private DNS; `serverDetail` has it); never connects.
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
    const refused = refuse(parsed, address, options);
    if (refused !== null) throw refused;
  }
  const address = addresses[0] as string;
  return { ...parsed, address, family: parseIp(address)?.family ?? 4 };
}

/** Builds the guard the notifier uses from `allowAddresses` (validated: an `OptionsError` names a bad entry). */
export function webhookGuard(allowAddresses: readonly string[] = []): AddressGuard {
  return createAddressGuard(allowAddresses);
}
