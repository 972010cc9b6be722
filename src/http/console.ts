/**
 * Serves the web console (built by `npm run build` into dist/console): `GET /` is its page, `GET /console/assets/*`
 * its content-hashed assets. The page gets a Content-Security-Policy without inline scripts or styles; the assets
 * are immutable, cached for a year. Runtime-free: the files come read (on Node, by http/node-runtime.ts).
 * @module
 */
import { HttpError } from './errors.js';

/** The console's files, read once. */
export interface ConsoleFiles {
  readonly index: string;
  readonly assets: ReadonlyMap<string, string>;
}

/** Headers of the console's page: no inline code, no framing, no referrer, nothing loaded from elsewhere. */
export const CONSOLE_PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
});

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
};

/** The name of a console asset: content-hashed `.js`, `.css` or `.txt`, nothing else is served. */
export const ASSET_NAME = /^[A-Za-z0-9_-]+\.(js|css|txt)$/;

/** True for the paths the console answers: `/` and `/console/...`. */
export function isConsolePath(pathname: string): boolean {
  return pathname === '/' || pathname.startsWith('/console/');
}

/** The response for a console path (GET or HEAD), or an {@link HttpError}. */
export function consoleResponse(files: ConsoleFiles | undefined, method: string, pathname: string): Response {
  if (method !== 'GET' && method !== 'HEAD') {
    throw new HttpError('method_not_allowed', 'use GET', { headers: { allow: 'GET, HEAD' } });
  }
  if (files === undefined) throw new HttpError('not_found', 'the console is not built (npm run build)');
  if (pathname === '/') return new Response(files.index, { status: 200, headers: CONSOLE_PAGE_HEADERS });
  const name = pathname.slice('/console/assets/'.length);
  const body =
    pathname.startsWith('/console/assets/') && ASSET_NAME.test(name) ? files.assets.get(name) : undefined;
  if (body === undefined) throw new HttpError('not_found', 'no such file');
  const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream';
  return new Response(body, {
    status: 200,
    headers: {
      'content-type': type,
      'cache-control': 'public, max-age=31536000, immutable',
      'x-content-type-options': 'nosniff',
    },
  });
}
