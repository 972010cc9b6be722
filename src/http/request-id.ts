/**
 * Request ids: every response carries one in `X-Request-Id`.
 * @module
 */

/** The header that carries the request id, both ways. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** What an incoming id must look like to be reused: short, and safe in logs and headers. */
const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Makes a new request id. @default crypto.randomUUID */
export type RequestIdGenerator = () => string;

/**
 * The id of a request: the caller's `X-Request-Id` when it is 1-128 characters of `A-Z a-z 0-9 . _ : -`
 * (so that an id set by a proxy follows the request through), otherwise a new one from `generate`.
 */
export function requestIdOf(request: Request, generate: RequestIdGenerator): string {
  const given = request.headers.get(REQUEST_ID_HEADER);
  return given !== null && SAFE_ID.test(given) ? given : generate();
}

/** The default generator: a random UUID from Web Crypto. */
export const randomRequestId: RequestIdGenerator = () => globalThis.crypto.randomUUID();
