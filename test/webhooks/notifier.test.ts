import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { isMailvetError } from '../../src/errors.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { nodeWebhookTransport } from '../../src/webhooks/node-transport.js';
import {
  createWebhookNotifier,
  WEBHOOK_UNREACHABLE,
  type WebhookNotifierOptions,
  type WebhookServerDetail,
} from '../../src/webhooks/notifier.js';
import { FakeClock, instantVerifier, manualVerifier, resultFor, settle, until } from '../bulk/support.js';
import { waitFor } from '../support/wait-for.js';
import { receiver, recordingTransport, SECRET, SECRET2 } from './support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const zone = {
  'hooks.test': { a: ['127.0.0.1'] },
  'public.test': { a: ['93.184.215.14'] },
  'private.test': { a: ['10.0.0.1'] },
  'mapped.test': { aaaa: ['::ffff:10.0.0.1'] },
  'metadata.test': { a: ['169.254.169.254'] },
  'rebind.test': { a: ['93.184.215.14', '10.0.0.1'] },
};

function setup(options: WebhookNotifierOptions = {}, verifier = instantVerifier()) {
  const clock = new FakeClock(Date.now());
  const jobs = new BulkJobManager({ verifier, clock });
  const notifier = createWebhookNotifier(jobs, {
    secrets: [SECRET],
    resolver: staticResolver(zone),
    allowAddresses: ['127.0.0.1/32'],
    allowHttpWebhooks: true,
    clock,
    random: () => 0.5,
    ...options,
  });
  closers.push(() => jobs.close());
  closers.push(() => notifier.close());
  return { clock, jobs, notifier };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (isMailvetError(error)) return error.code;
    throw error;
  }
  return 'resolved';
}

describe('createWebhookNotifier', () => {
  it('retries a receiver that fails 3 times and delivers exactly once, with a stable webhook-id', async () => {
    const hook = await receiver(SECRET, (_req, res, index) => res.writeHead(index < 3 ? 500 : 200).end());
    closers.push(hook.close);
    // Short delays keep the fake clock within the receiver's 5-minute timestamp tolerance.
    const { clock, jobs, notifier } = setup({
      transport: nodeWebhookTransport(),
      retryDelaysMs: [1000, 2000, 4000, 8000],
    });
    const job = await jobs.create({ emails: ['a@example.com', 'b@example.org'], autoStart: false });
    await notifier.watch(job.id, { url: `http://hooks.test:${hook.port}/in` });
    await jobs.start(job.id);
    for (let round = 1; round <= 4; round++) {
      await until(async () => (await notifier.deliveries(job.id)).length === round);
      await notifier.idle();
      const last = (await notifier.deliveries(job.id))[round - 1]!;
      if (last.next_retry_at !== null) clock.advance(Date.parse(last.next_retry_at) - clock.now());
    }
    await settle();
    expect(hook.received).toHaveLength(4);
    expect(hook.received.every((request) => request.verified)).toBe(true);
    const ids = new Set(hook.received.map((request) => request.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const log = await notifier.deliveries(job.id);
    expect(log.map((attempt) => attempt.state)).toEqual(['retrying', 'retrying', 'retrying', 'delivered']);
    expect(log.map((attempt) => attempt.status_code)).toEqual([500, 500, 500, 200]);
    expect(log[0]?.next_retry_at).toBe(new Date(Date.parse(log[0]!.attempted_at) + 1000).toISOString());
    expect(log[3]?.next_retry_at).toBeNull();
    const payload = new Webhook(SECRET).verify(hook.received[3]!.body, hook.received[3]!.headers) as {
      type: string;
      data: { id: string; status: string; completed: number };
    };
    expect(payload.type).toBe('bulk.completed');
    expect(payload.data).toMatchObject({ id: job.id, status: 'complete', completed: 2 });
  });

  it('delivers bulk.completed for a job finished now while it waited for a greylisting retry', async () => {
    const { transport, sends } = recordingTransport();
    const clock = new FakeClock(Date.now());
    const greylisting = {
      verify: async (email: string) => resultFor(email), // grey* addresses are greylisted
    };
    const jobs = new BulkJobManager({
      verifier: greylisting,
      clock,
      greylistRetry: { delaysMs: [3_600_000] },
    });
    const notifier = createWebhookNotifier(jobs, {
      secrets: [SECRET],
      resolver: staticResolver(zone),
      allowAddresses: ['127.0.0.1/32'],
      clock,
      transport,
    });
    closers.push(() => jobs.close());
    closers.push(() => notifier.close());
    const job = await jobs.create({ emails: ['grey@x.example', 'ok@y.example'], autoStart: false });
    await notifier.watch(job.id, { url: 'https://hooks.test/in' });
    await jobs.start(job.id);
    await until(async () => (await jobs.get(job.id))?.retries.waiting === 1);
    expect(sends).toHaveLength(0);
    await jobs.finish(job.id);
    await until(() => sends.length === 1);
    const payload = new Webhook(SECRET).verify(sends[0]!.body, sends[0]!.headers) as {
      type: string;
      data: {
        id: string;
        status: string;
        completed: number;
        retries: { waiting: number; delays_ms: number[] };
      };
    };
    expect(payload.type).toBe('bulk.completed');
    expect(payload.data).toMatchObject({ id: job.id, status: 'complete', completed: 2 });
    expect(payload.data.retries).toMatchObject({ waiting: 0, delays_ms: [] });
  });

  it('ends in failed after the schedule is exhausted', async () => {
    const { transport, sends } = recordingTransport({
      send: async () => ({ status: 503, bytesRead: 0, truncated: false }),
    });
    const { clock, jobs, notifier } = setup({ transport, retryDelaysMs: [1000, 2000] });
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    await notifier.watch(job.id, { url: 'https://hooks.test/in' });
    await jobs.start(job.id);
    await until(async () => (await notifier.deliveries(job.id)).length === 1);
    for (let i = 0; i < 3; i++) {
      await notifier.idle();
      clock.advance(10_000);
      await settle();
    }
    const log = await notifier.deliveries(job.id);
    expect(log.map((attempt) => attempt.state)).toEqual(['retrying', 'retrying', 'failed']);
    expect(log[2]?.error).toBe('the receiver answered 503');
    expect(sends).toHaveLength(3);
    expect(sends[0]?.address).toBe('127.0.0.1');
  });

  it('signs with both secrets during a rotation', async () => {
    const { transport, sends } = recordingTransport();
    const { jobs, notifier } = setup({ transport, secrets: [SECRET, SECRET2] });
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    await notifier.watch(job.id, { url: 'https://hooks.test/in' });
    await jobs.start(job.id);
    await until(() => sends.length === 1);
    const { body, headers } = sends[0]!;
    expect(headers['webhook-signature']?.split(' ')).toHaveLength(2);
    expect(() => new Webhook(SECRET).verify(body, headers)).not.toThrow();
    expect(() => new Webhook(SECRET2).verify(body, headers)).not.toThrow();
  });

  it('throttles bulk.progress to one per interval plus one at completion', async () => {
    const verifier = manualVerifier();
    const { transport, sends } = recordingTransport();
    const { clock, jobs, notifier } = setup({ transport, progressIntervalMs: 10_000 }, verifier);
    const job = await jobs.create({ emails: ['a@x.com', 'b@y.com', 'c@z.com', 'd@w.com'], autoStart: false });
    await notifier.watch(job.id, {
      url: 'https://hooks.test/in',
      events: ['bulk.progress', 'bulk.completed'],
    });
    await jobs.start(job.id);
    await until(() => verifier.held.length === 4);
    const answer = async () => {
      verifier.held.shift()!.resolve();
      await settle();
      await jobs.get(job.id); // flushes the result, which emits progress
    };
    await answer();
    await until(() => sends.length === 1);
    await answer();
    await settle();
    expect(sends).toHaveLength(1); // within the interval
    clock.advance(10_000);
    await answer();
    await until(() => sends.length === 2);
    await verifier.releaseAll();
    await until(() => sends.length === 4);
    const types = sends.map((send) => JSON.parse(send.body) as { type: string; data: { completed: number } });
    expect(types.map((event) => event.type)).toEqual([
      'bulk.progress',
      'bulk.progress',
      'bulk.progress',
      'bulk.completed',
    ]);
    expect(types[2]?.data.completed).toBe(4);
  });

  it('delivers bulk.failed when the job fails, and to a job that finished before it was watched', async () => {
    const { transport, sends } = recordingTransport();
    const { jobs, notifier } = setup({ transport });
    const done = await jobs.create({ emails: ['a@example.com'] });
    await until(async () => (await jobs.get(done.id))?.status === 'complete');
    await notifier.watch(done.id, { url: 'https://hooks.test/in' });
    await until(() => sends.length === 1);
    expect((JSON.parse(sends[0]!.body) as { type: string }).type).toBe('bulk.completed');

    const pending = await jobs.create({ emails: ['b@example.com'], autoStart: false });
    await notifier.watch(pending.id, { url: 'https://hooks.test/in' });
    await jobs.close();
    await until(() => sends.length === 2);
    expect(JSON.parse(sends[1]!.body)).toMatchObject({
      type: 'bulk.failed',
      data: { status: 'failed', error: { code: 'disposed' } },
    });
  });

  it('sends nothing for a job detached before it ends', async () => {
    const { transport, sends } = recordingTransport();
    const { jobs, notifier } = setup({ transport });
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    await notifier.watch(job.id, { url: 'https://hooks.test/in' });
    notifier.detach(job.id);
    await jobs.start(job.id);
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    await settle();
    expect(sends).toHaveLength(0);
  });

  it.each([
    ['a name resolving to 127.0.0.1 without an allow entry', 'https://hooks.test/in', []],
    ['a name resolving to 10.0.0.1', 'https://private.test/in', undefined],
    ['a name resolving to ::ffff:10.0.0.1', 'https://mapped.test/in', undefined],
    ['a name resolving to 169.254.169.254', 'https://metadata.test/in', undefined],
    ['169.254.169.254 itself', 'https://169.254.169.254/latest/meta-data', undefined],
    ['http://[::1]', 'http://[::1]/in', undefined],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/in', []],
    ['NAT64 of 10.0.0.1', 'https://[64:ff9b::a00:1]/in', undefined],
    ['decimal 127.0.0.1', 'http://2130706433/in', []],
    ['hex 127.0.0.1', 'http://0x7f000001/in', []],
    ['dotted hex 10.0.0.1', 'http://0xa.0.0.1/in', undefined],
    ['octal 10.0.0.1', 'http://012.0.0.1/in', undefined],
    ['a name resolving to a public then a private address', 'https://rebind.test/in', undefined],
    ['a name that does not resolve', 'https://nowhere.test/in', undefined],
  ])('refuses %s at creation with no connection', async (_name, url, allow) => {
    const { transport, sends } = recordingTransport();
    const { notifier } = setup({ transport, ...(allow === undefined ? {} : { allowAddresses: allow }) });
    expect(await codeOf(notifier.prepare({ url }))).toBe('webhook_refused');
    expect(sends).toHaveLength(0);
  });

  it('fails an attempt, without connecting, when the host starts resolving to a private address', async () => {
    const records: Record<string, { a: string[] }> = { 'flip.test': { a: ['127.0.0.1'] } };
    const resolver = {
      mx: async () => ({ kind: 'nodata' as const }),
      addresses: async (host: string) => ({ kind: 'records' as const, records: records[host]?.a ?? [] }),
    };
    const { transport, sends } = recordingTransport();
    const details: WebhookServerDetail[] = [];
    const { jobs, notifier } = setup({ transport, resolver, onDetail: (detail) => details.push(detail) });
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    await notifier.watch(job.id, { url: 'https://flip.test/in' });
    records['flip.test'] = { a: ['10.0.0.1'] };
    await jobs.start(job.id);
    await until(async () => (await notifier.deliveries(job.id)).length === 1);
    const [attempt] = await notifier.deliveries(job.id);
    // The tenant's log names the class, never the address; the server's log gets the address.
    expect(attempt?.error).toBe(
      "the webhook host flip.test is not publicly routable; the server's operator can open its range with allowAddresses",
    );
    expect(details).toEqual([
      {
        jobId: job.id,
        host: 'flip.test',
        detail: 'the webhook host flip.test resolves to 10.0.0.1 (10.0.0.0/8 private use)',
      },
    ]);
    expect(attempt?.state).toBe('retrying');
    expect(sends).toHaveLength(0);
  });

  it('refuses a name that resolves to a private address without saying the address, naming the setting', async () => {
    const details: WebhookServerDetail[] = [];
    const { notifier } = setup({
      transport: recordingTransport().transport,
      settingNames: { allowAddresses: '--webhook-allow-address', allowHttpWebhooks: '--allow-http-webhooks' },
      allowHttpWebhooks: false,
      onDetail: (detail) => details.push(detail),
    });
    const refused = await notifier.prepare({ url: 'https://private.test/in' }).catch((error) => error);
    expect(refused).toMatchObject({ code: 'webhook_refused' });
    expect(refused.message).toBe(
      "the webhook host private.test is not publicly routable; the server's operator can open its range with --webhook-allow-address",
    );
    expect(refused.message).not.toContain('10.0.0.1');
    expect(details).toEqual([
      { jobId: null, host: 'private.test', detail: expect.stringContaining('resolves to 10.0.0.1') },
    ]);
    const http = await notifier.prepare({ url: 'http://hooks.test/in' }).catch((error) => error);
    expect(http.message).toBe(
      `webhook.url must use https: (got "http:"); the server's operator can accept http: with --allow-http-webhooks`,
    );
  });

  it('logs one coarse error for every transport failure (refused, reset, timeout), the raw one to onDetail', async () => {
    const failures = [
      'connect ECONNREFUSED 93.184.215.14:8443',
      'read ECONNRESET',
      'no response within 15000 ms',
    ];
    const details: WebhookServerDetail[] = [];
    const { jobs, notifier } = setup({
      transport: {
        send: async () => {
          throw new Error(failures[details.length] ?? 'unexpected');
        },
      },
      retryDelaysMs: [],
      onDetail: (detail) => details.push(detail),
    });
    const errors: (string | null)[] = [];
    for (const port of [8443, 8444, 8445]) {
      const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
      await notifier.watch(job.id, { url: `https://public.test:${port}/in` });
      await jobs.start(job.id);
      await until(async () => (await notifier.deliveries(job.id)).length === 1);
      errors.push((await notifier.deliveries(job.id))[0]?.error ?? null);
    }
    expect(errors).toEqual([WEBHOOK_UNREACHABLE, WEBHOOK_UNREACHABLE, WEBHOOK_UNREACHABLE]);
    expect(details.map((detail) => detail.detail)).toEqual(failures);
  });

  it.each([
    ['a URL that is not a string', { url: 42 }, 'invalid_request'],
    ['a URL that is too long', { url: `https://hooks.test/${'a'.repeat(2100)}` }, 'invalid_request'],
    ['a URL that does not parse', { url: 'not a url' }, 'invalid_request'],
    ['a ftp: URL', { url: 'ftp://hooks.test/in' }, 'webhook_refused'],
    ['a javascript: URL', { url: 'javascript:alert(1)' }, 'webhook_refused'],
    ['credentials in the URL', { url: 'https://user:pw@hooks.test/in' }, 'webhook_refused'],
    ['an unknown event', { url: 'https://hooks.test/in', events: ['bulk.done'] }, 'invalid_request'],
    ['events not a list', { url: 'https://hooks.test/in', events: 'bulk.completed' }, 'invalid_request'],
    ['an empty event list', { url: 'https://hooks.test/in', events: [] }, 'invalid_request'],
    ['an unknown field', { url: 'https://hooks.test/in', secret: 'x' }, 'invalid_request'],
    ['no object', 'https://hooks.test/in', 'invalid_request'],
  ])('rejects %s', async (_name, spec, code) => {
    const { notifier } = setup({ transport: recordingTransport().transport });
    expect(await codeOf(notifier.prepare(spec))).toBe(code);
  });

  it('refuses http: unless allowHttpWebhooks', async () => {
    const { notifier } = setup({ allowHttpWebhooks: false, transport: recordingTransport().transport });
    expect(await codeOf(notifier.prepare({ url: 'http://hooks.test/in' }))).toBe('webhook_refused');
    await expect(notifier.prepare({ url: 'https://hooks.test/in' })).resolves.toMatchObject({
      events: ['bulk.completed', 'bulk.failed'],
    });
  });

  it('validates options and secrets', () => {
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    closers.push(() => jobs.close());
    expect(() => createWebhookNotifier(jobs, { secrets: ['nope'] })).toThrow(/secrets/);
    expect(() => createWebhookNotifier(jobs, { secrets: ['whsec_AAAA'] })).toThrow(/24-64 bytes/);
    expect(() => createWebhookNotifier(jobs, { progressIntervalMs: -1 })).toThrow(/progressIntervalMs/);
    expect(() => createWebhookNotifier(jobs, { allowAddresses: ['10.0.0.0/33'] })).toThrow(/allowAddresses/);
  });
});

describe('BulkJobManager.create({ webhook }) with the manager webhooks option', () => {
  it('delivers the job events to the webhook given at creation, signed, without the HTTP adapter', async () => {
    const hook = await receiver(SECRET, (_req, res) => res.writeHead(204).end());
    const jobs = new BulkJobManager({
      verifier: instantVerifier(),
      webhooks: {
        secrets: [SECRET],
        resolver: staticResolver(zone),
        allowAddresses: ['127.0.0.1/32'],
        allowHttpWebhooks: true,
      },
    });
    try {
      const job = await jobs.create({
        emails: ['a@x.example', 'b@y.example'],
        webhook: { url: `http://127.0.0.1:${hook.port}/hook`, events: ['bulk.completed'] },
      });
      await waitFor(() => hook.received.length > 0, { what: 'the webhook' });
      expect(hook.received).toHaveLength(1);
      expect(hook.received[0]?.verified).toBe(true);
      expect(JSON.parse(hook.received[0]!.body)).toMatchObject({
        type: 'bulk.completed',
        data: { id: job.id },
      });
    } finally {
      await jobs.close();
      await hook.close();
    }
  });

  it('refuses a webhook without the option, and one the SSRF guard refuses, before any job exists', async () => {
    const plain = new BulkJobManager({ verifier: instantVerifier() });
    await expect(
      plain.create({ emails: ['a@x.example'], webhook: { url: 'https://hooks.example.com' } }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
    });
    expect((await plain.list()).total).toBe(0);
    await plain.close();
    const guarded = new BulkJobManager({
      verifier: instantVerifier(),
      webhooks: { secrets: [SECRET], resolver: staticResolver(zone) },
    });
    await expect(
      guarded.create({ emails: ['a@x.example'], webhook: { url: 'https://metadata.test/hook' } }),
    ).rejects.toMatchObject({ code: 'webhook_refused' });
    expect((await guarded.list()).total).toBe(0);
    await guarded.close();
  });
});
