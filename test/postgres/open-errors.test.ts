import { mkdir, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { DurableJobStore } from '../../src/bulk/types.js';
import { createHandler } from '../../src/http/handler.js';
import { pgliteStore, postgresStore, SCHEMA_VERSION } from '../../src/postgres/index.js';
import { tempDir } from '../cli/support.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import {
  dropPostgresSchema,
  openSharedPglite,
  PGLITE_OPEN_MS,
  POSTGRES_URL,
  sharedPglite,
  testSchema,
} from '../support/databases.js';
import { run } from '../support/mailvet-bin.js';
import { startRefusingPostgres } from '../support/postgres-refusing.js';

beforeAll(openSharedPglite, PGLITE_OPEN_MS); // its start, not a test's own time

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/
beforeAll(async () => {
  dir = await tempDir('mailvet-store-errors-');
});
afterAll(async () => {
  await dir.remove();
});

/** Runs the built `mailvet` with an API key set. */
function mailvet(args: string[]) {
  return run(args, { env: { MAILVET_API_KEYS: 'k' } });
}

describe('opening a durable store: clear errors', () => {
  it('refuses bad options with invalid_option', async () => {
    await expect(pgliteStore({ schema: 'x; DROP TABLE jobs' })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'schema',
    });
    await expect(pgliteStore({ leaseMs: 5 })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'leaseMs',
    });
    await expect(pgliteStore({ dataDir: '' })).rejects.toMatchObject({ code: 'invalid_option' });
    await expect(postgresStore({ connectionString: 'mysql://root@localhost/db' })).rejects.toMatchObject({
      code: 'invalid_option',
      option: 'connectionString',
    });
    await expect(
      postgresStore({ connectionString: 'postgres://x@127.0.0.1/db', poolSize: 0 }),
    ).rejects.toMatchObject({ code: 'invalid_option', option: 'poolSize' });
  });

  it('names a PGlite path that is a file, or a directory that is not a database', async () => {
    const file = dir.file('not-a-dir');
    await writeFile(file, 'hello');
    await expect(pgliteStore({ dataDir: file })).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringContaining('not a directory'),
    });
    const foreign = dir.file('photos');
    await mkdir(foreign, { mode: 0o700 });
    await writeFile(`${foreign}/cat.jpg`, 'meow');
    await expect(pgliteStore({ dataDir: foreign })).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringMatching(/photos.*holds no PostgreSQL data/),
    });
  });

  it('refuses a schema newer than this mailvet, naming both versions', async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    try {
      const store = await pgliteStore({ db, schema });
      await store.close?.();
      await db.query(`INSERT INTO ${schema}.schema_version (version) VALUES (99)`);
      await expect(pgliteStore({ db, schema })).rejects.toMatchObject({
        code: 'store_error',
        message: expect.stringContaining(`version 99, newer than this mailvet knows (${SCHEMA_VERSION})`),
      });
    } finally {
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('names an unreachable server and a missing database, without the password', async () => {
    await expect(
      postgresStore({ connectionString: 'postgres://u:secret@127.0.0.1:1/test' }),
    ).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringMatching(/127\.0\.0\.1:1.*nothing listens at that address/),
    });
    const refused = await postgresStore({ connectionString: 'postgres://u:secret@127.0.0.1:1/test' }).catch(
      (error: Error) => error.message,
    );
    expect(refused).not.toContain('secret');
  });

  it('says a password was refused, without the password, in the library and in mailvet serve', async () => {
    const server = await startRefusingPostgres();
    try {
      const url = `postgres://jane:not-her-password@127.0.0.1:${server.port}/test`;
      const refused = await postgresStore({ connectionString: url }).catch((error: unknown) => error);
      expect(refused).toMatchObject({
        code: 'store_unavailable',
        message: expect.stringMatching(
          /^cannot open the job store \(PostgreSQL at postgres:\/\/jane:\*\*\*@127\.0\.0\.1:\d+\/test\): the password was refused: password authentication failed for user "jane"$/,
        ),
      });
      expect(server.passwords).toContain('not-her-password'); // it did reach the server, and was refused
      const cli = await mailvet(['serve', '--port', '0', '--no-dns', '--store', url]);
      expect(cli.code).toBe(3);
      expect(cli.stderr.trim().split('\n')).toEqual([
        expect.stringMatching(/^mailvet: cannot open the job store .*: the password was refused: /),
      ]);
      expect(cli.stderr).not.toContain('not-her-password');
    } finally {
      await server.close();
    }
  }, 60_000);

  it.skipIf(POSTGRES_URL === undefined)('names a user the server does not know', async () => {
    const url = new URL(POSTGRES_URL!);
    url.username = 'mailvet_no_such_role';
    await expect(postgresStore({ connectionString: url.toString() })).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringContaining('role "mailvet_no_such_role" does not exist'),
    });
  });

  it.skipIf(POSTGRES_URL === undefined)('names a database that does not exist', async () => {
    const url = new URL(POSTGRES_URL!);
    url.pathname = '/mailvet_no_such_database';
    await expect(postgresStore({ connectionString: url.toString() })).rejects.toMatchObject({
      code: 'store_unavailable',
      message: expect.stringContaining('the database does not exist'),
    });
  });

  it('mailvet serve: one line and exit 3 for a store it cannot open, exit 2 for conflicting flags', async () => {
    const unreachable = await mailvet([
      'serve',
      '--port',
      '0',
      '--no-dns',
      '--store',
      'postgres://u@127.0.0.1:1/x',
    ]);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(
      /^mailvet: cannot open the job store \(PostgreSQL at postgres:\/\/u@127\.0\.0\.1:1\/x\): nothing listens/,
    );
    expect(unreachable.stderr.trim().split('\n')).toHaveLength(1);
    const file = dir.file('serve-file');
    await writeFile(file, 'x');
    const notDir = await mailvet(['serve', '--port', '0', '--no-dns', '--data', file]);
    expect(notDir.code).toBe(3);
    expect(notDir.stderr).toContain('the path is not a directory');
    for (const args of [
      ['--data', dir.path, '--store', 'postgres://u@127.0.0.1/x'],
      ['--store', 'mysql://u@127.0.0.1/x'],
      ['--retention-days', '-1'],
      ['--store', 'postgres://u@127.0.0.1/x', '--lease-seconds', '0'],
      ['--data', dir.path, '--lease-seconds', '5'],
    ]) {
      const usage = await mailvet(['serve', '--port', '0', '--no-dns', ...args]);
      expect(usage.code, args.join(' ')).toBe(2);
      expect(usage.stderr).toMatch(/^mailvet: .*(--data|--store|--retention-days|--lease-seconds)/);
    }
  }, 60_000);
});

describe('GET /healthz with a durable store', () => {
  it('reports the store up, and 503 while it does not answer', async () => {
    const db = await sharedPglite();
    const schema = testSchema();
    const inner = await pgliteStore({ db, schema });
    let down = false;
    const store: DurableJobStore = Object.assign(Object.create(inner) as DurableJobStore, {
      ping: () => (down ? Promise.reject(new Error('connection lost')) : inner.ping()),
    });
    const jobs = new BulkJobManager({
      store,
      verifier: { verify: () => Promise.reject(new Error('unused')) },
    });
    const handler = createHandler({ apiKeys: ['k'], jobs });
    try {
      const up = await handler(new Request('http://localhost/healthz'));
      expect(up.status).toBe(200);
      expect(await up.json()).toEqual({ status: 'ok', store: 'up' });
      down = true;
      const unavailable = await handler(new Request('http://localhost/healthz'));
      expect(unavailable.status).toBe(503);
      expect(await unavailable.json()).toMatchObject({ error: { code: 'service_unavailable' } });
    } finally {
      await jobs.close();
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it.skipIf(POSTGRES_URL === undefined)('is up on the PostgreSQL server', async () => {
    const schema = testSchema();
    const jobs = new BulkJobManager({
      store: await postgresStore({ connectionString: POSTGRES_URL!, schema }),
      verifier: { verify: () => Promise.reject(new Error('unused')) },
    });
    try {
      expect(await jobs.storeHealth()).toBe('up');
    } finally {
      await jobs.close();
      await dropPostgresSchema(schema);
    }
  });
});
