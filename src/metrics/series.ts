/**
 * The labels of mailvet's metrics, as pure functions over what the observers hand over: every value comes from a
 * fixed set, so a label set stays bounded whatever the input (never an address, a domain, a key or a tenant).
 * @module
 */
import type { Job } from '../bulk/job-types.js';
import { PROVIDER_SUFFIXES } from '../classify/provider.js';
import type { RequestRecord } from '../http/request-record.js';
import { STATUSES, SUB_STATUSES, type VerificationResult } from '../result.js';
import type { WebhookDeliveryState } from '../webhooks/log.js';

/** The label of anything outside a label's known values. */
export const OTHER = 'other';

const STATUS_SET: ReadonlySet<string> = new Set(STATUSES);
const SUB_STATUS_SET: ReadonlySet<string> = new Set(SUB_STATUSES);
const PROVIDERS: ReadonlySet<string> = new Set(Object.keys(PROVIDER_SUFFIXES));

/** The labels of `mailvet_verifications_total` for one result. */
export interface VerificationLabels {
  readonly status: string;
  /** The sub-status, `none` when the result has none. */
  readonly sub_status: string;
  /** The recognised mail provider (`google`, `microsoft`, ...), or `other` when none was recognised. */
  readonly provider: string;
}

/** The `status` label of a verification's status. */
export function statusLabel(status: string): string {
  return STATUS_SET.has(status) ? status : OTHER;
}

/** The `sub_status` label of a verification's sub-status (`none` for none). */
export function subStatusLabel(subStatus: string | null): string {
  return subStatus === null ? 'none' : SUB_STATUS_SET.has(subStatus) ? subStatus : OTHER;
}

/** The `provider` label of a verification's mail provider. */
export function providerLabel(provider: string | null): string {
  return provider !== null && PROVIDERS.has(provider) ? provider : OTHER;
}

/** The labels of one verification: its status, sub-status and mail provider, each from a fixed set. */
export function verificationLabels(result: VerificationResult): VerificationLabels {
  return {
    status: statusLabel(result.status),
    sub_status: subStatusLabel(result.sub_status),
    provider: providerLabel(result.smtp_provider),
  };
}

const METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route label of a request that matched no route (a console file, an unknown path). */
export const NO_ROUTE = 'none';

/** The labels of `mailvet_http_requests_total` for one answered request. */
export interface RequestLabels {
  /** The method, or `other` for one outside GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS. */
  readonly method: string;
  /** The route's path template (`/v1/bulk/{id}`), or `none`: never the request's own path. */
  readonly route: string;
  /** The status code (`200`), or `other` outside 100-599. */
  readonly status: string;
}

/** The `method` label of a request's method. */
export function methodLabel(method: string): string {
  return METHODS.has(method) ? method : OTHER;
}

/** The `status` label of a response's status code. */
export function statusCodeLabel(status: number): string {
  return Number.isInteger(status) && status >= 100 && status <= 599 ? String(status) : OTHER;
}

/** The labels of one answered request. */
export function requestLabels(record: Pick<RequestRecord, 'method' | 'route' | 'status'>): RequestLabels {
  return {
    method: methodLabel(record.method),
    route: record.route ?? NO_ROUTE,
    status: statusCodeLabel(record.status),
  };
}

/** The states of `mailvet_jobs`. */
export const JOB_STATES = ['queued', 'processing', 'complete', 'failed'] as const;

/** The states of `mailvet_job_addresses`. */
export const ADDRESS_STATES = ['queued', 'done', 'retry_waiting'] as const;

/** How many jobs are in each state, and where their addresses stand. */
export interface JobTally {
  readonly jobs: Readonly<Record<(typeof JOB_STATES)[number], number>>;
  /**
   * Addresses of unfinished jobs still to verify (`queued`), with a final result in any job (`done`), and
   * waiting for a greylisting retry (`retry_waiting`).
   */
  readonly addresses: Readonly<Record<(typeof ADDRESS_STATES)[number], number>>;
}

/** What the job gauges read of a job: its state, size, progress, and positions waiting for a greylisting retry. */
export type TallyJob = Pick<Job, 'status' | 'total' | 'completed'> & {
  readonly retries: { readonly waiting: number };
};

/** Counts `jobs` by state, and their addresses by where they stand. */
export function tallyJobs(jobs: Iterable<TallyJob>): JobTally {
  const counts = { queued: 0, processing: 0, complete: 0, failed: 0 };
  const addresses = { queued: 0, done: 0, retry_waiting: 0 };
  for (const job of jobs) {
    if (job.status in counts) counts[job.status as keyof typeof counts] += 1;
    addresses.done += job.completed;
    addresses.retry_waiting += job.retries.waiting;
    if (job.status === 'queued' || job.status === 'processing') {
      addresses.queued += Math.max(0, job.total - job.completed - job.retries.waiting);
    }
  }
  return { jobs: counts, addresses };
}

/** The outcomes of `mailvet_webhook_deliveries_total`. */
export const WEBHOOK_OUTCOMES: readonly WebhookDeliveryState[] = ['delivered', 'retrying', 'failed'];

/** The outcome label of a webhook attempt. */
export function webhookOutcome(state: string): string {
  return (WEBHOOK_OUTCOMES as readonly string[]).includes(state) ? state : OTHER;
}

/** The SMTP reply classes of `mailvet_smtp_replies_total`, with the counter of each in the pool's stats. */
export const REPLY_CLASSES = [
  ['2xx', 'replies2xx'],
  ['3xx', 'replies3xx'],
  ['4xx', 'replies4xx'],
  ['5xx', 'replies5xx'],
] as const;
