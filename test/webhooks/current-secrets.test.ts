/**
 * A webhook whose key's secrets can change while its job runs (a stored key: `WebhookSigning.current`): every
 * attempt is signed with the secrets read just before it; an attempt for which the key has no secret, or whose
 * secrets cannot be read, fails and is retried.
 */
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createWebhookNotifier, type WebhookServerDetail } from '../../src/webhooks/notifier.js';
import type { WebhookRequest, WebhookTransport } from '../../src/webhooks/transport.js';
import { FakeClock, instantVerifier, until } from '../bulk/support.js';
import { SECRET, SECRET2 } from './support.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A transport that answers `statuses` in turn (then 204) and records every request. */
function scriptedTransport(statuses: number[]) {
  const sends: WebhookRequest[] = [];
  const transport: WebhookTransport = {
    async send(request) {
      sends.push(request);
      return { status: statuses.shift() ?? 204, bytesRead: 0, truncated: false };
    },
  };
  return { sends, transport };
}

function verifies(request: WebhookRequest, secret: string): boolean {
  try {
    new Webhook(secret).verify(request.body, { ...request.headers });
    return true;
  } catch {
    return false;
  }
}

function setup(transport: WebhookTransport, details: WebhookServerDetail[] = []) {
  const clock = new FakeClock(Date.now());
  const jobs = new BulkJobManager({ verifier: instantVerifier(), clock });
  const notifier = createWebhookNotifier(jobs, {
    resolver: staticResolver({ 'hooks.test': { a: ['127.0.0.1'] } }),
    allowAddresses: ['127.0.0.1/32'],
    allowHttpWebhooks: true,
    transport,
    clock,
    random: () => 0.5,
    retryDelaysMs: [1000, 1000],
    onDetail: (detail) => details.push(detail),
  });
  closers.push(() => jobs.close());
  closers.push(() => notifier.close());
  return { clock, jobs, notifier };
}

describe('webhook secrets read before each attempt', () => {
  it('signs a retry with the secret the key holds then, not the one it had when the job was made', async () => {
    const { sends, transport } = scriptedTransport([503]);
    const { clock, jobs, notifier } = setup(transport);
    let current: readonly string[] = [SECRET];
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    const prepared = await notifier.prepare(
      { url: 'http://hooks.test/in' },
      { secrets: [SECRET], current: async () => current },
    );
    await notifier.attach(job.id, prepared);
    await jobs.start(job.id);
    await until(() => sends.length === 1);
    await notifier.idle();
    expect(verifies(sends[0]!, SECRET)).toBe(true);
    current = [SECRET2]; // rotated without grace while the delivery waits for its retry
    clock.advance(1000);
    await until(() => sends.length === 2);
    await notifier.idle();
    expect(verifies(sends[1]!, SECRET2)).toBe(true);
    expect(verifies(sends[1]!, SECRET)).toBe(false);
    expect(sends[1]!.headers['webhook-id']).toBe(sends[0]!.headers['webhook-id']);
    const states = (await notifier.deliveries(job.id)).map((attempt) => attempt.state);
    expect(states).toEqual(['retrying', 'delivered']);
  });

  it('fails (and retries) an attempt while the key has no secret or its secrets cannot be read', async () => {
    const { sends, transport } = scriptedTransport([]);
    const details: WebhookServerDetail[] = [];
    const { clock, jobs, notifier } = setup(transport, details);
    const answers: (() => Promise<readonly string[] | undefined>)[] = [
      async () => undefined,
      async () => {
        throw new Error('connection to the key store lost');
      },
      async () => [SECRET2],
    ];
    const job = await jobs.create({ emails: ['a@example.com'], autoStart: false });
    const prepared = await notifier.prepare(
      { url: 'http://hooks.test/in' },
      { secrets: [SECRET], current: () => answers.shift()!() },
    );
    await notifier.attach(job.id, prepared);
    await jobs.start(job.id);
    for (let round = 1; round <= 3; round++) {
      await until(async () => (await notifier.deliveries(job.id)).length === round);
      await notifier.idle();
      clock.advance(1000);
    }
    const attempts = await notifier.deliveries(job.id);
    expect(attempts.map((attempt) => [attempt.state, attempt.error])).toEqual([
      ['retrying', "the job's API key has no webhook secret now (removed, or the key revoked)"],
      ['retrying', "the webhook secret of the job's API key could not be read"],
      ['delivered', null],
    ]);
    expect(sends).toHaveLength(1); // no connection without a secret
    expect(verifies(sends[0]!, SECRET2)).toBe(true);
    expect(details.map((detail) => detail.detail)).toEqual([
      'reading the webhook secret failed: connection to the key store lost',
    ]);
  });
});
