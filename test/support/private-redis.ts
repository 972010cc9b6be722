/**
 * A Redis server of one test's own (`redis-server` from the machine's packages) on 127.0.0.1 and a free port,
 * that keeps nothing on disk: killing it and starting another on the same port is a Redis restarted empty.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/** True when `redis-server` can be run here (tests that need it are skipped otherwise). */
export const HAS_REDIS_SERVER = spawnSync('redis-server', ['--version']).status === 0;

/** A private Redis: its URL, `restartEmpty()` (SIGKILL, then a new empty server on the same port), `stop()`. */
export interface PrivateRedis {
  readonly url: string;
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts a private Redis and waits until it answers. With `password`, the server wants it (`requirepass`), and
 * `url` carries none: a client must add it.
 */
export async function startPrivateRedis(options: { password?: string } = {}): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const auth = options.password === undefined ? [] : ['--requirepass', options.password];
  let child: ChildProcess;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...auth],
      { stdio: 'ignore' },
    );
    await waitFor(
      async () => {
        const client = new Redis(url, {
          lazyConnect: true,
          retryStrategy: () => null,
          ...(options.password === undefined ? {} : { password: options.password }),
        });
        client.on('error', () => {}); // not up yet: connect() rejects too
        const answered = await client
          .connect()
          .then(() => client.ping())
          .catch(() => undefined);
        client.disconnect();
        return answered === 'PONG';
      },
      { what: `redis-server on port ${port} to start`, intervalMs: 20 },
    );
  };
  const kill = async () => {
    if (child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url,
    async restartEmpty() {
      await kill();
      await start();
    },
    stop: kill,
  };
}
