import { afterEach, describe, expect, it } from 'vitest';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { type Principal, SCOPES, type Scope } from '../../src/http/principal.js';
import { ROUTES } from '../../src/http/routes.js';
import { requireScope } from '../../src/http/scopes.js';
import { auth, fakeVerifier } from './support.js';

const EXPECTED: Readonly<Record<string, Scope | undefined>> = {
  getHealth: undefined,
  getOpenApi: undefined,
  verifyEmail: 'verify',
  listJobs: 'bulk:read',
  getJob: 'bulk:read',
  getJobResults: 'bulk:read',
  jobEvents: 'bulk:read',
  listWebhookDeliveries: 'bulk:read',
  createJob: 'bulk:write',
  addEmails: 'bulk:write',
  startJob: 'bulk:write',
  deleteJob: 'bulk:write',
  finishJob: 'bulk:write',
  getDiagnostics: 'admin',
  getUsage: undefined,
  getMetrics: 'admin',
};

/** A handler whose key `k` holds `scopes`, and any other key none of its own (a bare tenant: every scope). */
function handlerWith(scopes: readonly Scope[]): Handler {
  return createHandler({
    verifier: fakeVerifier(),
    console: false,
    authenticate: (request): Principal | string | null =>
      request.headers.get('authorization') === 'Bearer k'
        ? { tenant: 't', keyId: 'abcd1234', scopes }
        : request.headers.get('authorization') === 'Bearer all'
          ? 't'
          : null,
  });
}

function requestOf(route: (typeof ROUTES)[number], key: string): Request {
  const path = route.path.replace('{id}', 'no-such-job');
  const query = route.operationId === 'verifyEmail' ? '?email=a@example.com' : '';
  const body = route.method === 'POST' ? JSON.stringify({ emails: ['a@example.com'] }) : undefined;
  return new Request(`http://x${path}${query}`, {
    method: route.method,
    headers: auth(key, body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(body === undefined ? {} : { body }),
  });
}

let handler: Handler | undefined;
afterEach(async () => {
  await handler?.close();
  handler = undefined;
});

describe('scopes on every route', () => {
  it('names the scope of each route as the issue says', () => {
    expect(Object.fromEntries(ROUTES.map((route) => [route.operationId, route.scope]))).toEqual(EXPECTED);
  });

  it.each(
    ROUTES.filter((route) => route.scope !== undefined).map((route) => [route.operationId, route] as const),
  )('%s: 403 forbidden naming the scope for a key without it, not 403 with it', async (_name, route) => {
    const scope = route.scope as Scope;
    handler = handlerWith(SCOPES.filter((held) => held !== scope));
    const refused = await handler(requestOf(route, 'k'));
    expect(refused.status).toBe(403);
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('forbidden');
    expect(body.error.message).toContain(scope);
    await handler.close();

    handler = handlerWith([scope]);
    const allowed = await handler(requestOf(route, 'k'));
    expect(allowed.status).not.toBe(403);
    await allowed.body?.cancel();
    const bare = await handler(requestOf(route, 'all'));
    expect(bare.status).not.toBe(403);
    await bare.body?.cancel();
  });

  it('lets a key with no scope at all read the OpenAPI document and /healthz, and says it has none elsewhere', async () => {
    handler = handlerWith([]);
    expect((await handler(new Request('http://x/v1/openapi.json', { headers: auth('k') }))).status).toBe(200);
    expect((await handler(new Request('http://x/healthz'))).status).toBe(200);
    const refused = await handler(new Request('http://x/v1/bulk', { headers: auth('k') }));
    expect(await refused.json()).toEqual({
      error: { code: 'forbidden', message: 'this API key lacks the scope bulk:read (it has: none)' },
    });
  });

  it('still answers 401 before 403, and 404 for an unknown route before the scope', async () => {
    handler = handlerWith([]);
    expect((await handler(new Request('http://x/v1/bulk', { headers: auth('wrong') }))).status).toBe(401);
    expect((await handler(new Request('http://x/v1/nope', { headers: auth('k') }))).status).toBe(404);
  });
});

describe('requireScope', () => {
  it('passes a principal without scopes (every scope) and one holding the scope, refuses the rest', () => {
    expect(() => requireScope(undefined, 'admin')).not.toThrow();
    expect(() => requireScope({ tenant: 't' }, 'admin')).not.toThrow();
    expect(() => requireScope({ tenant: 't', scopes: ['admin'] }, 'admin')).not.toThrow();
    expect(() => requireScope({ tenant: 't', scopes: ['verify', 'bulk:read'] }, 'admin')).toThrow(
      'this API key lacks the scope admin (it has: verify, bulk:read)',
    );
  });
});
