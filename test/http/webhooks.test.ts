import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { until } from '../bulk/support.js';
import { recordingTransport, SECRET, SECRET2 } from '../webhooks/support.js';
import { auth, fakeVerifier, jsonAuth, KEY_A, KEY_B } from './support.js';

const KEY_C = 'test-key-c';
let handler: Handler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
});

function setup(defaults: { url?: string } = {}) {
  const { transport, sends } = recordingTransport();
  const verifier = fakeVerifier();
  handler = createHandler({
    apiKeys: [KEY_A, KEY_B, KEY_C],
    verifier,
    jobs: new BulkJobManager({ verifier }),
    webhooks: {
      resolver: staticResolver({
        'hooks.test': { a: ['93.184.215.14'] },
        'private.test': { a: ['10.0.0.1'] },
      }),
      transport,
      keys: { [KEY_A]: { secrets: [SECRET, SECRET2] }, [KEY_B]: { secrets: [SECRET2], ...defaults } },
    },
  });
  return { handler, sends };
}

function post(h: Handler, body: unknown, key = KEY_A): Promise<Response> {
  return h(
    new Request('http://localhost/v1/bulk', {
      method: 'POST',
      headers: jsonAuth(key),
      body: JSON.stringify(body),
    }),
  );
}

describe('webhooks over HTTP', () => {
  it('delivers bulk.completed with the wire job, signed with the key secrets; lists the attempt', async () => {
    const { handler: h, sends } = setup();
    const response = await post(h, { emails: ['a@example.com'], webhook: { url: 'https://hooks.test/in' } });
    expect(response.status).toBe(201);
    const job = (await response.json()) as { id: string };
    await until(() => sends.length === 1);
    const { body, headers, address, url } = sends[0]!;
    expect(address).toBe('93.184.215.14'); // recorded by the seam, never dialed
    expect(url.href).toBe('https://hooks.test/in');
    const event = new Webhook(SECRET2).verify(body, headers) as {
      type: string;
      data: { id: string; name: string };
    };
    expect(event.type).toBe('bulk.completed');
    expect(event.data).toMatchObject({ id: job.id, name: '' });

    await until(async () => {
      const listed = await h(new Request(`http://localhost/v1/bulk/${job.id}/webhooks`, { headers: auth() }));
      return ((await listed.json()) as { deliveries: unknown[] }).deliveries.length === 1;
    });
    const listed = await h(new Request(`http://localhost/v1/bulk/${job.id}/webhooks`, { headers: auth() }));
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({
      deliveries: [
        { event_type: 'bulk.completed', attempt: 1, status_code: 204, state: 'delivered', error: null },
      ],
    });
    const other = await h(
      new Request(`http://localhost/v1/bulk/${job.id}/webhooks`, { headers: auth(KEY_B) }),
    );
    expect(other.status).toBe(404);
  });

  it("uses the key's default webhook URL", async () => {
    const { handler: h, sends } = setup({ url: 'https://hooks.test/default' });
    expect((await post(h, { emails: ['a@example.com'] }, KEY_B)).status).toBe(201);
    await until(() => sends.length === 1);
    expect(sends[0]?.url.pathname).toBe('/default');
    expect(() => new Webhook(SECRET2).verify(sends[0]!.body, sends[0]!.headers)).not.toThrow();
  });

  it.each([
    ['a URL that is not a string', { url: 7 }, 400, 'invalid_request'],
    ['a URL that is too long', { url: `https://hooks.test/${'x'.repeat(2048)}` }, 400, 'invalid_request'],
    ['a wrong scheme', { url: 'ftp://hooks.test/in' }, 422, 'webhook_refused'],
    ['http without allowHttpWebhooks', { url: 'http://hooks.test/in' }, 422, 'webhook_refused'],
    ['credentials in the URL', { url: 'https://u:p@hooks.test/in' }, 422, 'webhook_refused'],
    ['an unknown event name', { url: 'https://hooks.test/in', events: ['job.done'] }, 400, 'invalid_request'],
    ['a private address', { url: 'https://private.test/in' }, 422, 'webhook_refused'],
    ['a decimal loopback spelling', { url: 'https://2130706433/in' }, 422, 'webhook_refused'],
    ['not an object', 'https://hooks.test/in', 400, 'invalid_request'],
  ])('refuses %s and creates no job', async (_name, webhook, status, code) => {
    const { handler: h, sends } = setup();
    const response = await post(h, { emails: ['a@example.com'], webhook });
    expect(response.status).toBe(status);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
    const list = await h(new Request('http://localhost/v1/bulk', { headers: auth() }));
    expect(((await list.json()) as { total: number }).total).toBe(0);
    expect(sends).toHaveLength(0);
  });

  it('refuses a webhook for a key without webhook settings, and on a server without webhooks', async () => {
    const { handler: h } = setup();
    const response = await post(h, { webhook: { url: 'https://hooks.test/in' } }, KEY_C);
    expect(response.status).toBe(400);
    const plain = createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier() });
    const refused = await post(plain, { webhook: { url: 'https://hooks.test/in' } });
    expect(refused.status).toBe(400);
    await plain.close();
  });

  it('validates the webhooks option', () => {
    expect(() =>
      createHandler({
        apiKeys: [KEY_A],
        verifier: fakeVerifier(),
        webhooks: { keys: { [KEY_A]: { secrets: ['x'] } } },
      }),
    ).toThrow(/secrets/);
  });
});
