import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler, type Handler } from '../../src/http/handler.js';
import { auth, fakeVerifier, KEY_A } from './support.js';

let dir: string;
let handler: Handler;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mailvet-console-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(join(dir, 'index.html'), '<!doctype html><title>console</title>');
  await writeFile(join(dir, 'assets', 'app-ABC123.js'), 'console.log(1)');
  await writeFile(join(dir, 'assets', 'styles-ABC123.css'), 'body{}');
  handler = createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier(), console: { dir } });
});
afterAll(async () => {
  await handler.close();
  await rm(dir, { recursive: true, force: true });
});

const get = (path: string, init: RequestInit = {}) => handler(new Request(`http://localhost${path}`, init));

describe('the console routes', () => {
  it('serves the page at / with a strict Content-Security-Policy and no key needed', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<title>console</title>');
  });

  it('serves hashed assets as immutable, and nothing else', async () => {
    const js = await get('/console/assets/app-ABC123.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await get('/console/assets/styles-ABC123.css')).headers.get('content-type')).toContain(
      'text/css',
    );
    for (const path of [
      '/console/assets/missing.js',
      '/console/assets/../index.html',
      '/console/assets/%2e%2e%2fpackage.json',
      '/console/assets/app-ABC123.js%00.png',
      '/console/',
      `/console/assets/${'a'.repeat(5000)}.js`,
    ])
      expect((await get(path)).status, path).toBe(404);
    expect((await get('/', { method: 'POST' })).status).toBe(405);
    expect((await get('/', { method: 'HEAD' })).status).toBe(200);
  });

  it('leaves the API as it is', async () => {
    expect((await get('/v1/verify?email=a@example.com', { headers: auth() })).status).toBe(200);
    expect((await get('/healthz')).status).toBe(200);
  });

  it('is off with console: false, and says it is not built when its files are missing', async () => {
    const off = createHandler({ apiKeys: [KEY_A], verifier: fakeVerifier(), console: false });
    expect((await off(new Request('http://localhost/'))).status).toBe(404);
    await off.close();
    const unbuilt = createHandler({
      apiKeys: [KEY_A],
      verifier: fakeVerifier(),
      console: { dir: join(dir, 'nope') },
    });
    const response = await unbuilt(new Request('http://localhost/'));
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('not built');
    await unbuilt.close();
  });
});
