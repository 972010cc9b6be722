/**
 * API keys kept in the job store: the scopes a key can hold, and the key format shared by the CLI (which makes
 * keys) and the HTTP API (which checks them); and the keys of `MAILVET_API_KEYS`, which both read. A key is `mv_`, a public id of 8 base62 characters, `_`, then 43
 * base64url characters (32 random bytes); only its SHA-256 digest is stored. Web Crypto only, so this file runs
 * on any runtime.
 * @module
 */

/** Every scope an API key can hold. A key from `MAILVET_API_KEYS` or `apiKeys` holds them all. */
export const SCOPES = ['verify', 'bulk:read', 'bulk:write', 'admin'] as const;

/**
 * What a request may do: `verify` (`GET /v1/verify`), `bulk:read` (read jobs, results, events, deliveries),
 * `bulk:write` (create, add to, start, finish and delete jobs), `admin` (metrics, diagnostics).
 */
export type Scope = (typeof SCOPES)[number];

/** What every stored key starts with. */
export const API_KEY_PREFIX = 'mv_';

/** Length of a key's public id (base62). */
export const KEY_ID_LENGTH = 8;

/** Length of a whole key: `mv_`, the id, `_`, 43 base64url characters. */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + KEY_ID_LENGTH + 1 + 43;

const KEY_PATTERN = /^mv_[0-9A-Za-z]{8}_[0-9A-Za-z_-]{43}$/;
const ID_PATTERN = /^[0-9A-Za-z]{8}$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Fills a byte array with random bytes. @default crypto.getRandomValues */
export type RandomBytes = (bytes: Uint8Array) => Uint8Array;

const cryptoRandom: RandomBytes = (bytes) => globalThis.crypto.getRandomValues(bytes);

/** A new key: the key itself (shown once), its public id and the digest the store keeps. */
export interface NewApiKey {
  /** The whole key, `mv_<id>_<secret>`: printed once, never stored. */
  readonly key: string;
  /** The public id (8 base62 characters): the key's `keyId`, shown by `mailvet keys list`. */
  readonly keyId: string;
  /** The hex SHA-256 digest of `key`: what the store keeps. */
  readonly hash: string;
}

function base62Id(random: RandomBytes): string {
  let id = '';
  while (id.length < KEY_ID_LENGTH) {
    for (const byte of random(new Uint8Array(KEY_ID_LENGTH * 2))) {
      // 248 = 4 * 62: bytes above it are dropped, so every character is equally likely.
      if (byte < 248 && id.length < KEY_ID_LENGTH) id += BASE62[byte % 62];
    }
  }
  return id;
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
}

/**
 * Makes a key. `keyId` keeps a key's id (a rotation: the new key has the old one's id, so its tenant and usage
 * stay the same); otherwise a new random id is drawn.
 * @example
 * const { key, keyId, hash } = await newApiKey(); // key: 'mv_3kT9aZ1q_...' (55 characters)
 */
export async function newApiKey(
  options: { readonly keyId?: string; readonly random?: RandomBytes } = {},
): Promise<NewApiKey> {
  const random = options.random ?? cryptoRandom;
  const keyId = options.keyId ?? base62Id(random);
  if (!ID_PATTERN.test(keyId))
    throw new RangeError(`a key id is 8 base62 characters, got ${JSON.stringify(keyId)}`);
  const key = `${API_KEY_PREFIX}${keyId}_${base64url(random(new Uint8Array(32)))}`;
  return { key, keyId, hash: await apiKeyHash(key) };
}

/** The public id of `token` when it has the form of a stored key (`mv_<id>_<secret>`), else `undefined`. */
export function apiKeyIdOf(token: string): string | undefined {
  if (token.length !== API_KEY_LENGTH || !KEY_PATTERN.test(token)) return undefined;
  return token.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + KEY_ID_LENGTH); // no match array per request
}

/** Whether `text` has the form of a key's public id (8 base62 characters). */
export function isApiKeyId(text: string): boolean {
  return ID_PATTERN.test(text);
}

/** The hex SHA-256 digest of a key: what the store keeps of it. */
export async function apiKeyHash(key: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  let out = '';
  for (const byte of new Uint8Array(digest)) out += byte.toString(16).padStart(2, '0');
  return out;
}

/**
 * Whether two strings (hex digests, tokens) are equal, in time that depends only on their lengths (no early exit), so a caller
 * cannot learn how much of a digest it guessed.
 */
export function sameDigest(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  const width = Math.max(a.length, b.length);
  for (let i = 0; i < width; i++) diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}

/** Name of the environment variable that holds the API keys, comma-separated. */
export const API_KEYS_ENV = 'MAILVET_API_KEYS';

/** Reads the API keys from the environment (`MAILVET_API_KEYS`), where the runtime has one. */
export function keysFromEnv(
  env: Readonly<Record<string, string | undefined>> | undefined = processEnv(),
): string[] {
  const raw = env?.[API_KEYS_ENV];
  if (raw === undefined) return [];
  return raw
    .split(',')
    .map((key) => key.trim())
    .filter((key) => key.length > 0);
}

function processEnv(): Readonly<Record<string, string | undefined>> | undefined {
  const process = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  return process?.env;
}
