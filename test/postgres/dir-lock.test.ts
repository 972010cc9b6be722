/**
 * One process per PGlite data directory: a second `pgliteStore` on the directory (in this process or another,
 * `mailvet serve --data` included) is refused naming the holder, before PGlite touches a file; the kernel frees
 * the lock when the holder dies, so a `kill -9` does not stop the next start.
 */
import { spawn } from 'node:child_process';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockAddress, lockDataDir, parseHolder, StoreLockedError } from '../../src/postgres/dir-lock.js';
import { pgliteStore } from '../../src/postgres/index.js';
import { tempDir } from '../cli/support.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { start } from '../support/mailvet-bin.js';
import { pgliteDataDir } from '../support/pglite-template.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS);

let dir: Awaited<ReturnType<typeof tempDir>>;
beforeAll(async () => {
  dir = await tempDir('mailvet-dir-lock-');
});
afterAll(async () => {
  await dir.remove();
});

/** Starts `mailvet serve --data dataDir`; resolves once it listens, or rejects with its output if it exits. */
async function serve(dataDir: string) {
  const started = start(['serve', '--port', '0', '--no-dns', '--no-console', '--data', dataDir], {
    env: { MAILVET_API_KEYS: 'k' },
  });
  await new Promise<void>((resolve, reject) => {
    const listening = () => {
      if (started.stdout().includes('listening on')) resolve();
    };
    started.child.stdout.on('data', listening);
    started.exited.then((exit) => reject(new Error(`mailvet serve exited ${exit.code}: ${exit.stderr}`)));
  });
  return started;
}

describe('the lock of a data directory', () => {
  it('refuses a second pgliteStore in the same process, naming this process, until the first closes', async () => {
    const dataDir = await pgliteDataDir(dir.file('in-process')); // initdb done: the lock is the subject
    const first = await pgliteStore({ dataDir });
    try {
      const refused = await pgliteStore({ dataDir }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreLockedError);
      expect(refused).toMatchObject({
        code: 'store_locked',
        dataDir,
        holder: { pid: process.pid, host: hostname(), since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
        message: expect.stringContaining(
          `in use by another mailvet (pid ${process.pid} on ${hostname()}, since`,
        ),
      });
      expect(await first.listJobs()).toEqual([]); // the refused open did not disturb the first
    } finally {
      await first.close?.();
    }
    const again = await pgliteStore({ dataDir });
    await again.close?.();
  }, 60_000);

  it('is the same lock through another path to the directory', async () => {
    const dataDir = dir.file('two-paths');
    await mkdir(dataDir, { mode: 0o700 });
    const lock = await lockDataDir(dataDir, await stat(dataDir));
    try {
      await expect(pgliteStore({ dataDir: `${dir.path}/./two-paths/` })).rejects.toMatchObject({
        code: 'store_locked',
      });
    } finally {
      await lock.release();
    }
  });

  it('is taken before PGlite touches the directory', async () => {
    const dataDir = dir.file('untouched');
    await mkdir(dataDir, { mode: 0o700 });
    const lock = await lockDataDir(dataDir, await stat(dataDir));
    try {
      await expect(pgliteStore({ dataDir })).rejects.toBeInstanceOf(StoreLockedError);
      expect(await readdir(dataDir)).toEqual([]); // no initdb ran
    } finally {
      await lock.release();
    }
  });

  it('says it does not know the holder when the name is held by something that does not answer', async () => {
    const dataDir = dir.file('squatted');
    await mkdir(dataDir, { mode: 0o700 });
    const found = await stat(dataDir);
    const silent = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(lockAddress(found.dev, found.ino), resolve));
    try {
      await expect(pgliteStore({ dataDir })).rejects.toMatchObject({
        code: 'store_locked',
        holder: undefined,
        message: expect.stringContaining('in use by another process (it did not say which)'),
      });
    } finally {
      silent.close();
    }
  });

  it('as a socket file (macOS, BSD): refused while held, and taken over from a holder killed with -9', async () => {
    const dataDir = dir.file('socket-file');
    await mkdir(dataDir, { mode: 0o700 });
    const found = await stat(dataDir);
    const address = lockAddress(found.dev, found.ino, 'darwin');
    expect(address).toMatch(/mailvet-store-[0-9a-f]{32}\.sock$/);
    const first = await lockDataDir(dataDir, found, 'darwin');
    await expect(lockDataDir(dataDir, found, 'darwin')).rejects.toMatchObject({
      code: 'store_locked',
      holder: { pid: process.pid },
    });
    await first.release();
    // A holder that dies without cleaning up leaves its socket file: the next opener finds it refused and removes it.
    const holder = spawn(process.execPath, [
      '-e',
      `require('node:net').createServer().listen(${JSON.stringify(address)}, () => console.log('up'))`,
    ]);
    await new Promise((resolve) => holder.stdout.once('data', resolve));
    await expect(lockDataDir(dataDir, found, 'darwin')).rejects.toMatchObject({ holder: undefined });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    expect((await stat(address)).isSocket()).toBe(true); // left behind
    const next = await lockDataDir(dataDir, found, 'darwin');
    await next.release();
  }, 20_000);

  it('names the lock after the platform', () => {
    expect(lockAddress(1, 2, 'linux')).toMatch(/^\0mailvet-store-[0-9a-f]{32}$/);
    expect(lockAddress(1, 2, 'win32')).toMatch(/^\\\\\.\\pipe\\mailvet-store-[0-9a-f]{32}$/);
    expect(lockAddress(1, 2, 'linux')).not.toBe(lockAddress(1, 3, 'linux'));
  });

  it('reads only a well-formed holder answer', () => {
    expect(parseHolder('{"pid":12,"host":"h","since":"2026-01-01T00:00:00.000Z"}')).toEqual({
      pid: 12,
      host: 'h',
      since: '2026-01-01T00:00:00.000Z',
    });
    for (const text of ['', 'garbage', 'null', '{"pid":"12","host":"h","since":"s"}', '{"pid":1.5}']) {
      expect(parseHolder(text), text).toBeUndefined();
    }
  });

  it('mailvet serve: a second one on the directory exits 3 naming the first; after kill -9 of the first a new one starts', async () => {
    const dataDir = await pgliteDataDir(dir.file('served'));
    const first = await serve(dataDir);
    let firstKilled = false;
    try {
      const second = start(['serve', '--port', '0', '--no-dns', '--no-console', '--data', dataDir], {
        env: { MAILVET_API_KEYS: 'k' },
      });
      second.child.stdin.end();
      const refused = await second.exited;
      expect(refused.code).toBe(3);
      expect(refused.stderr.trim().split('\n')).toEqual([
        `mailvet: the data directory ${dataDir} is in use by another mailvet (pid ${first.child.pid} on ${hostname()}, since ${
          /since (\S+)\)/.exec(refused.stderr)?.[1]
        }): one process at a time may open it (stop the other first)`,
      ]);
      expect(refused.stdout).not.toContain('listening');

      first.child.kill('SIGKILL');
      await first.exited;
      firstKilled = true;
      const third = await serve(dataDir); // the kernel released the lock with the process
      third.child.kill('SIGTERM');
      expect((await third.exited).code).toBe(0);
    } finally {
      if (!firstKilled) {
        first.child.kill('SIGKILL');
        await first.exited;
      }
    }
  }, 90_000);
});
