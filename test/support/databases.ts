/**
 * Test databases: a schema of its own per test on the PostgreSQL server of MAILVET_TEST_POSTGRES_URL (skipped
 * with a notice when unset), and schemas on one shared in-memory PGlite.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';

/** The PostgreSQL server of the tests, or `undefined` (those tests are skipped). */
export const POSTGRES_URL = process.env.MAILVET_TEST_POSTGRES_URL || undefined;

if (POSTGRES_URL === undefined) {
  console.warn('MAILVET_TEST_POSTGRES_URL is unset: the PostgreSQL server tests are skipped');
}

/** A fresh schema name for one test. */
export function testSchema(): string {
  return `mv_test_${randomBytes(6).toString('hex')}`;
}

/** Drops `schema` on the PostgreSQL server. */
export async function dropPostgresSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

let shared: Promise<PGlite> | undefined;

/**
 * How long opening the shared PGlite may take: its WASM start and initdb take ~5 s on two idle cores, several times
 * that beside a CPU hog, more than one test's 20 s.
 */
export const PGLITE_OPEN_MS = 120_000;

/** Opens the shared PGlite: `beforeAll(openSharedPglite, PGLITE_OPEN_MS)`, so no test pays for it in its own time. */
export async function openSharedPglite(): Promise<void> {
  await sharedPglite();
}

/** One in-memory PGlite for the whole test file (its initdb takes seconds); each test uses its own schema. */
export function sharedPglite(): Promise<PGlite> {
  shared ??= PGlite.create();
  return shared;
}
