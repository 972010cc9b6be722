/**
 * The types of the webhook notifier (`createWebhookNotifier`, notifier.ts): what it reads of jobs, its options,
 * and what it returns.
 * @module
 */
import type { Clock } from '../clock.js';
import type { Resolver } from '../dns/types.js';
import type { WebhookAttempt, WebhookEventType, WebhookLog } from './log.js';
import type { WebhookShare } from './share.js';
import type { WebhookSettingNames, WebhookUrl } from './target.js';
import type { WebhookTransport } from './transport.js';

/**
 * What the notifier reads of a job. The bulk layer's `Job` has these fields (and more, which {@link
 * WebhookNotifierOptions.present} may use); this seam declares them itself so that it imports nothing of the
 * layer above it.
 */
export interface WebhookJob {
  readonly id: string;
  /** `complete` and `failed` are final; any other status is not. */
  readonly status: string;
  /** Addresses with a final result. */
  readonly completed: number;
}

/** Whose job it is: a notifier attaches a webhook only to a job of that owner. */
export interface WebhookJobAccess {
  /** The caller's tenant. @default none */
  readonly owner?: string;
}

/**
 * The jobs a notifier watches: the two members of `BulkJobManager` it uses (the manager is passed as is).
 * `get` answers `undefined` for a job that does not exist or belongs to another owner.
 */
export interface WebhookJobSource<J extends WebhookJob = WebhookJob> {
  get(id: string, access?: WebhookJobAccess): Promise<J | undefined>;
  on(event: 'progress' | 'complete' | 'failed', listener: (job: J) => void): () => void;
}

/** A job's webhook, as `POST /v1/bulk` and {@link WebhookNotifier.watch} take it. */
export interface WebhookSpec {
  /** `https:` URL (or `http:` with `allowHttpWebhooks`) without credentials, at most 2048 characters. */
  readonly url: string;
  /** Events to deliver. @default ['bulk.completed', 'bulk.failed'] */
  readonly events?: readonly WebhookEventType[];
}

/** Who signs a job's deliveries: the secrets of its API key (one, or two during a rotation). */
export interface WebhookSigning {
  /** `whsec_...` secrets; every delivery carries one signature per secret. */
  readonly secrets: readonly string[];
  /**
   * Reads the key's secrets anew before each attempt, for keys whose secret may be rotated or removed while
   * their jobs run (stored keys). An attempt for which it answers `undefined` (no secret now) or throws is a
   * failed attempt, retried on the schedule. @default none: `secrets` sign every attempt
   */
  readonly current?: () => Promise<readonly string[] | undefined>;
}

/**
 * What a tenant is not told but the server's operator may want: the address a refused host resolved to, the
 * transport error of a failed attempt.
 */
export interface WebhookServerDetail {
  /** The job the attempt was for, or `null` for a URL checked before its job exists. */
  readonly jobId: string | null;
  /** The webhook URL's host. */
  readonly host: string;
  /** What happened, e.g. `the webhook host a.example resolves to 10.0.0.1 (10.0.0.0/8 private use (RFC 1918))`. */
  readonly detail: string;
}

/** The message of a failed attempt that got no HTTP status: one for every transport failure (no port-probe oracle). */
export const WEBHOOK_UNREACHABLE = 'the receiver could not be reached or sent no HTTP response';

/** Options of {@link createWebhookNotifier}. Every field is optional. */
export interface WebhookNotifierOptions<J extends WebhookJob = WebhookJob> {
  /** Default signing secrets (`whsec_...`, one or two) for jobs watched without their own. @default none */
  readonly secrets?: readonly string[];
  /** Resolves webhook hosts. @default nodeResolver() */
  readonly resolver?: Resolver;
  /** Sends the POSTs. @default nodeWebhookTransport() */
  readonly transport?: WebhookTransport;
  /** Ranges (CIDR) opened in the SSRF guard, as for MX hosts. @default [] */
  readonly allowAddresses?: readonly string[];
  /** Accepts `http:` URLs as well as `https:`. @default false */
  readonly allowHttpWebhooks?: boolean;
  /** At most one `bulk.progress` per job per this many ms (plus one at completion). @default 10000 */
  readonly progressIntervalMs?: number;
  /** Delays before each retry, in ms, jittered ±20 %. @default DEFAULT_WEBHOOK_RETRY_DELAYS_MS (about a day) */
  readonly retryDelaysMs?: readonly number[];
  /** Time allowed to connect, per attempt, in ms. @default 5000 */
  readonly connectTimeoutMs?: number;
  /** Time allowed for a whole attempt, in ms. @default 15000 */
  readonly timeoutMs?: number;
  /** Response body bytes read at most (and discarded). @default 65536 */
  readonly maxResponseBytes?: number;
  /** Where attempts are recorded. @default memoryWebhookLog() */
  readonly log?: WebhookLog;
  /** Time and timers of the retry schedule. @default the real clock */
  readonly clock?: Clock;
  /** Random source of the jitter, uniform in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Makes `webhook-id`s. @default `msg_` + crypto.randomUUID() */
  readonly ids?: () => string;
  /** Turns the job into the payload's `data` (the HTTP adapter sends its wire form). @default the job as is */
  readonly present?: (job: J) => unknown;
  /**
   * Shares webhooks with the notifiers of other nodes (the API nodes of a worker fleet: `manager.webhookShare()`).
   * `attach` saves the webhook there; a `bulk.completed` or `bulk.failed` event of a job this notifier has no
   * webhook of is looked up there (signed with `secretsOf` the job's owner); each of those two events is
   * delivered by the one node that claims it (`<job id>:<event>`), whichever created the job. A share with
   * `unfinished` (a manager's on a durable store) also has the notifier watch, as it starts, the webhooks of the jobs
   * not finished yet, so that a restarted server delivers their events. @default none
   */
  readonly share?: WebhookShare;
  /** The signing secrets of a job's owner, for webhooks read from `share`. @default the `secrets` option */
  readonly secretsOf?: (owner: string | null) => Promise<readonly string[] | undefined>;
  /**
   * Whether the secrets of `secretsOf` are read anew before each attempt of a webhook read from `share` (as
   * {@link WebhookSigning.current} does; for keys whose secret may change while the server runs). @default false
   */
  readonly secretsChange?: boolean;
  /**
   * How refusals name the settings that would allow a URL (`mailvet serve` gives its flags).
   * @default { allowAddresses: 'allowAddresses', allowHttpWebhooks: 'allowHttpWebhooks' }
   */
  readonly settingNames?: WebhookSettingNames;
  /**
   * Receives what refusals and the delivery log keep from the tenant (the address a host resolved to, the raw
   * transport error), for the server's log. @default none (dropped)
   */
  readonly onDetail?: (detail: WebhookServerDetail) => void;
}

/** A webhook that passed the checks, ready to attach to a job. */
export interface PreparedWebhook extends WebhookSigning {
  readonly target: WebhookUrl;
  readonly events: readonly WebhookEventType[];
}

/** Delivers a manager's job events to the jobs' webhooks. */
export interface WebhookNotifier {
  /**
   * Checks `spec` (throws `invalid_request` for a malformed URL or event list, `webhook_refused` for a URL the
   * SSRF guard refuses, `invalid_option` when no secret is known) without attaching it to a job.
   */
  prepare(spec: unknown, signing?: WebhookSigning): Promise<PreparedWebhook>;
  /** Attaches a prepared webhook to job `jobId`; a job that is finished already gets its final event. */
  attach(jobId: string, webhook: PreparedWebhook, access?: WebhookJobAccess): Promise<void>;
  /**
   * Stops watching `jobId` (call it when the job is deleted): no more events are sent for it; deliveries
   * already under way keep their retries.
   */
  detach(jobId: string): void;
  /** `prepare` then `attach`. */
  watch(jobId: string, spec: unknown, access?: WebhookJobAccess & Partial<WebhookSigning>): Promise<void>;
  /** The delivery attempts of `jobId`, oldest first. */
  deliveries(jobId: string): Promise<readonly WebhookAttempt[]>;
  /** Resolves when no attempt is in flight (retries may still be scheduled). */
  idle(): Promise<void>;
  /** Stops listening and cancels scheduled retries; attempts in flight finish. Idempotent. */
  close(): Promise<void>;
}
