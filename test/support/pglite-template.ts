/**
 * PGlite data directories that skip initdb: one directory is initialised once per checkout and PGlite version
 * (initdb costs seconds of CPU, more beside other tests), then copied for each test that starts `mailvet serve
 * --data DIR` or a store on a directory of its own. Only for tests whose subject is not a store's first start in an
 * empty directory: those keep an empty one. The copy holds what initdb wrote and nothing of mailvet's (no schema,
 * no migration), so mailvet's own first open of the store still runs on it; the directory's lock is a socket named
 * after the copy's own inode, never a file in it.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'mailvet');
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
/** The template of this PGlite version: complete once it exists (it is renamed into place whole). */
const TEMPLATE = join(CACHE, `pglite-template-${VERSION}`);

let ready: Promise<void> | undefined;

/** Whether the template is in place. */
function templateExists(): boolean {
  return existsSync(join(TEMPLATE, 'PG_VERSION'));
}

/**
 * Makes the template unless it exists: initdb in a directory of this process's own, renamed into place. Processes
 * that race each make one; the first rename wins and the others remove theirs.
 */
async function makeTemplate(): Promise<void> {
  if (templateExists()) return;
  await mkdir(CACHE, { recursive: true });
  const own = await mkdtemp(`${TEMPLATE}.partial-`); // mode 0700, as a store's directory must be
  try {
    const db = await PGlite.create(own);
    await db.close();
    await rename(own, TEMPLATE);
  } catch (error) {
    await rm(own, { recursive: true, force: true });
    const lost = ['ENOTEMPTY', 'EEXIST'].includes((error as NodeJS.ErrnoException).code ?? '');
    if (!lost || !templateExists()) throw error;
  }
}

/** How long {@link pgliteDataDir}'s first call may take: initdb on two busy cores. */
export const PGLITE_TEMPLATE_MS = 120_000;

/**
 * Makes `target` (missing, or an empty directory) a PGlite data directory that initdb has already run in, mode 0700,
 * and returns it. The first call of a checkout runs initdb once: call it in `beforeAll` with
 * {@link PGLITE_TEMPLATE_MS}, or in a test whose timeout allows for it.
 */
export async function pgliteDataDir(target: string): Promise<string> {
  ready ??= makeTemplate();
  try {
    await ready;
  } catch (error) {
    ready = undefined;
    throw error;
  }
  await cp(TEMPLATE, target, { recursive: true });
  await chmod(target, 0o700);
  return target;
}
