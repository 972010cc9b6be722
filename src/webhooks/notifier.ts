/**
 * `createWebhookNotifier`: listens to a `BulkJobManager` and delivers signed webhooks (Standard Webhooks) for
 * `bulk.progress`, `bulk.completed` and `bulk.failed`, at least once, with retries over about a day.
 * @module
 */
import type { Clock } from '../clock.js';
import { nodeResolver } from '../dns/node.js';
import { JobNotFoundError, OptionsError } from '../errors.js';
import { integerOption } from '../option-fields.js';
import { WebhookInputError, WebhookRefusedError } from './errors.js';
import { webhookEventsOf } from './events.js';
import { memoryWebhookLog, type WebhookEventType } from './log.js';
import { nodeWebhookTransport } from './node-transport.js';
import {
  type PreparedWebhook,
  WEBHOOK_UNREACHABLE,
  type WebhookJob,
  type WebhookJobAccess,
  type WebhookJobSource,
  type WebhookNotifier,
  type WebhookNotifierOptions,
  type WebhookSigning,
} from './notifier-types.js';
import { DEFAULT_WEBHOOK_RETRY_DELAYS_MS, retryDelayMs } from './schedule.js';
import type { SharedWebhook } from './share.js';
import { checkSecrets, signingSecrets, signWebhook } from './sign.js';
import { checkTarget, parseWebhookUrl, webhookGuard } from './target.js';

export type {
  PreparedWebhook,
  WebhookJob,
  WebhookJobAccess,
  WebhookJobSource,
  WebhookNotifier,
  WebhookNotifierOptions,
  WebhookServerDetail,
  WebhookSigning,
  WebhookSpec,
} from './notifier-types.js';
export { WEBHOOK_UNREACHABLE };

interface Watch {
  readonly jobId: string;
  readonly webhook: PreparedWebhook;
  lastProgressAt: number | null;
  lastProgressCompleted: number;
  finished: boolean;
  deliveries: number;
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => globalThis.setTimeout(callback, ms),
  clearTimeout: (handle) => globalThis.clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * Creates a notifier that delivers `manager`'s job events to the webhooks attached with `watch`/`attach`.
 * Each event gets one `webhook-id` kept across its retries; every attempt resolves and checks the host again
 * (a URL that starts failing the guard gives a failed attempt, never a connection) and is signed anew with
 * `standardwebhooks`. Works without the HTTP adapter.
 * @example
 * const jobs = new BulkJobManager({ verifier });
 * const notifier = createWebhookNotifier(jobs, { secrets: [process.env.WEBHOOK_SECRET!] });
 * const job = await jobs.create({ emails, autoStart: false });
 * await notifier.watch(job.id, { url: 'https://hooks.example.com/mailvet' });
 * await jobs.start(job.id);
 */
export function createWebhookNotifier<J extends WebhookJob>(
  manager: WebhookJobSource<J>,
  options: WebhookNotifierOptions<J> = {},
): WebhookNotifier {
  const defaults = options.secrets === undefined ? undefined : checkSecrets(options.secrets, 'secrets');
  const guard = webhookGuard(options.allowAddresses ?? []);
  const allowHttp = options.allowHttpWebhooks ?? false;
  const progressIntervalMs = integerOption(
    options.progressIntervalMs,
    'progressIntervalMs',
    10_000,
    0,
    86_400_000,
  );
  const connectTimeoutMs = integerOption(options.connectTimeoutMs, 'connectTimeoutMs', 5_000, 1, 600_000);
  const timeoutMs = integerOption(options.timeoutMs, 'timeoutMs', 15_000, 1, 600_000);
  const maxResponseBytes = integerOption(options.maxResponseBytes, 'maxResponseBytes', 65_536, 1, 16_777_216);
  const delays = options.retryDelaysMs ?? DEFAULT_WEBHOOK_RETRY_DELAYS_MS;
  delays.forEach((delay, index) => {
    integerOption(delay, `retryDelaysMs[${index}]`, 0, 0, 7 * 86_400_000);
  });
  const clock = options.clock ?? realClock;
  const random = options.random ?? Math.random;
  const ids = options.ids ?? (() => `msg_${globalThis.crypto.randomUUID()}`);
  const log = options.log ?? memoryWebhookLog();
  const present = options.present ?? ((job: J) => job);
  let resolver = options.resolver;
  let transport = options.transport;
  const share = options.share;
  const names = options.settingNames ?? {};
  const tell = (jobId: string | null, host: string, detail: string | undefined): void => {
    if (detail === undefined || options.onDetail === undefined) return;
    try {
      options.onDetail({ jobId, host, detail });
    } catch {
      // A failing log sink must not change what the tenant gets.
    }
  };

  const watches = new Map<string, Watch>();
  const timers = new Set<unknown>();
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  let closed = false;

  const iso = (ms: number) => new Date(ms).toISOString();

  function release(watch: Watch): void {
    watch.deliveries--;
    if (watch.finished && watch.deliveries === 0 && watches.get(watch.jobId) === watch) {
      watches.delete(watch.jobId);
    }
  }

  async function attempt(watch: Watch, id: string, type: WebhookEventType, body: string, n: number) {
    inFlight++;
    let status: number | null = null;
    let error: string | null = null;
    const at = clock.now();
    try {
      const secrets = await signingSecrets(watch.webhook);
      resolver ??= nodeResolver();
      const target = await checkTarget(watch.webhook.target, { resolver, guard, names });
      transport ??= nodeWebhookTransport();
      const headers = signWebhook(secrets, id, clock.now(), body);
      const response = await transport.send({
        url: target.url,
        address: target.address,
        port: target.port,
        headers: { ...headers, 'content-type': 'application/json' },
        body,
        connectTimeoutMs,
        timeoutMs,
        maxResponseBytes,
      });
      status = response.status;
      if (status < 200 || status > 299) error = `the receiver answered ${status}`;
    } catch (caught) {
      const host = watch.webhook.target.host;
      if (caught instanceof WebhookRefusedError) {
        error = caught.message;
        tell(watch.jobId, host, caught.serverDetail);
      } else {
        // Refused, reset, timed out or a TLS failure all read the same: the log must not probe ports for tenants.
        error = WEBHOOK_UNREACHABLE;
        tell(watch.jobId, host, caught instanceof Error ? caught.message : String(caught));
      }
    }
    const delay = error === null || closed ? null : retryDelayMs(delays, n - 1, random);
    const state = error === null ? 'delivered' : delay === null ? 'failed' : 'retrying';
    const next = delay === null ? null : clock.now() + delay;
    try {
      await log.append(watch.jobId, {
        event_id: id,
        event_type: type,
        attempt: n,
        attempted_at: iso(at),
        status_code: status,
        error,
        state,
        next_retry_at: next === null ? null : iso(next),
      });
    } catch {
      // A log that fails must not stop deliveries; the attempt itself happened.
    }
    if (delay !== null) {
      const timer = clock.setTimeout(() => {
        timers.delete(timer);
        void attempt(watch, id, type, body, n + 1);
      }, delay);
      timers.add(timer);
    } else {
      release(watch);
    }
    inFlight--;
    if (inFlight === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  function deliver(watch: Watch, type: WebhookEventType, job: J): void {
    if (closed || !watch.webhook.events.includes(type)) return;
    const now = clock.now();
    const body = JSON.stringify({ type, timestamp: iso(now), data: present(job) });
    watch.deliveries++;
    void attempt(watch, ids(), type, body, 1);
  }

  function progress(watch: Watch, job: J, force: boolean): void {
    const now = clock.now();
    if (job.completed === watch.lastProgressCompleted) return;
    if (!force && watch.lastProgressAt !== null && now - watch.lastProgressAt < progressIntervalMs) return;
    watch.lastProgressAt = now;
    watch.lastProgressCompleted = job.completed;
    deliver(watch, 'bulk.progress', job);
  }

  function final(job: J, type: WebhookEventType): void {
    const watch = watches.get(job.id);
    if (watch?.finished) return;
    if (watch !== undefined) watch.finished = true;
    if (share === undefined) {
      if (watch !== undefined) finish(watch, job, type);
      return;
    }
    void claimed(job, type, watch).catch(() => {
      // The share does not answer (Redis or the database is away): another node may have claimed the event.
      if (watch !== undefined && watch.deliveries === 0) watches.delete(job.id);
    });
  }

  function finish(watch: Watch, job: J, type: WebhookEventType): void {
    progress(watch, job, true);
    deliver(watch, type, job);
    if (watch.deliveries === 0 && watches.get(job.id) === watch) watches.delete(job.id);
  }

  /** With a share: delivers the event of `job` if this node claims it, with its own webhook or the shared one. */
  async function claimed(job: J, type: WebhookEventType, local: Watch | undefined): Promise<void> {
    const watch = local ?? (await sharedWatch(job.id));
    if (watch === undefined) return;
    if (closed || !(await share!.claim(`${job.id}:${type}`))) {
      if (watch.deliveries === 0 && watches.get(job.id) === watch) watches.delete(job.id);
      return;
    }
    finish(watch, job, type);
  }

  /** A finished watch of the webhook `share` keeps for `jobId`, or `undefined` (none, or no secret for it). */
  async function sharedWatch(jobId: string): Promise<Watch | undefined> {
    const spec = await share!.load(jobId);
    return spec === undefined ? undefined : watchOf(jobId, spec, true);
  }

  /** A watch of `spec` for `jobId`, signed with `secretsOf` its owner; `undefined` when watched or no secret. */
  async function watchOf(jobId: string, spec: SharedWebhook, finished: boolean): Promise<Watch | undefined> {
    if (watches.has(jobId)) return undefined;
    const secretsOf = options.secretsOf;
    const secrets = (await secretsOf?.(spec.owner)) ?? defaults;
    if (secrets === undefined || watches.has(jobId)) return undefined;
    const current =
      secretsOf !== undefined && options.secretsChange === true ? () => secretsOf(spec.owner) : undefined;
    const watch: Watch = {
      jobId,
      webhook: {
        target: parseWebhookUrl(spec.url, allowHttp, 'webhook.url', names),
        events: spec.events,
        secrets,
        ...(current === undefined ? {} : { current }),
      },
      lastProgressAt: null,
      lastProgressCompleted: -1,
      finished,
      deliveries: 0,
    };
    watches.set(jobId, watch);
    return watch;
  }

  /**
   * Watches again the webhooks `share` keeps of unfinished jobs (a durable store's, after a restart): their
   * events from now on are delivered; a job that finished meanwhile gets its final event.
   */
  async function resume(): Promise<void> {
    for (const spec of (await share?.unfinished?.()) ?? []) {
      if (closed) return;
      const watch = await watchOf(spec.jobId, spec, false);
      if (watch === undefined) continue;
      const job = await manager.get(spec.jobId, spec.owner === null ? {} : { owner: spec.owner });
      if (job?.status === 'complete') final(job, 'bulk.completed');
      else if (job?.status === 'failed') final(job, 'bulk.failed');
    }
  }

  const unsubscribe = [
    manager.on('progress', (job) => {
      const watch = watches.get(job.id);
      if (watch !== undefined && !watch.finished) progress(watch, job, false);
    }),
    manager.on('complete', (job) => final(job, 'bulk.completed')),
    manager.on('failed', (job) => final(job, 'bulk.failed')),
  ];
  // A store that cannot be read now leaves those jobs' later events undelivered, as a restart without it would.
  void resume().catch(() => {});

  async function prepare(spec: unknown, signing?: WebhookSigning): Promise<PreparedWebhook> {
    if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) {
      throw new WebhookInputError('webhook', 'must be an object { url, events? }');
    }
    const { url, events, ...rest } = spec as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) {
      throw new WebhookInputError('webhook', `has an unknown field ${JSON.stringify(unknown.slice(0, 64))}`);
    }
    const target = parseWebhookUrl(url, allowHttp, 'webhook.url', names);
    const list = webhookEventsOf(events);
    const secrets = signing === undefined ? defaults : checkSecrets(signing.secrets);
    if (secrets === undefined) throw new OptionsError('secrets', 'no webhook secret is configured');
    resolver ??= nodeResolver();
    try {
      await checkTarget(target, { resolver, guard, names });
    } catch (error) {
      if (error instanceof WebhookRefusedError) tell(null, target.host, error.serverDetail);
      throw error;
    }
    return {
      target,
      events: list,
      secrets,
      ...(signing?.current === undefined ? {} : { current: signing.current }),
    };
  }

  async function attach(jobId: string, webhook: PreparedWebhook, access?: WebhookJobAccess): Promise<void> {
    const watch: Watch = {
      jobId,
      webhook,
      lastProgressAt: null,
      lastProgressCompleted: -1,
      finished: false,
      deliveries: 0,
    };
    watches.set(jobId, watch);
    const job = await manager.get(jobId, access);
    if (job === undefined) {
      if (watches.get(jobId) === watch) watches.delete(jobId);
      throw new JobNotFoundError(jobId);
    }
    await share?.save(jobId, { url: webhook.target.url.href, events: webhook.events });
    if (job.status === 'complete') final(job, 'bulk.completed');
    else if (job.status === 'failed') final(job, 'bulk.failed');
  }

  return {
    prepare,
    attach,
    detach(jobId) {
      const watch = watches.get(jobId);
      if (watch === undefined) return;
      watch.finished = true;
      if (watch.deliveries === 0) watches.delete(jobId);
    },
    async watch(jobId, spec, access = {}) {
      const { secrets, current, ...rest } = access;
      const signing =
        secrets === undefined ? undefined : { secrets, ...(current === undefined ? {} : { current }) };
      const prepared = await prepare(spec, signing);
      await attach(jobId, prepared, rest);
    },
    async deliveries(jobId) {
      return log.list(jobId);
    },
    idle() {
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const off of unsubscribe) off();
      for (const timer of timers) clock.clearTimeout(timer);
      timers.clear();
      watches.clear();
      await (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve)));
    },
  };
}
