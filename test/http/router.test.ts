import { describe, expect, it } from 'vitest';
import { createRouter, type RoutePattern } from '../../src/http/router.js';

const routes: RoutePattern[] = [
  { method: 'GET', path: '/v1/bulk' },
  { method: 'POST', path: '/v1/bulk' },
  { method: 'GET', path: '/v1/bulk/{id}' },
  { method: 'DELETE', path: '/v1/bulk/{id}' },
  { method: 'GET', path: '/v1/bulk/{id}/results' },
];
const router = createRouter(routes);

describe('createRouter', () => {
  it('finds routes and decodes parameters', () => {
    expect(router.match('GET', '/v1/bulk')).toMatchObject({ kind: 'found', route: routes[0] });
    expect(router.match('POST', '/v1/bulk')).toMatchObject({ kind: 'found', route: routes[1] });
    expect(router.match('GET', '/v1/bulk/a%20b')).toEqual({
      kind: 'found',
      route: routes[2],
      params: { id: 'a b' },
    });
    expect(router.match('GET', '/v1/bulk/%E7%94%A8/results')).toMatchObject({ params: { id: '用' } });
  });

  it('lets HEAD match GET routes', () => {
    expect(router.match('HEAD', '/v1/bulk/x')).toMatchObject({ kind: 'found', route: routes[2] });
  });

  it('answers method_not_allowed with the methods of the path', () => {
    expect(router.match('PUT', '/v1/bulk/x')).toEqual({
      kind: 'method_not_allowed',
      allow: ['GET', 'DELETE', 'HEAD'],
    });
    expect(router.match('DELETE', '/v1/bulk')).toEqual({
      kind: 'method_not_allowed',
      allow: ['GET', 'POST', 'HEAD'],
    });
  });

  it.each([
    '/v1/bulk/',
    '/v1/bulk//results',
    '/v1/bulk/x/y',
    '/v1',
    '/',
    '',
    '/v1/bulk/%E0%A4%A/results',
    '/V1/bulk',
  ])('finds nothing at %j', (path) => {
    expect(router.match('GET', path)).toEqual({ kind: 'not_found' });
  });
});
