/**
 * The webhook secrets of stored keys as the API reads them: the key's secret, the replaced one beside it until
 * its grace ends, none for a revoked key, a key without one or a tenant that is no stored key's; a store that
 * does not answer is a 503.
 */
import { describe, expect, it } from 'vitest';
import { storedWebhookSecrets } from '../../src/http/stored-webhooks.js';
import { type ApiKeyRecord, webhookSecretsOf } from '../../src/postgres/api-keys.js';
import { SECRET, SECRET2 } from '../webhooks/support.js';

const NOW = Date.parse('2026-11-27T12:00:00Z');

function record(fields: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id: 'AbCd1234',
    name: 'app',
    hash: '0'.repeat(64),
    scopes: ['bulk:write'],
    requestsPerSecond: null,
    addressesPerDay: null,
    createdAt: NOW - 86_400_000,
    lastUsedAt: null,
    revokedAt: null,
    previousHash: null,
    previousUntil: null,
    webhookSecret: SECRET2,
    previousWebhookSecret: null,
    previousWebhookSecretUntil: null,
    ...fields,
  };
}

describe('webhookSecretsOf', () => {
  it.each([
    ['a key with a secret', record(), [SECRET2]],
    [
      'a rotation within its grace: both',
      record({ previousWebhookSecret: SECRET, previousWebhookSecretUntil: NOW + 1 }),
      [SECRET2, SECRET],
    ],
    [
      'a rotation whose grace has ended: the new one',
      record({ previousWebhookSecret: SECRET, previousWebhookSecretUntil: NOW }),
      [SECRET2],
    ],
    ['a key without a secret', record({ webhookSecret: null }), undefined],
    ['a revoked key', record({ revokedAt: NOW - 1 }), undefined],
  ])('%s', (_label, given, expected) => {
    expect(webhookSecretsOf(given, NOW)).toEqual(expected);
  });
});

describe('storedWebhookSecrets', () => {
  it("reads a stored key's secrets by its tenant, anew on each call; other tenants have none", async () => {
    let stored = record();
    const reads: string[] = [];
    const secretsOf = storedWebhookSecrets(
      {
        async get(id) {
          reads.push(id);
          return id === stored.id ? stored : undefined;
        },
      },
      () => NOW,
    );
    expect(await secretsOf('key:AbCd1234')).toEqual([SECRET2]);
    stored = record({ webhookSecret: SECRET });
    expect(await secretsOf('key:AbCd1234')).toEqual([SECRET]);
    expect(await secretsOf('key:Zzzz9999')).toBeUndefined();
    expect(
      await secretsOf('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'),
    ).toBeUndefined();
    expect(reads).toEqual(['AbCd1234', 'AbCd1234', 'Zzzz9999']);
  });

  it('answers 503 service_unavailable when the store does not answer', async () => {
    const secretsOf = storedWebhookSecrets(
      {
        async get() {
          throw new Error('connection refused');
        },
      },
      () => NOW,
    );
    await expect(secretsOf('key:AbCd1234')).rejects.toMatchObject({ code: 'service_unavailable' });
  });
});
