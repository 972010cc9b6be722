/**
 * A PostgreSQL server of one test's own (Debian's binaries under /usr/lib/postgresql/<version>/bin) on 127.0.0.1
 * and a free port, with its data and unix socket in a temporary directory and fsync off. `crash()` stops it the
 * way a crash would (an immediate shutdown: no checkpoint, connections cut), `start()` brings it back on the same
 * port and data (crash recovery), `stop()` ends it and removes its directory. PostgreSQL refuses to run as root:
 * under root the server runs as the `postgres` user (the directory is handed to it).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/** The newest Debian PostgreSQL's bin directory, or `undefined` when none is installed. */
function binDirectory(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length === 0 ? undefined : join(root, versions[0]!, 'bin');
}

const BIN = binDirectory();

/** Who runs the server: ourselves, or the `postgres` user when we are root. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const found = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const group = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (found.status !== 0 || group.status !== 0) return undefined;
  return { uid: Number(found.stdout.trim()), gid: Number(group.stdout.trim()) };
}

const USER = runAs();

/** True when a private PostgreSQL can be run here (tests that need one are skipped otherwise). */
export const HAS_POSTGRES_BINARIES = BIN !== undefined && (process.getuid?.() !== 0 || USER !== undefined);

/** A private PostgreSQL server. */
export interface PrivatePostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication). */
  readonly url: string;
  /** Immediate shutdown, like a crash: every connection is cut, the port closes. */
  crash(): Promise<void>;
  /** Starts the server again on the same port and data, and waits until it answers. */
  start(): Promise<void>;
  /** Ends the server and removes its directory. */
  stop(): Promise<void>;
}

/** Initialises a data directory, starts a server on it and waits until it answers. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  if (!HAS_POSTGRES_BINARIES) throw new Error('no PostgreSQL binaries here');
  const dir = mkdtempSync(join(tmpdir(), 'mailvet-pg-'));
  if (USER !== undefined) chownSync(dir, USER.uid, USER.gid);
  const data = join(dir, 'data');
  const ids = USER === undefined ? {} : { uid: USER.uid, gid: USER.gid };
  const init = spawnSync(
    join(BIN!, 'initdb'),
    ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'],
    { ...ids, encoding: 'utf8', cwd: dir },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  let child: ChildProcess | undefined;

  const start = async () => {
    const started = spawn(
      join(BIN!, 'postgres'),
      [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        'max_connections=50',
      ],
      { ...ids, cwd: dir, stdio: 'ignore' },
    );
    child = started;
    await waitFor(
      async () => {
        const client = new pg.Client({ connectionString: url });
        client.on('error', () => {});
        const answered = await client
          .connect()
          .then(() => client.query('SELECT 1'))
          .then(() => true)
          .catch(() => false);
        await client.end().catch(() => {});
        if (!answered && started.exitCode !== null) {
          throw new Error(`postgres on port ${port} exited (${started.exitCode})`);
        }
        return answered;
      },
      { what: `postgres on port ${port} to start`, intervalMs: 20 },
    );
  };
  /** SIGQUIT is PostgreSQL's immediate shutdown. */
  const crash = async () => {
    const running = child;
    if (running === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGQUIT');
    await exited;
  };
  await start();
  return {
    url,
    crash,
    start,
    async stop() {
      await crash();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
