/**
 * dist/ for the tests that need the built package (the spawned `mailvet` bin, the console's bundle, the exports
 * map): built on demand, only when its sources changed since the last build, once per checkout even when several
 * test files ask at the same time. Tests that import src/ never wait for a build.
 * @module
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { waitFor } from './wait-for.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'mailvet');
const STAMP = join(CACHE, 'dist-stamp');
const LOCK = join(CACHE, 'dist-build.lock');
/** What the build reads besides src/. */
const CONFIG_INPUTS = [
  'package.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build-console.mjs',
  'scripts/bundle-cli.mjs',
];
/** What the build writes that tests use; a missing one means dist/ was removed or built partly. */
const OUTPUTS = ['dist/index.js', 'dist/cli/bin.js', 'dist/console/index.html'];

/** The built console, for servers that a test starts from src/ but that should serve the real bundle. */
export const DIST_CONSOLE_DIR = join(ROOT, 'dist', 'console');

/** A hash of every input of the build: src/ (names and contents) and the build's configuration. */
export async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  const files = (await readdir(join(ROOT, 'src'), { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of [...files, ...CONFIG_INPUTS.map((name) => join(ROOT, name))]) {
    hash
      .update(file.slice(ROOT.length))
      .update('\0')
      .update(await readFile(file))
      .update('\0');
  }
  return hash.digest('hex');
}

async function isFresh(hash: string): Promise<boolean> {
  if (!OUTPUTS.every((path) => existsSync(join(ROOT, path)))) return false;
  return (await readFile(STAMP, 'utf8').catch(() => '')) === hash;
}

/** True when the process that holds the lock is gone (a run killed mid-build), so the lock may be taken over. */
async function lockIsAbandoned(): Promise<boolean> {
  const pid = Number(await readFile(join(LOCK, 'pid'), 'utf8').catch(() => 'NaN'));
  if (!Number.isInteger(pid)) return false; // being written: its holder is alive
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** Takes the build lock (an atomic mkdir), waiting while another test process builds. */
async function lock(): Promise<void> {
  await mkdir(CACHE, { recursive: true });
  await waitFor(
    async () => {
      try {
        await mkdir(LOCK);
        await writeFile(join(LOCK, 'pid'), String(process.pid));
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (await lockIsAbandoned()) await rm(LOCK, { recursive: true, force: true });
        return false;
      }
    },
    { what: 'the dist/ build lock', timeoutMs: 240_000, intervalMs: 100 },
  );
}

const run = promisify(execFile);

async function build(): Promise<void> {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    await run(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, maxBuffer: 16 << 20 });
  } catch (error) {
    // tsc still emits on type errors; `npm run typecheck` is the gate for those.
    const output = (error as { stdout?: string }).stdout ?? String(error);
    process.stderr.write(
      `built-dist: tsc reported errors; dist/ may be incomplete\n${output.slice(0, 2000)}\n`,
    );
  }
  await run(process.execPath, ['scripts/build-console.mjs'], { cwd: ROOT });
  await run(process.execPath, ['scripts/bundle-cli.mjs'], { cwd: ROOT });
}

/**
 * Makes dist/ match the sources: returns at once when it does (a hash of src/ and the build configuration equals
 * the stamp of the last build), otherwise builds it (tsc, the console bundle, the CLI bundle) under a lock shared
 * by all test processes of this checkout. Call it from `beforeAll` with a long timeout (a build takes 10-30 s on a
 * busy machine).
 */
export async function ensureBuiltDist(): Promise<void> {
  await buildWhenStale();
  distEnsured = true;
}

async function buildWhenStale(): Promise<void> {
  const hash = await sourceHash();
  if (await isFresh(hash)) return;
  await lock();
  try {
    if (await isFresh(hash)) return; // another test process built it while this one waited
    await build();
    await writeFile(STAMP, hash);
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

/**
 * Records dist/ as built from the sources as they are now, so that {@link ensureBuiltDist} finds it fresh: for
 * `.ci/run`, which builds with `npm run build` (the same steps) before the tests (test/support/stamp-dist.ts).
 * Throws when an output of the build is missing.
 */
export async function stampBuiltDist(): Promise<void> {
  const missing = OUTPUTS.filter((path) => !existsSync(join(ROOT, path)));
  if (missing.length > 0) throw new Error(`dist/ is not built: ${missing.join(', ')} missing`);
  await mkdir(CACHE, { recursive: true });
  await writeFile(STAMP, await sourceHash());
}

/** Whether {@link ensureBuiltDist} has run in this test process. */
let distEnsured = false;

/**
 * Throws unless {@link ensureBuiltDist} ran in this test process: a test that runs dist/ without it would test
 * whatever an earlier build left there, and pass or fail for the wrong reason.
 */
export function assertBuiltDist(): void {
  if (!distEnsured) {
    throw new Error(
      'this test runs dist/: call beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS) in its file first',
    );
  }
}

/** How long `beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS)` may take: a cold build on two busy cores. */
export const BUILD_TIMEOUT_MS = 240_000;
