/**
 * Errors of the webhook notifier: a URL that is malformed (`invalid_request`) or that points where mailvet
 * will not connect (`webhook_refused`).
 * @module
 */
import { MailvetError } from '../errors.js';

/** A webhook URL or event list that is malformed: not a string, too long, unparseable, unknown event names. */
export class WebhookInputError extends MailvetError {
  override name = 'WebhookInputError';
  /** The field at fault, e.g. `webhook.url`. */
  readonly field: string;

  constructor(field: string, message: string) {
    super('invalid_request', `${field} ${message}`);
    this.field = field;
  }
}

/**
 * A webhook URL mailvet refuses to call: a scheme other than `https:` (or `http:` when allowed), credentials in
 * the URL, a host that does not resolve, or an address the SSRF guard refuses. No connection was made.
 * The `message` is for the API client that chose the URL: it names the class of a refused address ("not
 * publicly routable"), never the address; `serverDetail` says what the host resolved to, for the server's log.
 */
export class WebhookRefusedError extends MailvetError {
  override name = 'WebhookRefusedError';
  /** For the operator only: the address the host resolved to and the range that refused it, if any. */
  readonly serverDetail: string | undefined;

  constructor(message: string, options: { cause?: unknown; serverDetail?: string } = {}) {
    super('webhook_refused', message, options.cause === undefined ? {} : { cause: options.cause });
    this.serverDetail = options.serverDetail;
  }
}
