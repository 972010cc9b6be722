/**
 * What a Redis that cannot be used is reported as: which Redis (password hidden) and what is wrong, in words,
 * against real servers on loopback (a closed port, a Redis that wants a password, a server that is not Redis).
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRedis, redisPlace, redisProblem } from '../../src/bullmq/connection.js';
import { EXIT } from '../../src/cli/io.js';
import { BUILD_TIMEOUT_MS, ensureBuiltDist } from '../support/built-dist.js';
import { freePort } from '../support/free-port.js';
import { run } from '../support/mailvet-bin.js';
import { HAS_REDIS_SERVER, type PrivateRedis, startPrivateRedis } from '../support/private-redis.js';

beforeAll(ensureBuiltDist, BUILD_TIMEOUT_MS); // the spawned bin runs dist/

/** The message `checkRedis` throws for `url`. */
async function failure(url: string): Promise<string> {
  const error = await checkRedis({ connection: url }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: 'queue_unavailable' });
  return (error as Error).message;
}

describe('redisPlace and redisProblem', () => {
  it('shows where Redis is without its password', () => {
    expect(redisPlace({ host: '10.0.0.5', port: 6380, password: 's3cret', db: 2 })).toBe(
      'redis://:***@10.0.0.5:6380/2',
    );
    expect(redisPlace({ host: '::1', username: 'fleet', password: 'pw', tls: {} })).toBe(
      'rediss://fleet:***@[::1]:6379',
    );
    expect(redisPlace({})).toBe('redis://127.0.0.1:6379');
  });

  it('says what is wrong in words, and never repeats the retry counter of the library', () => {
    const maxRetries = Object.assign(new Error('Reached the max retries per request limit (which is 1).'), {
      name: 'MaxRetriesPerRequestError',
    });
    const network = (code: string) => Object.assign(new Error(`connect ${code} 10.0.0.5:6379`), { code });
    const reply = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
    expect(redisProblem(maxRetries, network('ENOTFOUND'))).toBe(
      'the host name does not resolve: connect ENOTFOUND 10.0.0.5:6379',
    );
    expect(redisProblem(maxRetries, network('ETIMEDOUT'))).toMatch(/^the connection timed out \(a firewall/);
    expect(redisProblem(reply('NOPERM this user has no permissions'))).toBe(
      'the user may not run the commands the fleet needs (Redis ACL) (NOPERM this user has no permissions)',
    );
    expect(redisProblem(reply('ERR something new'))).toBe('Redis answered ERR something new');
    expect(redisProblem(maxRetries)).toBe('Redis did not answer');
    expect(redisProblem(maxRetries, network('ECONNREFUSED'))).not.toContain('max retries');
  });
});

describe('checkRedis against loopback servers', () => {
  let locked: PrivateRedis | undefined;
  let notRedis: Server;
  let notRedisPort: number;

  beforeAll(async () => {
    if (HAS_REDIS_SERVER) locked = await startPrivateRedis({ password: 'right-one' });
    notRedis = createServer((socket) =>
      socket.end('HTTP/1.1 400 Bad Request\r\n\r\n', () => socket.destroy()),
    );
    await new Promise<void>((resolve) => notRedis.listen(0, '127.0.0.1', resolve));
    notRedisPort = (notRedis.address() as { port: number }).port;
  });

  afterAll(async () => {
    await locked?.stop();
    await new Promise((resolve) => notRedis.close(resolve));
  });

  it('names a closed port and what it means, the password hidden', async () => {
    const port = await freePort();
    expect(await failure(`redis://:s3cret@127.0.0.1:${port}/1`)).toBe(
      `cannot connect to the queue's Redis (redis://:***@127.0.0.1:${port}/1): nothing listens at that address (is Redis running?): connect ECONNREFUSED 127.0.0.1:${port}`,
    );
  });

  it.skipIf(!HAS_REDIS_SERVER)('tells a missing password from a refused one', async () => {
    const { port } = new URL(locked!.url);
    expect(await failure(`redis://127.0.0.1:${port}`)).toBe(
      `cannot connect to the queue's Redis (redis://127.0.0.1:${port}): Redis wants a password: put it in the URL (redis://:password@host:6379) (NOAUTH Authentication required.)`,
    );
    const refused = await failure(`redis://:wrong-one@127.0.0.1:${port}`);
    expect(refused).toBe(
      `cannot connect to the queue's Redis (redis://:***@127.0.0.1:${port}): the user name or password was refused (WRONGPASS invalid username-password pair or user is disabled.)`,
    );
    await expect(checkRedis({ connection: `redis://:right-one@127.0.0.1:${port}` })).resolves.toBeUndefined();
  });

  it('says when the port is not Redis', async () => {
    expect(await failure(`redis://127.0.0.1:${notRedisPort}`)).toBe(
      `cannot connect to the queue's Redis (redis://127.0.0.1:${notRedisPort}): the server does not speak the Redis protocol (is this the Redis port? rediss:// for TLS?)`,
    );
  });

  it('stops a spawned serve --redis with that one line and exit 3, before opening the store', async () => {
    const port = await freePort();
    const result = await run(
      [
        'serve',
        '--port',
        '0',
        '--no-dns',
        '--redis',
        `redis://:s3cret@127.0.0.1:${port}`,
        '--store',
        'postgres://postgres@127.0.0.1:1/never',
      ],
      { env: { MAILVET_API_KEYS: 'k' } },
    );
    expect(result).toEqual({
      code: EXIT.io,
      stdout: '',
      stderr: `mailvet: cannot connect to the queue's Redis (redis://:***@127.0.0.1:${port}): nothing listens at that address (is Redis running?): connect ECONNREFUSED 127.0.0.1:${port}\n`,
    });
  });
});
