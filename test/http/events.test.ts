import { request as httpRequest, type IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { BulkJobManagerApi } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import { createServer, type RunningServer } from '../../src/http/node.js';
import { manualVerifier } from '../bulk/support.js';
import { waitFor } from '../support/wait-for.js';
import { auth, KEY_A, KEY_B } from './support.js';

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** An SSE client over a real socket: collects events and comments as they arrive. */
function connect(url: string, headers: Record<string, string>) {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let buffer = '';
  let ended = false;
  let status = 0;
  let contentType = '';
  const req = httpRequest(url, { headers });
  const opened = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  req.end();
  void opened.then(
    (res) => {
      status = res.statusCode ?? 0;
      contentType = String(res.headers['content-type']);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event: SseEvent = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line);
            else {
              const colon = line.indexOf(': ');
              const field = line.slice(0, colon) as keyof SseEvent;
              event[field] = line.slice(colon + 2);
            }
          }
          if (event.event !== undefined) events.push(event);
        }
      });
      res.on('end', () => {
        ended = true;
      });
      res.on('error', () => undefined);
    },
    () => undefined,
  );
  return {
    events,
    comments,
    opened,
    get status() {
      return status;
    },
    get contentType() {
      return contentType;
    },
    get ended() {
      return ended;
    },
    close: () => req.destroy(),
  };
}

/** Wraps a manager to count the listeners subscribed through `on` and not yet released. */
function counting(manager: BulkJobManager) {
  const state = { active: 0 };
  const jobs = new Proxy(manager, {
    get(target, property) {
      if (property === 'on') {
        return (
          event: Parameters<BulkJobManager['on']>[0],
          listener: Parameters<BulkJobManager['on']>[1],
        ) => {
          state.active++;
          const off = target.on(event, listener);
          return () => {
            state.active--;
            off();
          };
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as BulkJobManagerApi;
  return { jobs, state };
}

let server: RunningServer | undefined;
let manager: BulkJobManager | undefined;
let held: ReturnType<typeof manualVerifier> | undefined;
afterEach(async () => {
  await server?.close();
  await held?.releaseAll();
  await manager?.close();
  server = undefined;
  manager = undefined;
});

async function start(heartbeatMs?: number) {
  const verifier = manualVerifier();
  held = verifier;
  manager = new BulkJobManager({ verifier });
  const { jobs, state } = counting(manager);
  server = await createServer({
    port: 0,
    host: '127.0.0.1',
    apiKeys: [KEY_A, KEY_B],
    jobs,
    verifier,
    limits: { requestsPerSecond: Number.POSITIVE_INFINITY },
    ...(heartbeatMs === undefined ? {} : { heartbeatMs }),
  });
  const base = server.url.replace(/\/$/, '');
  const owner = await tenantOf();
  const job = await jobs.create({ owner, emails: ['a@x.example', 'b@y.example', 'c@z.example'] });
  const completed = async () => (await jobs.get(job.id, { owner }))?.completed;
  return { verifier, jobs, state, base, job, completed };
}

/** The tenant of KEY_A, as the server sees it: the hex SHA-256 of the key. */
async function tenantOf(): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(KEY_A));
  return Buffer.from(digest).toString('hex');
}

describe('GET /v1/bulk/{id}/events over a real socket', () => {
  it('streams progress while the job runs, then complete, and ends', async () => {
    const { verifier, base, job, completed } = await start();
    const client = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A));
    await client.opened;
    await waitFor(() => client.events.length === 1);
    expect(client.status).toBe(200);
    expect(client.contentType).toBe('text/event-stream; charset=utf-8');
    expect(client.events[0]).toMatchObject({ id: '0', event: 'progress' });
    await waitFor(() => verifier.held.length === 3);
    verifier.held.shift()!.resolve();
    await waitFor(async () => (await completed()) === 1);
    await waitFor(() => client.events.length === 2);
    expect(client.events[1]?.id).toBe('1');
    expect(JSON.parse(client.events[1]!.data!)).toMatchObject({ id: job.id, completed: 1, total: 3 });
    await verifier.releaseAll();
    await waitFor(() => client.ended);
    const last = client.events.at(-1)!;
    expect(last.event).toBe('complete');
    expect(last.id).toBe('3-end');
    expect(JSON.parse(last.data!)).toMatchObject({ status: 'complete', completed: 3 });
  });

  it('resumes with Last-Event-ID without missing the changes made while away, and 204 after the end', async () => {
    const { verifier, base, job, completed } = await start();
    const first = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A));
    await waitFor(() => first.events.length === 1);
    first.close();
    await waitFor(() => verifier.held.length === 3);
    verifier.held.shift()!.resolve();
    verifier.held.shift()!.resolve();
    await waitFor(async () => (await completed()) === 2);

    const again = connect(
      `${base}/v1/bulk/${job.id}/events`,
      auth(KEY_A, { 'last-event-id': first.events[0]!.id! }),
    );
    await waitFor(() => again.events.length === 1);
    expect(again.events[0]).toMatchObject({ id: '2', event: 'progress' });
    await verifier.releaseAll();
    await waitFor(() => again.ended);
    expect(again.events.map((event) => event.id)).toEqual(['2', '3-end']);

    // Up to date already: nothing is repeated, only what comes next.
    const done = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A, { 'last-event-id': '3-end' }));
    await done.opened;
    await waitFor(() => done.ended);
    expect(done.status).toBe(204);
    expect(done.events).toEqual([]);
  });

  it("answers 404 for another tenant's job and 401 without a key", async () => {
    const { base, job, state } = await start();
    const other = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_B));
    await other.opened;
    await waitFor(() => other.ended);
    expect(other.status).toBe(404);
    const anonymous = connect(`${base}/v1/bulk/${job.id}/events`, {});
    await anonymous.opened;
    expect(anonymous.status).toBe(401);
    expect(state.active).toBe(0);
  });

  it('sends heartbeat comments', async () => {
    const { base, job } = await start(20);
    const client = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A));
    await waitFor(() => client.comments.length >= 2);
    expect(client.comments[0]).toBe(': heartbeat');
    client.close();
  });

  it('ends the stream of a job deleted while it runs with a final deleted event, and releases the listeners', async () => {
    const { jobs, base, job, state } = await start(20);
    const client = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A));
    await waitFor(() => client.events.length === 1);
    await jobs.delete(job.id, { owner: await tenantOf() });
    await waitFor(() => client.ended);
    const last = client.events.at(-1)!;
    expect(last).toMatchObject({ event: 'deleted', id: '0-end' });
    expect(JSON.parse(last.data!)).toEqual({ id: job.id, deleted: true });
    await waitFor(() => state.active === 0);
    // A reconnect after the end finds no job.
    const again = connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A, { 'last-event-id': last.id! }));
    await again.opened;
    expect(again.status).toBe(404);
  });

  it('releases the listeners of 1,000 clients that connect and go away', async () => {
    const { base, job, state } = await start();
    for (let round = 0; round < 20; round++) {
      const clients = Array.from({ length: 50 }, () =>
        connect(`${base}/v1/bulk/${job.id}/events`, auth(KEY_A)),
      );
      await waitFor(() => clients.every((client) => client.events.length === 1));
      for (const client of clients) client.close();
    }
    await waitFor(() => state.active === 0);
    expect(state.active).toBe(0);
  });
});

describe('GET /v1/bulk/{id}/events through the fetch-style handler', () => {
  it('streams a Response body and releases its listener when cancelled', async () => {
    const verifier = manualVerifier();
    held = verifier;
    manager = new BulkJobManager({ verifier });
    const { jobs, state } = counting(manager);
    const handler = createHandler({ apiKeys: [KEY_A], jobs, verifier });
    const job = await jobs.create({ owner: await tenantOf(), emails: ['a@x.example'] });
    const response = await handler(
      new Request(`http://localhost/v1/bulk/${job.id}/events`, { headers: auth(KEY_A) }),
    );
    expect(response.status).toBe(200);
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    expect(first.value).toMatch(/^id: 0\nevent: progress\ndata: \{/);
    expect(state.active).toBe(3);
    await reader.cancel();
    await waitFor(() => state.active === 0);

    const finishing = await handler(
      new Request(`http://localhost/v1/bulk/${job.id}/events`, { headers: auth(KEY_A) }),
    );
    await waitFor(() => verifier.held.length === 1);
    await verifier.releaseAll();
    const text = await finishing.text();
    expect(text).toMatch(/event: complete\ndata: .*"status":"complete"/);
    expect(state.active).toBe(0);
    await handler.close();
  });
});
