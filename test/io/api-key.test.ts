import { describe, expect, it } from 'vitest';
import {
  API_KEY_LENGTH,
  apiKeyHash,
  apiKeyIdOf,
  isApiKeyId,
  newApiKey,
  sameDigest,
} from '../../src/io/api-key.js';

describe('the API key format', () => {
  it('makes mv_<8 base62>_<43 base64url> keys whose hash is their SHA-256, with ids that differ', async () => {
    const keys = await Promise.all(Array.from({ length: 50 }, () => newApiKey()));
    for (const { key, keyId, hash } of keys) {
      expect(key).toMatch(/^mv_[0-9A-Za-z]{8}_[0-9A-Za-z_-]{43}$/);
      expect(key).toHaveLength(API_KEY_LENGTH);
      expect(apiKeyIdOf(key)).toBe(keyId);
      expect(hash).toBe(await apiKeyHash(key));
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
    }
    expect(new Set(keys.map((made) => made.keyId)).size).toBe(50);
    expect(new Set(keys.map((made) => made.key.slice(12))).size).toBe(50);
  });

  it('keeps the id of a rotation, and refuses a malformed one', async () => {
    const made = await newApiKey({ keyId: 'Ab3dEf9Z' });
    expect(made.keyId).toBe('Ab3dEf9Z');
    expect(made.key.startsWith('mv_Ab3dEf9Z_')).toBe(true);
    await expect(newApiKey({ keyId: 'short' })).rejects.toThrow(RangeError);
    await expect(newApiKey({ keyId: 'abcdefg_' })).rejects.toThrow(RangeError);
  });

  it('draws from the random source it is given (the secret is its bytes in base64url)', async () => {
    const zeros = await newApiKey({ keyId: 'AAAAAAAA', random: (bytes) => bytes.fill(0) });
    expect(zeros.key).toBe(`mv_AAAAAAAA_${'A'.repeat(43)}`);
    let next = 0;
    const counting = await newApiKey({ random: (bytes) => bytes.map(() => next++ % 256) });
    expect(counting.keyId).toBe('01234567');
  });

  it('finds no id in tokens of another form', () => {
    const secret = 'A'.repeat(43);
    for (const token of [
      `mx_abcdefgh_${secret}`,
      `mv_abcdefg_${secret}A`,
      `mv_abcdefgh_${secret}A`,
      `mv_abcdefgh_${secret.slice(1)}`,
      `mv_abcdefgh_${secret.slice(1)}=`,
      `mv_abcdéfgh_${secret.slice(1)}`,
      `MV_abcdefgh_${secret}`,
      '',
      'mv_',
    ]) {
      expect(apiKeyIdOf(token), token).toBeUndefined();
    }
    expect(apiKeyIdOf(`mv_abcdefgh_${secret}`)).toBe('abcdefgh');
    expect(isApiKeyId('abcdefgh')).toBe(true);
    expect(isApiKeyId('billing-app')).toBe(false);
  });

  it('compares digests exactly', () => {
    expect(sameDigest('abc', 'abc')).toBe(true);
    expect(sameDigest('abc', 'abd')).toBe(false);
    expect(sameDigest('abc', 'abcd')).toBe(false);
    expect(sameDigest('', 'a')).toBe(false);
  });
});
