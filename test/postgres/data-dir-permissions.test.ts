/**
 * A PGlite data directory holds every tenant's addresses, and PGlite writes its files readable and writable by
 * everyone (0666, whatever the umask): the directory is created 0700, and one that group or others may enter is
 * refused, as PostgreSQL refuses its own.
 */
import { chmod, mkdir, readdir, stat } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { permissionRefusal } from '../../src/postgres/data-dir.js';
import { pgliteStore } from '../../src/postgres/index.js';
import { tempDir } from '../cli/support.js';
import { run } from '../support/mailvet-bin.js';

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-data-perms-');
});
afterAll(async () => {
  await dir.remove();
});

describe.skipIf(process.platform === 'win32')('permissions of the --data directory', () => {
  it('creates a missing directory (and its missing parents) 0700, so no one else can reach PGlite’s files', async () => {
    const dataDir = dir.file('new/data');
    const store = await pgliteStore({ dataDir });
    try {
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      expect((await stat(dir.file('new'))).mode & 0o777).toBe(0o700);
    } finally {
      await store.close?.();
    }
  }, 60_000);

  it('refuses a directory that group or others may enter, naming the mode and the fix, before reading it', async () => {
    for (const mode of [0o755, 0o750, 0o701, 0o710, 0o777]) {
      const dataDir = dir.file(`open-${mode.toString(8)}`);
      await mkdir(dataDir);
      await chmod(dataDir, mode);
      await expect(pgliteStore({ dataDir }), mode.toString(8)).rejects.toMatchObject({
        code: 'store_unavailable',
        message: `cannot open the job store (PGlite directory ${dataDir}): the directory has invalid permissions (0${mode.toString(8)}): group and others must have no access, as it holds every job's addresses and results; run chmod 700 ${dataDir}`,
      });
      expect(await readdir(dataDir)).toEqual([]);
      expect((await stat(dataDir)).mode & 0o777).toBe(mode); // refused, not changed behind the operator's back
    }
  });

  it('mailvet serve --data: exit 3 and one line for an open directory', async () => {
    const dataDir = dir.file('served-open');
    await mkdir(dataDir);
    await chmod(dataDir, 0o755);
    const refused = await run(['serve', '--port', '0', '--no-dns', '--data', dataDir], {
      env: { MAILVET_API_KEYS: 'k' },
    });
    expect(refused.code).toBe(3);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^mailvet: cannot open the job store .*invalid permissions \(0755\).*chmod 700/),
    ]);
  }, 30_000);

  it('decides from the mode bits alone', () => {
    expect(permissionRefusal('/d', 0o40700, 'linux')).toBeUndefined();
    expect(permissionRefusal('/d', 0o40600, 'linux')).toBeUndefined();
    expect(permissionRefusal('/d', 0o40704, 'darwin')).toContain('(0704)');
    expect(permissionRefusal('/d', 0o40020, 'linux')).toContain('(0020)');
    expect(permissionRefusal('/d', 0o40777, 'win32')).toBeUndefined();
  });
});
