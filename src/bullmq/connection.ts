/**
 * The fleet's Redis: connection options, key names, and loading the optional `bullmq` and `ioredis` packages.
 * @module
 */
import type { RedisOptions } from 'bullmq';
import type { RedisOptions as IoRedisOptions, Redis } from 'ioredis';
import { MailvetError, OptionsError } from '../errors.js';

/**
 * Where the fleet's Redis is: a `redis://` or `rediss://` URL (`redis://:password@host:6379/0`), or ioredis
 * options (`{ host, port, password, db, tls }`).
 */
export type FleetConnection = string | RedisOptions;

/** Options shared by the runner and the workers: which Redis, and which keys in it. */
export interface FleetOptions {
  /** The Redis of the queue. */
  readonly connection: FleetConnection;
  /**
   * Prefix of every Redis key of the fleet (BullMQ's `prefix` and mailvet's own keys): API nodes and workers of
   * one fleet use the same; several fleets can share a Redis with different ones. 1-64 characters of
   * `A-Z a-z 0-9 _ - .`. @default 'mailvet'
   */
  readonly prefix?: string;
}

/** The fleet's validated connection and key names. */
export interface FleetKeys {
  /** ioredis options (BullMQ makes its own connections from them). */
  readonly redis: RedisOptions;
  readonly prefix: string;
  /** The queue of chunks every worker takes from. */
  readonly queue: string;
  /** Pub/sub channel of job events (`progress`, `complete`). */
  readonly events: string;
  /** Key whose absence tells an API node that Redis lost its data (the queue is rebuilt from the database). */
  readonly marker: string;
  /** Key prefix of workers' heartbeats (`<workers><worker id>`, with a TTL). */
  readonly workers: string;
  /**
   * Sorted set of the workers with a heartbeat: worker ids scored with when their heartbeat key expires, in
   * milliseconds on Redis's clock (see heartbeat.ts). Not under {@link FleetKeys.workers}, so that nothing counting the
   * heartbeat keys by their prefix counts it.
   */
  readonly workersLive: string;
  /** Key prefix of webhook claims (`<webhookClaims><job id>:<event>`: the API node that delivers it). */
  readonly webhookClaims: string;
  /**
   * Key set once the chunks queued by a version that kept no chunk index were indexed (see earlier-chunks.ts);
   * its value is when.
   */
  readonly chunksIndexed: string;
  /** The index of job `jobId`'s chunks: a SET of `<queue>:<chunk id>` (see chunk-index.ts). */
  jobChunks(jobId: string): string;
  /** The verification pace workers measured on job `jobId`, in milliseconds per address (see pace.ts). */
  jobPace(jobId: string): string;
  /** The queue of greylisting retries of one worker (only that worker takes from it). */
  retryQueue(workerId: string): string;
}

const PREFIX_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** Validates the connection and prefix and names the fleet's keys. */
export function fleetKeys(options: FleetOptions): FleetKeys {
  const prefix = options.prefix ?? 'mailvet';
  if (typeof prefix !== 'string' || !PREFIX_PATTERN.test(prefix)) {
    throw new OptionsError('prefix', 'must be 1-64 characters of A-Z a-z 0-9 _ - .');
  }
  return {
    redis: redisOptions(options.connection),
    prefix,
    queue: 'verify',
    events: `${prefix}:fleet:events`,
    marker: `${prefix}:fleet:marker`,
    workers: `${prefix}:fleet:workers:`,
    workersLive: `${prefix}:fleet:workers-live`,
    webhookClaims: `${prefix}:fleet:webhook:`,
    chunksIndexed: `${prefix}:fleet:chunks-indexed`,
    jobChunks: (jobId) => `${prefix}:fleet:chunks:${jobId}`,
    jobPace: (jobId) => `${prefix}:fleet:pace:${jobId}`,
    retryQueue: (workerId) => `verify-retry-${workerId}`,
  };
}

function redisOptions(connection: unknown): RedisOptions {
  // BullMQ's blocking connections need maxRetriesPerRequest: null.
  const base: RedisOptions = { maxRetriesPerRequest: null, lazyConnect: false };
  if (typeof connection === 'object' && connection !== null && !Array.isArray(connection)) {
    return { ...(connection as RedisOptions), ...base };
  }
  if (typeof connection !== 'string') {
    throw new OptionsError('connection', 'must be a redis:// URL or ioredis options');
  }
  let url: URL;
  try {
    url = new URL(connection);
  } catch {
    throw new OptionsError('connection', 'must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new OptionsError('connection', 'must be a redis:// or rediss:// URL');
  }
  const db = url.pathname.replace(/^\//, '');
  if (db !== '' && !/^\d{1,2}$/.test(db)) throw new OptionsError('connection', 'database must be 0-99');
  return {
    ...base,
    host: url.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: url.port === '' ? 6379 : Number(url.port),
    ...(url.username === '' ? {} : { username: decodeURIComponent(url.username) }),
    ...(url.password === '' ? {} : { password: decodeURIComponent(url.password) }),
    ...(db === '' ? {} : { db: Number(db) }),
    ...(url.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}

/**
 * The Redis of `options` for messages: `redis://host:port/db` (`rediss://` with TLS), a user name shown, a password
 * never (`:***@`).
 * @example
 * redisPlace({ host: '10.0.0.5', port: 6379, password: 's3cret', db: 2 }); // 'redis://:***@10.0.0.5:6379/2'
 */
export function redisPlace(options: RedisOptions): string {
  const scheme = options.tls === undefined ? 'redis' : 'rediss';
  const user = options.username ?? '';
  const secret = options.password === undefined || options.password === '' ? '' : ':***';
  const credentials = user === '' && secret === '' ? '' : `${encodeURIComponent(user)}${secret}@`;
  const host = options.host ?? '127.0.0.1';
  const shownHost = host.includes(':') ? `[${host}]` : host;
  const db = options.db === undefined || options.db === 0 ? '' : `/${options.db}`;
  return `${scheme}://${credentials}${shownHost}:${options.port ?? 6379}${db}`;
}

/** Network failures Node reports by `code`, in words. */
const NETWORK_PROBLEMS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing listens at that address (is Redis running?)',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'the connection timed out (a firewall, or rediss:// to a server without TLS?)',
  ECONNRESET: 'the server closed the connection (redis:// to a server that wants TLS?)',
  EHOSTUNREACH: 'the host cannot be reached',
  ENETUNREACH: 'the network cannot be reached',
  ESILENT: 'the server took the connection but does not answer (is this the Redis port? rediss:// for TLS?)',
};

/** Redis error replies by their first word, in words. */
const REPLY_PROBLEMS: Readonly<Record<string, string>> = {
  NOAUTH: 'Redis wants a password: put it in the URL (redis://:password@host:6379)',
  WRONGPASS: 'the user name or password was refused',
  NOPERM: 'the user may not run the commands the fleet needs (Redis ACL)',
  LOADING: 'Redis is loading its data set; retry in a moment',
  MASTERDOWN: 'the replica has lost its primary',
  READONLY: 'this Redis is a read-only replica: point the URL at the primary',
};

/**
 * What went wrong talking to Redis, in words, from what a command threw and the client's last `error` event (a
 * command that ran out of retries says only that, the connection error says why). Never a password: Redis and
 * Node do not put it in these messages, and the library's own internals (retry counters) are left out.
 * @example
 * redisProblem(maxRetriesError, Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
 * // 'nothing listens at that address (is Redis running?): connect ECONNREFUSED 127.0.0.1:1'
 */
export function redisProblem(error: unknown, connectionError?: unknown): string {
  for (const candidate of [connectionError, error]) {
    if (!(candidate instanceof Error)) continue;
    const code = String((candidate as { code?: unknown }).code ?? '');
    const network = NETWORK_PROBLEMS[code];
    if (network !== undefined) return `${network}: ${candidate.message.slice(0, 200)}`;
    if (candidate.name === 'ReplyError') {
      const word = candidate.message.split(' ')[0] ?? '';
      const reply = candidate.message.slice(0, 200);
      return REPLY_PROBLEMS[word] === undefined
        ? `Redis answered ${reply}`
        : `${REPLY_PROBLEMS[word]} (${reply})`;
    }
    if (candidate.name === 'ParserError') {
      return 'the server does not speak the Redis protocol (is this the Redis port? rediss:// for TLS?)';
    }
  }
  return 'Redis did not answer';
}

/**
 * The `queue_unavailable` error of a Redis that cannot be used: names the Redis (password hidden) and says what is
 * wrong in words (refused, a wrong password, a missing permission, not Redis, a timeout), with `error` as its cause.
 * @example
 * queueUnavailable(keys.redis, error, lastError()).message;
 * // "cannot connect to the queue's Redis (redis://:***@127.0.0.1:1): nothing listens at that address (is Redis running?): ..."
 */
export function queueUnavailable(
  options: RedisOptions,
  error: unknown,
  connectionError?: unknown,
): MailvetError {
  return new MailvetError(
    'queue_unavailable',
    `cannot connect to the queue's Redis (${redisPlace(options)}): ${redisProblem(error, connectionError)}`,
    { cause: error },
  );
}

/** Anything with ioredis' `error` event. */
interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Listens to `client`'s `error` events (which would otherwise crash the process; the client reconnects and its
 * commands report) and returns a function giving the latest, for {@link queueUnavailable}.
 */
export function lastErrorOf(client: ErrorEmitter): () => Error | undefined {
  let last: Error | undefined;
  client.on('error', (error) => {
    last = error;
  });
  return () => last;
}

/**
 * Connects to the fleet's Redis, asks PING, and disconnects: resolves when Redis answers within `timeoutMs`,
 * else throws {@link queueUnavailable}. For a process that wants to say clearly why it cannot start before it
 * starts (a server that accepts the connection and never answers would otherwise keep it waiting for ever).
 */
export async function checkRedis(options: FleetOptions, timeoutMs = 10_000): Promise<void> {
  const keys = fleetKeys(options);
  const { redis } = await loadQueue();
  const client = redis({ ...keys.redis, maxRetriesPerRequest: 1, commandTimeout: timeoutMs });
  const lastError = lastErrorOf(client);
  try {
    await client.ping();
  } catch (error) {
    const silent = error instanceof Error && error.message === 'Command timed out';
    const cause = silent ? new RedisSilentError(timeoutMs) : error;
    throw queueUnavailable(keys.redis, cause, silent ? undefined : lastError());
  } finally {
    client.disconnect();
  }
}

/** A PING on a Redis connection of its own, for metrics of the fleet's Redis. */
export interface RedisPinger {
  /** Resolves when Redis answers PING; rejects when it fails or does not answer within the timeout. */
  ping(): Promise<void>;
  /** Closes the connection. */
  close(): void;
}

/**
 * Opens a Redis connection of its own for PINGs (the metrics' Redis round trip): each PING fails after
 * `timeoutMs` rather than wait; a lost connection is retried by ioredis, the PINGs meanwhile fail.
 */
export async function redisPinger(options: FleetOptions, timeoutMs = 2000): Promise<RedisPinger> {
  const keys = fleetKeys(options);
  const { redis } = await loadQueue();
  const client = redis({ ...keys.redis, maxRetriesPerRequest: 1, commandTimeout: timeoutMs });
  client.on('error', () => {}); // a PING reports it
  return {
    async ping() {
      await client.ping();
    },
    close: () => client.disconnect(),
  };
}

/** A Redis that took the connection but did not answer PING in time. */
class RedisSilentError extends Error {
  override name = 'RedisSilentError';
  readonly code = 'ESILENT';

  constructor(timeoutMs: number) {
    super(`no answer to PING within ${timeoutMs} ms`);
  }
}

/** `bullmq`, loaded on first use (an optional peer dependency). */
export type BullMq = typeof import('bullmq');

/** What {@link loadQueue} gives: BullMQ, and a maker of plain Redis clients (pub/sub, heartbeats). */
export interface QueueModules {
  readonly bullmq: BullMq;
  /** A new ioredis client on `options`. */
  redis(options: RedisOptions): Redis;
}

/** Loads `bullmq` and `ioredis`; throws `queue_unavailable` naming the missing package. */
export async function loadQueue(): Promise<QueueModules> {
  let bullmq: BullMq;
  let RedisClass: typeof Redis;
  try {
    bullmq = await import('bullmq');
    RedisClass = (await import('ioredis')).Redis;
  } catch (error) {
    throw new MailvetError(
      'queue_unavailable',
      'the worker fleet needs the packages bullmq and ioredis (npm install bullmq ioredis)',
      { cause: error },
    );
  }
  return { bullmq, redis: (options) => new RedisClass(options as IoRedisOptions) };
}

/** Deletes every key of the fleet under `prefix` (tests and tear-downs; never `FLUSHALL`). */
export async function deleteFleetKeys(client: Redis, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await client.del(...keys);
  } while (cursor !== '0');
  return deleted;
}
