import { describe, expect, it } from 'vitest';
import { bearerKeys, validateKeys } from '../../src/http/auth.js';
import { keysFromEnv } from '../../src/io/api-key.js';

const request = (authorization?: string): Request =>
  new Request(
    'http://localhost/v1/verify',
    authorization === undefined ? {} : { headers: { authorization } },
  );

describe('bearerKeys', () => {
  const authenticate = bearerKeys(['key-one', 'key-two']);

  it('gives each key its own stable tenant', async () => {
    const one = await authenticate(request('Bearer key-one'));
    const two = await authenticate(request('Bearer key-two'));
    expect(one).toMatch(/^[0-9a-f]{64}$/);
    expect(two).toMatch(/^[0-9a-f]{64}$/);
    expect(one).not.toBe(two);
    expect(await authenticate(request('Bearer key-one'))).toBe(one);
  });

  it('never uses the key itself as the tenant', async () => {
    expect(await authenticate(request('Bearer key-one'))).not.toContain('key-one');
  });

  it('accepts the scheme in any case and extra spaces', async () => {
    const tenant = await authenticate(request('Bearer key-one'));
    expect(await authenticate(request('bearer key-one'))).toBe(tenant);
    expect(await authenticate(request('BEARER   key-one'))).toBe(tenant);
  });

  it.each([
    ['no header', undefined],
    ['an unknown key', 'Bearer key-three'],
    ['a prefix of a key', 'Bearer key-'],
    ['a key plus a suffix', 'Bearer key-one1'],
    ['another scheme', 'Basic a2V5LW9uZQ=='],
    ['a bare key', 'key-one'],
    ['an empty token', 'Bearer '],
    ['two tokens', 'Bearer key-one key-two'],
    ['an over-long token', `Bearer ${'a'.repeat(10_000)}`],
    ['a unicode token', 'Bearer kéy-one'],
  ])('refuses %s', async (_, header) => {
    expect(await authenticate(request(header))).toBeNull();
  });
});

describe('keys', () => {
  it('reads comma-separated keys from the env, trimming and dropping empty ones', () => {
    expect(keysFromEnv({ MAILVET_API_KEYS: ' a1, b2 ,,c3 ' })).toEqual(['a1', 'b2', 'c3']);
    expect(keysFromEnv({})).toEqual([]);
  });

  it.each([[''], ['has space'], ['comma,inside'], ['x'.repeat(257)], ['ünïcode']])(
    'rejects the key %j',
    (key) => {
      expect(() => validateKeys([key])).toThrow(/apiKeys\[0\]/);
    },
  );

  it('rejects a key list that is not an array, and an empty one', () => {
    expect(() => validateKeys('k')).toThrow(/apiKeys must be an array/);
    expect(() => bearerKeys([])).toThrow(/at least one key/);
  });
});
