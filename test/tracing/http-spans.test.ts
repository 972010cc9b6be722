/**
 * The span of an HTTP request (docs/operations.md, "Traces"): `{method} {route}`, a SERVER span with the HTTP
 * semantic-convention attributes, the verification it makes as its child; no path, query or address on it; and the
 * span of a fleet chunk around the verifications of its addresses.
 */
import { SpanKind } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { tracedChunk } from '../../src/bullmq/chunk-trace.js';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { createVerifier } from '../../src/verifier.js';
import { registerTestSdk, spanTrees, type TestSdk, undocumented } from '../support/otel.js';

let sdk: TestSdk | undefined;
let handler: Handler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
  await sdk?.shutdown();
  sdk = undefined;
});

function offlineHandler(): Handler {
  handler = createHandler({
    apiKeys: ['secret-key'],
    console: false,
    verifierOptions: { dns: false, smtp: false },
    requestId: () => 'req-1',
  });
  return handler;
}

const AUTH = { authorization: 'Bearer secret-key' };

describe('HTTP request spans', () => {
  it('records GET /v1/verify as a SERVER span named by its route, the verification its child', async () => {
    sdk = registerTestSdk();
    const response = await offlineHandler()(
      new Request('http://localhost/v1/verify?email=jane.doe@shop.example', { headers: AUTH }),
    );
    expect(response.status).toBe(200);
    expect(
      spanTrees(sdk.spans()).map((tree) => [tree.name, tree.children.map((child) => child.name)]),
    ).toEqual([['GET /v1/verify', ['mailvet.verify']]]);
    const request = sdk.spans().find((span) => span.name === 'GET /v1/verify');
    expect(request?.kind).toBe(SpanKind.SERVER);
    expect(request?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.scheme': 'http',
      'http.route': '/v1/verify',
      'http.response.status_code': 200,
    });
    const values = sdk.spans().flatMap((span) => Object.values(span.attributes).map(String));
    for (const value of values) expect(value).not.toMatch(/jane|shop|secret|@/);
  });

  it('names a request no route matched by its method alone, and marks a 5xx as an error', async () => {
    sdk = registerTestSdk();
    const answer = offlineHandler();
    expect(
      (await answer(new Request('http://localhost/v1/jane@shop.example', { headers: AUTH }))).status,
    ).toBe(404);
    await answer.close();
    expect(
      (await answer(new Request('http://localhost/v1/verify?email=a@b.example', { headers: AUTH }))).status,
    ).toBe(503);
    const [missing, closed] = sdk.spans();
    expect(missing?.name).toBe('GET');
    expect(missing?.attributes).toEqual({
      'http.request.method': 'GET',
      'url.scheme': 'http',
      'http.response.status_code': 404,
    });
    expect(missing?.status.code).toBe(0);
    expect(closed?.attributes).toMatchObject({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(closed?.status.code).toBe(2);
    expect(undocumented(sdk.spans())).toEqual([]);
  });

  it('records a method the conventions do not name as _OTHER, bounded', async () => {
    sdk = registerTestSdk();
    const method = `PURGE${'X'.repeat(100)}`;
    const response = await offlineHandler()(
      new Request('http://localhost/v1/verify', { method, headers: AUTH }),
    );
    expect(response.status).toBe(405);
    const [span] = sdk.spans();
    expect(span?.name).toBe('HTTP'); // no route matches an unknown method: no http.route either
    expect(span?.attributes['http.route']).toBeUndefined();
    expect(span?.attributes['http.request.method']).toBe('_OTHER');
    expect(span?.attributes['http.request.method_original']).toBe(method.slice(0, 32));
    expect(undocumented(sdk.spans())).toEqual([]);
  });

  it('tells onRequest the same route and status while tracing', async () => {
    sdk = registerTestSdk();
    const records: { route: string | null; status: number }[] = [];
    handler = createHandler({
      apiKeys: ['secret-key'],
      console: false,
      verifierOptions: { dns: false, smtp: false },
      onRequest: ({ route, status }) => records.push({ route, status }),
    });
    await handler(new Request('http://localhost/healthz'));
    expect(records).toEqual([{ route: '/healthz', status: 200 }]);
    expect(sdk.spans().map((span) => span.name)).toEqual(['GET /healthz']);
  });
});

describe('fleet chunk spans', () => {
  it('records a chunk as a CONSUMER span around its verifications, with the job and the count, no address', async () => {
    sdk = registerTestSdk();
    const verifier = createVerifier({ dns: false, smtp: false });
    const data = {
      job: 'job-1',
      positions: [0, 1],
      emails: ['a@b.example', 'c@d.example'],
      attempts: [0, 0],
    };
    try {
      await tracedChunk(data, 2, async () => {
        for (const email of data.emails) await verifier.verify(email);
      });
    } finally {
      await verifier.dispose();
    }
    const trees = spanTrees(sdk.spans());
    expect(trees.map((tree) => [tree.name, tree.children.map((child) => child.name)])).toEqual([
      ['mailvet.bulk.chunk', ['mailvet.verify', 'mailvet.verify']],
    ]);
    const chunk = sdk.spans().find((span) => span.name === 'mailvet.bulk.chunk');
    expect(chunk?.kind).toBe(SpanKind.CONSUMER);
    expect(chunk?.attributes).toEqual({
      'mailvet.job.id': 'job-1',
      'mailvet.chunk.addresses': 2,
      'mailvet.chunk.run': 2,
    });
  });

  it('records a malformed chunk without its data, and a failed one with its error type', async () => {
    sdk = registerTestSdk();
    await expect(
      tracedChunk({ job: 7 }, 1, async () => {
        throw new TypeError('a chunk of the queue is malformed');
      }),
    ).rejects.toThrow(TypeError);
    const [chunk] = sdk.spans();
    expect(chunk?.attributes).toEqual({ 'mailvet.chunk.run': 1, 'error.type': 'TypeError' });
    expect(chunk?.status.code).toBe(2);
    expect(undocumented(sdk.spans())).toEqual([]);
  });
});
