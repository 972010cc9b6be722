/**
 * The PGlite data directory before PGlite sees it: created if missing, locked for this process, and refused when
 * it is not a PostgreSQL data directory.
 * @module
 */
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { type DirectoryLock, lockDataDir } from './dir-lock.js';
import { openError } from './open-error.js';

/**
 * Creates `dataDir` if it is missing, takes its lock ({@link lockDataDir}: throws `store_locked` when another
 * store holds it), then refuses a path that is a file or a non-empty directory without `PG_VERSION` (PGlite would
 * fail slowly and obscurely on it). `what` names the store in messages. The caller releases the lock.
 */
export async function claimDataDir(dataDir: string, what: string): Promise<DirectoryLock> {
  let identity: { dev: number; ino: number };
  try {
    await mkdir(dataDir, { recursive: true });
    const found = await stat(dataDir);
    if (!found.isDirectory()) throw openError(what, new Error('the path is not a directory'));
    identity = found;
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST' || (error as { code?: unknown }).code === 'ENOTDIR') {
      throw openError(what, new Error('the path is not a directory', { cause: error }));
    }
    throw openError(what, error);
  }
  const lock = await lockDataDir(dataDir, identity);
  try {
    const entries = await readdir(dataDir);
    if (entries.length > 0 && !entries.includes('PG_VERSION')) {
      throw new Error(
        `the directory is not empty and holds no PostgreSQL data (${join(dataDir, 'PG_VERSION')} is missing)`,
      );
    }
  } catch (error) {
    await lock.release();
    throw openError(what, error);
  }
  return lock;
}
