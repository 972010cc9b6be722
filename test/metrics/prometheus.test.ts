/**
 * A real Prometheus (Debian's `prometheus`) scrapes a running `mailvet serve` API node and a `mailvet worker` of
 * its fleet (the built bin) on loopback every 200 ms; a bulk job runs against loopback DNS and SMTP servers, and
 * Prometheus's HTTP API sees the series move: jobs, verifications, SMTP sessions, DNS queries, HTTP requests, the
 * store's and Redis's round trips. Needs PostgreSQL and Redis (skipped with a notice without them).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../cli/support.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { freePort } from '../support/free-port.js';
import { serverCaller } from '../support/http-call.js';
import { type MailDomains, startMailDomains } from '../support/mail-domains.js';
import { BIN } from '../support/mailvet-bin.js';
import { deletePrefix, REDIS_URL, testPrefix } from '../support/redis.js';
import { outputMatch, waitFor } from '../support/wait-for.js';

const PROMETHEUS = '/usr/bin/prometheus';
const hasPrometheus = existsSync(PROMETHEUS);
if (!hasPrometheus)
  console.warn(`${PROMETHEUS} is missing (apt install prometheus): the Prometheus test is skipped`);
const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined && hasPrometheus;
const KEY = 'prometheus-test-key';
const call = serverCaller(KEY);

const children = new Set<ChildProcess>();
afterEach(() => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  children.clear();
});

/** Spawns `command args`; resolves once its output matches `ready`. */
async function started(command: string, args: string[], ready: RegExp, env: Record<string, string> = {}) {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const { match, output } = await outputMatch(child, ready, {
    what: `${args[0]} to start`,
    timeoutMs: 60_000,
  });
  return { child, match, output };
}

/** One sample of an instant vector, as `/api/v1/query` answers it. */
interface Sample {
  readonly metric: Record<string, string>;
  readonly value: [number, string];
}

/** Asks Prometheus `query`; resolves with the samples. */
async function query(prometheus: string, promql: string): Promise<Sample[]> {
  const response = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await response.json()) as { status: string; data: { result: Sample[] }; error?: string };
  if (body.status !== 'success') throw new Error(`${promql}: ${body.error}`);
  return body.data.result;
}

/** The single value of `promql`, or undefined while Prometheus has none. */
async function value(prometheus: string, promql: string): Promise<number | undefined> {
  const result = await query(prometheus, promql);
  return result.length === 0 ? undefined : Number(result[0]!.value[1]);
}

/** Waits until Prometheus answers `promql` with a value for which `holds` is true; resolves with it. */
async function seen(prometheus: string, promql: string, holds: (value: number) => boolean): Promise<number> {
  let last: number | undefined;
  try {
    return await waitFor(
      async () => {
        last = await value(prometheus, promql);
        return last !== undefined && holds(last) ? last : undefined;
      },
      { what: `Prometheus to see ${promql}`, timeoutMs: 60_000, intervalMs: 100 },
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; its last value: ${last}`);
  }
}

let mail: MailDomains;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);
beforeAll(async () => {
  if (enabled) mail = await startMailDomains('metrics.test', 2);
});
afterAll(async () => {
  await mail?.close();
});

describe.skipIf(!enabled)('Prometheus scrapes serve and a worker', () => {
  it('sees the series move during a bulk job', async () => {
    const schema = testSchema();
    const prefix = testPrefix();
    const dir = await tempDir('mailvet-prometheus-');
    const store = new URL(POSTGRES_URL!);
    store.searchParams.set('schema', schema);
    const fleet = [
      '--store',
      store.toString(),
      '--redis',
      REDIS_URL!,
      '--prefix',
      prefix,
      ...mail.cliFlags(),
    ];
    try {
      const api = await started(
        process.execPath,
        [BIN, 'serve', '--port', '0', '--no-console', '--metrics-port', '0', ...fleet],
        /listening on (http:[^\s"]+)[^\n]*\n[^\n]*mailvet metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/,
        { MAILVET_API_KEYS: KEY },
      );
      const worker = await started(
        process.execPath,
        [BIN, 'worker', '--id', 'scraped', '--metrics-port', '0', ...fleet, '--helo', 'metrics.test'],
        /mailvet metrics on http:\/\/127\.0\.0\.1:(\d+)\/metrics/,
      );
      const apiUrl = api.match[1]!;
      const [apiPort, workerPort] = [api.match[2]!, worker.match[1]!];

      const port = await freePort();
      const config = dir.file('prometheus.yml');
      await writeFile(
        config,
        [
          'global:',
          '  scrape_interval: 200ms',
          '  scrape_timeout: 200ms',
          '  evaluation_interval: 1s',
          'scrape_configs:',
          '  - job_name: serve',
          `    static_configs: [{ targets: ['127.0.0.1:${apiPort}'] }]`,
          '  - job_name: worker',
          `    static_configs: [{ targets: ['127.0.0.1:${workerPort}'] }]`,
          '',
        ].join('\n'),
      );
      await started(
        PROMETHEUS,
        [
          `--config.file=${config}`,
          `--storage.tsdb.path=${dir.file('tsdb')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--storage.tsdb.retention.time=1h',
        ],
        /Server is ready to receive web requests/,
      );
      const prometheus = `http://127.0.0.1:${port}`;

      // Both targets are up, and before the job nothing was verified.
      await seen(prometheus, 'up{job="serve"}', (up) => up === 1);
      await seen(prometheus, 'up{job="worker"}', (up) => up === 1);
      await seen(prometheus, 'mailvet_jobs{job="serve",state="complete"}', (jobs) => jobs === 0);
      expect(await value(prometheus, 'sum(mailvet_verifications_total{job="worker"})')).toBeUndefined();

      const emails = mail.addresses(40, 30);
      const job = (await call(apiUrl, '/v1/bulk', {
        method: 'POST',
        body: JSON.stringify({ emails }),
      })) as { id: string };
      await waitFor(
        async () => ((await call(apiUrl, `/v1/bulk/${job.id}`)) as { status: string }).status === 'complete',
        { what: 'the job to complete', timeoutMs: 60_000, intervalMs: 100 },
      );

      // The worker verified each distinct address once (a job verifies a repeated address once), over SMTP
      // sessions it opened and reused, after DNS queries.
      const distinct = new Set(emails).size;
      await seen(prometheus, 'sum(mailvet_verifications_total{job="worker"})', (n) => n === distinct);
      await seen(
        prometheus,
        'mailvet_verifications_total{job="worker",status="invalid",sub_status="mailbox_not_found",provider="other"}',
        (n) => n >= 1,
      );
      await seen(
        prometheus,
        'mailvet_verification_duration_seconds_count{job="worker"}',
        (n) => n === distinct,
      );
      await seen(prometheus, 'mailvet_smtp_sessions_opened_total{job="worker"}', (n) => n >= 2);
      await seen(prometheus, 'mailvet_smtp_sessions_reused_total{job="worker"}', (n) => n >= 1);
      await seen(prometheus, 'sum(mailvet_smtp_replies_total{job="worker"})', (n) => n >= distinct);
      await seen(prometheus, 'mailvet_dns_queries_total{job="worker"}', (n) => n >= 2);
      await seen(prometheus, 'mailvet_smtp_pool_waiters{job="worker"}', (n) => n === 0);
      // The API node saw the job complete and its requests; both talked to the store and to Redis.
      await seen(prometheus, 'mailvet_jobs{job="serve",state="complete"}', (n) => n === 1);
      await seen(prometheus, 'mailvet_job_addresses{job="serve",state="done"}', (n) => n === 40);
      await seen(
        prometheus,
        'mailvet_http_requests_total{job="serve",method="POST",route="/v1/bulk",status="201"}',
        (n) => n === 1,
      );
      await seen(
        prometheus,
        'sum(mailvet_http_request_duration_seconds_count{job="serve",route="/v1/bulk/{id}"})',
        (n) => n >= 1,
      );
      for (const target of ['serve', 'worker']) {
        await seen(prometheus, `mailvet_store_query_duration_seconds_count{job="${target}"}`, (n) => n > 0);
        await seen(prometheus, `mailvet_redis_round_trip_seconds_count{job="${target}"}`, (n) => n > 0);
        await seen(prometheus, `process_resident_memory_bytes{job="${target}"}`, (n) => n > 0);
      }
      expect(await value(prometheus, 'sum(mailvet_store_errors_total)')).toBe(0);
      expect(await value(prometheus, 'sum(mailvet_redis_errors_total)')).toBe(0);
      // No address, domain or key in any label Prometheus stored.
      const labels = await fetch(`${prometheus}/api/v1/labels`).then((r) => r.json());
      const values: string[] = [];
      for (const name of (labels as { data: string[] }).data) {
        const answer = await fetch(`${prometheus}/api/v1/label/${name}/values`).then((r) => r.json());
        values.push(...(answer as { data: string[] }).data);
      }
      expect(values.filter((v) => /@|metrics\.test|prometheus-test-key/.test(v))).toEqual([]);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await deletePrefix(prefix);
      await dropPostgresSchema(schema);
      await dir.remove();
    }
  }, 240_000);
});
