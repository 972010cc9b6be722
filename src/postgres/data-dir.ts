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
 * Why a data directory with this `mode` is refused, or `undefined` when only its owner may enter it. PGlite
 * creates its files readable and writable by everyone (0666, whatever the umask), so, as for PostgreSQL, the
 * directory is what keeps other users out: group and others must have no access to it. Windows has no such
 * mode bits: nothing is refused there.
 */
export function permissionRefusal(
  dataDir: string,
  mode: number,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  if (platform === 'win32' || (mode & 0o077) === 0) return undefined;
  const octal = (mode & 0o777).toString(8).padStart(4, '0');
  return `the directory has invalid permissions (${octal}): group and others must have no access, as it holds every job's addresses and results; run chmod 700 ${dataDir}`;
}

/**
 * Creates `dataDir` (mode 0700) if it is missing, refuses one that group or others may access
 * ({@link permissionRefusal}), takes its lock ({@link lockDataDir}: throws `store_locked` when another
 * store holds it), then refuses a path that is a file or a non-empty directory without `PG_VERSION` (PGlite would
 * fail slowly and obscurely on it). `what` names the store in messages. The caller releases the lock.
 */
export async function claimDataDir(dataDir: string, what: string): Promise<DirectoryLock> {
  let identity: { dev: number; ino: number };
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 });
    const found = await stat(dataDir);
    if (!found.isDirectory()) throw openError(what, new Error('the path is not a directory'));
    const refusal = permissionRefusal(dataDir, found.mode);
    if (refusal !== undefined) throw openError(what, new Error(refusal));
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
