import { readFileSync } from 'node:fs';
import { validate } from '@readme/openapi-parser';
import { describe, expect, it } from 'vitest';
import { HTTP_ERROR_CODES } from '../../src/http/errors.js';
import { resolveLimits } from '../../src/http/limits.js';
import { DEFAULT_LIMITS } from '../../src/http/node-runtime.js';
import { openApiDocument } from '../../src/http/openapi.js';
import { createRouter } from '../../src/http/router.js';
import { ROUTES } from '../../src/http/routes.js';
import { STATUSES, SUB_STATUSES } from '../../src/result.js';

type Operation = { operationId: string; security: unknown[]; responses: Record<string, unknown> };
const METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'];

function operations(
  doc: ReturnType<typeof openApiDocument>,
): { method: string; path: string; op: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Operation })),
  );
}

describe('the OpenAPI document', () => {
  const doc = openApiDocument();

  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.warnings).toEqual([]);
    expect(result).toMatchObject({ valid: true, specification: 'OpenAPI' });
    expect(doc.openapi).toBe('3.1.0');
  });

  it('is rejected by the same validator when broken (the check can fail)', async () => {
    const broken = structuredClone(doc) as unknown as { components: { schemas: Record<string, unknown> } };
    delete broken.components.schemas.Job;
    expect((await validate(broken as never)).valid).toBe(false);
  });

  it('documents every route of the router, and every documented operation is routed to itself', () => {
    const router = createRouter(ROUTES);
    const documented = operations(doc);
    expect(documented).toHaveLength(ROUTES.length);
    for (const route of ROUTES) {
      const op = documented.find((entry) => entry.method === route.method && entry.path === route.path);
      expect(op?.op.operationId, `${route.method} ${route.path}`).toBe(route.operationId);
    }
    for (const { method, path, op } of documented) {
      const match = router.match(method, path.replace('{id}', 'job-123'));
      expect(match.kind, `${method} ${path}`).toBe('found');
      if (match.kind === 'found') {
        expect(match.route.operationId).toBe(op.operationId);
        if (path.includes('{id}')) expect(match.params).toEqual({ id: 'job-123' });
      }
    }
  });

  it('asks for the bearer key everywhere but /healthz, and documents 401 and 429 there', () => {
    for (const { path, op } of operations(doc)) {
      if (path === '/healthz') {
        expect(op.security).toEqual([]);
        continue;
      }
      expect(op.security).toEqual([{ bearer: expect.any(Array) }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['401', '429', '500']));
    }
  });

  it('lists the scope each operation needs in its security requirement, with a 403 when it needs one', () => {
    const byOperation = new Map(operations(doc).map(({ op }) => [op.operationId, op]));
    for (const route of ROUTES) {
      const op = byOperation.get(route.operationId)!;
      if (!route.auth) continue;
      expect(op.security, route.operationId).toEqual([
        { bearer: route.scope === undefined ? [] : [route.scope] },
      ]);
      expect('403' in op.responses, route.operationId).toBe(route.scope !== undefined);
    }
    expect(byOperation.get('createJob')?.security).toEqual([{ bearer: ['bulk:write'] }]);
    expect(byOperation.get('getOpenApi')?.security).toEqual([{ bearer: [] }]);
  });

  it('takes its enums from the code: statuses, sub-statuses, error codes', () => {
    const schemas = (
      doc.components as { schemas: Record<string, { properties: Record<string, { enum?: unknown[] }> }> }
    ).schemas;
    expect(schemas.VerificationResult?.properties.status?.enum).toEqual([...STATUSES]);
    expect(schemas.VerificationResult?.properties.sub_status?.enum).toEqual([...SUB_STATUSES, null]);
    const error = schemas.Error?.properties.error as unknown as { properties: { code: { enum: unknown[] } } };
    expect(error.properties.code.enum).toEqual(HTTP_ERROR_CODES);
  });

  it('states the limits it is generated with', () => {
    const info = (limits: Parameters<typeof openApiDocument>[0]) =>
      (openApiDocument(limits).info as { description: string }).description;
    expect(info(DEFAULT_LIMITS)).toContain('at most 10485760 bytes');
    expect(info(resolveLimits({ maxJobsPerKey: 7 }, DEFAULT_LIMITS))).toContain(
      'Jobs per API key: at most 7.',
    );
  });

  it('is what docs/openapi.json holds (run scripts/write-openapi.ts after a change)', () => {
    const written = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));
    expect(written).toEqual(JSON.parse(JSON.stringify(doc)));
  });
});
