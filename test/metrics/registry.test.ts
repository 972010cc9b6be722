/**
 * The series of `createMetrics`, fed the way serve and worker feed them: a verifier (fake DNS and SMTP seams) with
 * the metrics' observer, the handler's request records, the store's statements, the webhook log, the job manager.
 */
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { listedMemoryStore, watchJobs } from '../../src/cli/metrics.js';
import { cachedResolver } from '../../src/dns/cached.js';
import { OptionsError } from '../../src/errors.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { scriptedTransport } from '../../src/testing/scripted-channel.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifierWith } from '../../src/verifier-with.js';
import { memoryWebhookLog } from '../../src/webhooks/log.js';

const PLATFORM = {
  resolver: () => cachedResolver(ZONE()),
  transport: () => transport(),
  heloHost: () => 'probe.example.net',
};

function ZONE() {
  return staticResolver({
    'shop.test': { mx: [{ priority: 10, exchange: 'aspmx.l.google.com' }] },
    'aspmx.l.google.com': { a: ['192.0.2.10'] },
    'down.test': { mx: [{ priority: 10, exchange: 'mx.down.test' }] },
    'mx.down.test': { a: ['192.0.2.20'] },
  });
}

/** jane exists at shop.test; everyone else does not; down.test's server closes at once. */
function transport() {
  return scriptedTransport((target) =>
    target.host === '192.0.2.20'
      ? { greeting: '421 4.3.2 going away' }
      : {
          respond: (command) => {
            if (command.startsWith('RCPT'))
              return command.includes('<jane@') ? '250 2.1.5 ok' : '550 5.1.1 no such user';
            if (command.startsWith('EHLO')) return ['250-mx.test', '250 PIPELINING'];
            if (command.startsWith('QUIT')) return '221 2.0.0 bye';
            return '250 2.0.0 ok';
          },
        },
  );
}

/** The value of one sample line (`name{labels} value`) of an exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((row) => row.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function verifierWith(observer: ReturnType<typeof createMetrics>['observer']) {
  return createVerifierWith(PLATFORM, {
    transport: transport(),
    allowTlds: ['test'],
    allowAddresses: ['192.0.2.0/24'],
    mailFrom: 'probe@example.net',
    catchAll: false,
    mxBackoffMs: 60_000,
    observer,
  });
}

describe('createMetrics', () => {
  it('counts verifications by status, sub-status and provider, with their durations, DNS and SMTP counters', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const verifier = verifierWith(metrics.observer);
    let body = '';
    let contentType = '';
    try {
      await verifier.verify('jane@shop.test');
      await verifier.verify('nobody@shop.test');
      await verifier.verify('bob@shop.test');
      await verifier.verify('not an address');
      await verifier.verify('x@down.test');
      ({ body, contentType } = await metrics.exposition());
    } finally {
      await verifier.dispose();
    }
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(
      sample(body, 'mailvet_verifications_total{status="valid",sub_status="none",provider="google"}'),
    ).toBe(1);
    expect(
      sample(
        body,
        'mailvet_verifications_total{status="invalid",sub_status="mailbox_not_found",provider="google"}',
      ),
    ).toBe(2);
    expect(
      sample(
        body,
        'mailvet_verifications_total{status="invalid",sub_status="failed_syntax_check",provider="other"}',
      ),
    ).toBe(1);
    expect(sample(body, 'mailvet_verification_duration_seconds_count')).toBe(5);
    expect(sample(body, 'mailvet_dns_queries_total')).toBeGreaterThanOrEqual(4); // 2 MX, 2 A
    expect(sample(body, 'mailvet_dns_cache_hits_total')).toBeGreaterThanOrEqual(2); // shop.test again
    expect(sample(body, 'mailvet_smtp_sessions_opened_total')).toBeGreaterThanOrEqual(2);
    expect(sample(body, 'mailvet_smtp_sessions_reused_total')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'mailvet_smtp_sessions_failed_total')).toBeGreaterThanOrEqual(1);
    expect(sample(body, 'mailvet_smtp_replies_total{class="2xx"}')).toBe(1);
    expect(sample(body, 'mailvet_smtp_replies_total{class="5xx"}')).toBe(2);
    expect(sample(body, 'mailvet_smtp_mx_backoffs_total')).toBe(1);
    expect(sample(body, 'mailvet_smtp_pool_waiters')).toBe(0);
    expect(body).not.toMatch(/jane|nobody|shop\.test|down\.test|google\.com/);
    expect(body).not.toMatch(/^process_|^nodejs_/m);
  });

  it("serves Node's process metrics by default, on its own registry (not prom-client's global one)", async () => {
    const { register } = await import('prom-client');
    const metrics = createMetrics();
    const { body } = await metrics.exposition();
    expect(body).toMatch(/^process_cpu_user_seconds_total /m);
    expect(body).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(body).toMatch(/^nodejs_active_handles\{type="\w+"\} \d+/m);
    expect(body).not.toMatch(/^nodejs_active_\w+_total/m); // gauges named like counters: left out
    expect(await register.getSingleMetric('mailvet_verifications_total')).toBeUndefined();
    createMetrics(); // a second registry in one process: no "already registered" error
  });

  it('counts HTTP requests by method, route template and status, with durations per route', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const record = { requestId: 'r', bytes: undefined, tenant: 't', keyId: undefined };
    metrics.onRequest({ ...record, method: 'GET', route: '/v1/verify', status: 200, durationMs: 12 });
    metrics.onRequest({ ...record, method: 'GET', route: '/v1/verify', status: 200, durationMs: 3000 });
    metrics.onRequest({ ...record, method: 'BREW', route: null, status: 405, durationMs: 1 });
    const { body } = await metrics.exposition();
    expect(sample(body, 'mailvet_http_requests_total{method="GET",route="/v1/verify",status="200"}')).toBe(2);
    expect(sample(body, 'mailvet_http_requests_total{method="other",route="none",status="405"}')).toBe(1);
    expect(
      sample(
        body,
        'mailvet_http_request_duration_seconds_bucket{le="0.025",method="GET",route="/v1/verify"}',
      ),
    ).toBe(1);
    expect(
      sample(body, 'mailvet_http_request_duration_seconds_sum{method="GET",route="/v1/verify"}'),
    ).toBeCloseTo(3.012);
  });

  it("times the store's statements and counts its errors", async () => {
    const metrics = createMetrics({ processMetrics: false });
    metrics.onQuery(2, false);
    metrics.onQuery(40, false);
    metrics.onQuery(5, true);
    const { body } = await metrics.exposition();
    expect(sample(body, 'mailvet_store_query_duration_seconds_count')).toBe(2);
    expect(sample(body, 'mailvet_store_query_duration_seconds_bucket{le="0.0025"}')).toBe(1);
    expect(sample(body, 'mailvet_store_errors_total')).toBe(1);
  });

  it('pings Redis at each scrape: a round trip when it answers, an error when it fails', async () => {
    const metrics = createMetrics({ processMetrics: false });
    let up = true;
    metrics.watchRedis(async () => {
      if (!up) throw new Error('ECONNREFUSED');
    });
    let { body } = await metrics.exposition();
    expect(sample(body, 'mailvet_redis_round_trip_seconds_count')).toBe(1);
    expect(sample(body, 'mailvet_redis_errors_total')).toBe(0);
    up = false;
    ({ body } = await metrics.exposition());
    expect(sample(body, 'mailvet_redis_round_trip_seconds_count')).toBe(1);
    expect(sample(body, 'mailvet_redis_errors_total')).toBe(1);
  });

  it('counts webhook attempts by outcome, and keeps them in the inner log', async () => {
    const metrics = createMetrics({ processMetrics: false });
    const log = metrics.webhookLog(memoryWebhookLog());
    const attempt = {
      event_id: 'e',
      event_type: 'bulk.completed' as const,
      attempt: 1,
      attempted_at: new Date(0).toISOString(),
      status_code: 500,
      error: 'status 500',
      next_retry_at: null,
    };
    await log.append('job', { ...attempt, state: 'retrying' });
    await log.append('job', { ...attempt, attempt: 2, status_code: 200, error: null, state: 'delivered' });
    expect(await log.list('job')).toHaveLength(2);
    const { body } = await metrics.exposition();
    expect(sample(body, 'mailvet_webhook_deliveries_total{outcome="retrying"}')).toBe(1);
    expect(sample(body, 'mailvet_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
  });

  it("reads every tenant's jobs at each scrape: jobs by state, addresses queued and done", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const verifier = createVerifierWith(PLATFORM, { dns: false, smtp: false });
    const store = listedMemoryStore();
    const jobs = new BulkJobManager({ verifier, store });
    try {
      watchJobs(metrics, jobs, store);
      const first = await jobs.create({
        emails: ['a@b.test', 'c@d.test'],
        autoStart: false,
        owner: 'tenant-a',
      });
      await jobs.create({ emails: ['e@f.test'], autoStart: false, owner: 'tenant-b' });
      let { body } = await metrics.exposition();
      expect(sample(body, 'mailvet_jobs{state="queued"}')).toBe(2);
      expect(sample(body, 'mailvet_job_addresses{state="queued"}')).toBe(3);
      expect(body).not.toContain('tenant-');
      const completed = new Promise<void>((resolve) => {
        const off = jobs.on('complete', () => {
          off();
          resolve();
        });
      });
      await jobs.start(first.id, { owner: 'tenant-a' });
      await completed;
      ({ body } = await metrics.exposition());
      expect(sample(body, 'mailvet_jobs{state="complete"}')).toBe(1);
      expect(sample(body, 'mailvet_jobs{state="queued"}')).toBe(1);
      expect(sample(body, 'mailvet_job_addresses{state="done"}')).toBe(2);
      expect(sample(body, 'mailvet_job_addresses{state="queued"}')).toBe(1);
      await jobs.delete(first.id, { owner: 'tenant-a' });
      ({ body } = await metrics.exposition());
      expect(sample(body, 'mailvet_jobs{state="complete"}')).toBe(0);
    } finally {
      await jobs.close();
      await verifier.dispose();
    }
  });
});

describe("the verifier's observer option", () => {
  it.each([
    ['a function', () => {}, 'observer'],
    ['null', null, 'observer'],
    ['an unknown member', { onVerify: () => {} }, 'observer.onVerify'],
    ['a member that is not a function', { verified: 'yes' }, 'observer.verified'],
  ])('%s is an OptionsError naming it', (_, observer, option) => {
    expect(() => createVerifierWith(PLATFORM, { observer } as never)).toThrow(OptionsError);
    try {
      createVerifierWith(PLATFORM, { observer } as never);
    } catch (error) {
      expect((error as OptionsError).option).toBe(option);
    }
  });

  it('can only be set on the verifier, not per call', async () => {
    const verifier = createVerifierWith(PLATFORM, { dns: false });
    await expect(verifier.verify('a@b.test', { observer: {} } as never)).rejects.toThrow(/observer/);
    await verifier.dispose();
  });

  it('an observer that throws changes no verification', async () => {
    const verifier = createVerifierWith(PLATFORM, {
      dns: false,
      smtp: false,
      observer: {
        verified: () => {
          throw new Error('broken observer');
        },
      },
    });
    expect((await verifier.verify('jane@shop.test')).status).toBeDefined();
    await verifier.dispose();
  });

  it('is told each verification with its duration; dns and smtp are handed their readers once', async () => {
    const seen: number[] = [];
    let dnsCalls = 0;
    let smtpCalls = 0;
    const verifier = verifierWith({
      verified: (_, ms) => seen.push(ms),
      dns: () => {
        dnsCalls += 1;
      },
      smtp: () => {
        smtpCalls += 1;
      },
    });
    await verifier.verify('jane@shop.test');
    await verifier.verify('bob@shop.test');
    await verifier.dispose();
    expect(seen).toHaveLength(2);
    expect(seen.every((ms) => ms >= 0 && ms < 10_000)).toBe(true);
    expect([dnsCalls, smtpCalls]).toEqual([1, 1]);
  });
});
