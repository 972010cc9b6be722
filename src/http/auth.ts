/**
 * Bearer API keys: each key is a tenant. Keys are compared in constant time by a plain loop, and tenants are
 * SHA-256 digests made with Web Crypto, so this file runs on any runtime.
 * @module
 */
import { OptionsError } from '../errors.js';
import type { Principal } from './principal.js';

/**
 * Identifies the caller of a `/v1` request: returns the tenant the request acts for (a non-empty string;
 * jobs are only visible to the tenant that created them) or a {@link Principal} (the tenant with the key's
 * id, scopes and limits), or `null` to answer 401. It may also throw an `HttpError` to answer otherwise.
 * @example
 * const authenticate: Authenticate = (request) => sessions.userOf(request.headers.get('cookie'));
 */
export type Authenticate = (
  request: Request,
) => string | Principal | null | Promise<string | Principal | null>;

/** Longest accepted API key, in characters. */
export const MAX_KEY_LENGTH = 256;

const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/; // RFC 6750 b64token
const BEARER = /^bearer +(\S+) *$/i;

/** The token of a request's `Authorization: Bearer <token>` header, or `undefined`. */
export function bearerTokenOf(request: Request): string | undefined {
  return BEARER.exec(request.headers.get('authorization') ?? '')?.[1];
}

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/**
 * 0 when `token` equals `key`. The loop always runs over `width` positions (the longest key's length, a
 * constant of the configuration) and has no early exit, so the time taken depends neither on where the two
 * differ nor on which key is compared.
 */
function difference(token: string, key: string, width: number): number {
  let diff = token.length ^ key.length;
  for (let i = 0; i < width; i++) diff |= (token.charCodeAt(i) | 0) ^ (key.charCodeAt(i) | 0);
  return diff;
}

function hex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** The hex SHA-256 digest of `text`: the tenant {@link bearerKeys} gives an API key. */
export async function sha256Hex(text: string): Promise<string> {
  return hex(await sha256(text));
}

/**
 * Checks API keys: non-empty, at most {@link MAX_KEY_LENGTH} characters, RFC 6750 token characters only
 * (so a key never needs escaping in a header and cannot contain the comma that separates keys in the env).
 * @throws OptionsError naming `apiKeys`.
 */
export function validateKeys(keys: unknown): readonly string[] {
  if (!Array.isArray(keys)) throw new OptionsError('apiKeys', 'must be an array of strings');
  keys.forEach((key, index) => {
    if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || !TOKEN.test(key)) {
      throw new OptionsError(
        `apiKeys[${index}]`,
        `must be 1-${MAX_KEY_LENGTH} characters of A-Z a-z 0-9 - . _ ~ + / (then optional =)`,
      );
    }
  });
  return keys as readonly string[];
}

/**
 * An {@link Authenticate} that accepts `Authorization: Bearer <key>` for any of `keys`. The presented token is
 * compared with every key in constant time (no early exit, the same work whatever the inputs). The tenant of
 * a key is the hex SHA-256 digest of the key, so the key itself is never stored with the jobs.
 * @example
 * const authenticate = bearerKeys(['k1', 'k2']);
 * await authenticate(new Request('http://x/v1/verify', { headers: { authorization: 'Bearer k1' } })); // tenant of k1
 */
export function bearerKeys(keys: readonly string[]): Authenticate {
  const valid = [...validateKeys(keys)];
  if (valid.length === 0) throw new OptionsError('apiKeys', 'must hold at least one key');
  let tenants: readonly string[] | undefined;
  const digests = Promise.all(valid.map(async (key) => hex(await sha256(key)))).then((list) => {
    tenants = list;
    return list;
  });
  const width = Math.max(...valid.map((key) => key.length));
  return (request) => {
    const token = bearerTokenOf(request);
    if (token === undefined || token.length > width) return null;
    let found = -1;
    for (let i = 0; i < valid.length; i++) {
      const equal = difference(token, valid[i] as string, width) === 0;
      found = equal ? i : found;
    }
    if (found === -1) return null;
    // The digests are ready after the first request; until then, wait for them.
    return tenants === undefined ? digests.then((list) => list[found] as string) : (tenants[found] as string);
  };
}
