/**
 * The Redis of the fleet tests (MAILVET_TEST_REDIS_URL; skipped with a notice when unset): a key prefix of its
 * own per test, whose keys are deleted afterwards (never FLUSHALL: the Redis is shared).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { deleteFleetKeys } from '../../src/bullmq/connection.js';

/** The Redis of the tests, or `undefined` (those tests are skipped). */
export const REDIS_URL = process.env.MAILVET_TEST_REDIS_URL || undefined;

if (REDIS_URL === undefined) {
  console.warn('MAILVET_TEST_REDIS_URL is unset: the worker fleet (Redis) tests are skipped');
}

/** A fresh key prefix for one test. */
export function testPrefix(): string {
  return `mvtest-${randomBytes(6).toString('hex')}`;
}

/** Deletes every key under `prefix`; returns how many. */
export async function deletePrefix(prefix: string): Promise<number> {
  const client = new Redis(REDIS_URL!);
  try {
    return await deleteFleetKeys(client, prefix);
  } finally {
    client.disconnect();
  }
}
