/**
 * The fleet's {@link LimitStore} on Redis (`mailvet serve --redis`): each key's daily quota and request-rate bucket,
 * each changed by one Lua script, so that every API node of the fleet counts against the same numbers atomically.
 * @module
 */
import type { LimitStore } from '../bulk/usage.js';
import { type FleetOptions, fleetKeys, loadQueue } from './connection.js';

/** A {@link LimitStore} on Redis, with the connection it opened. */
export interface RedisLimitStore extends LimitStore {
  /** Closes the Redis connection. Idempotent. */
  close(): Promise<void>;
}

/** How long a day's quota counter lives in Redis: two days, so that today's and yesterday's can be read. */
const QUOTA_TTL_MS = 2 * 86_400_000;

const RESERVE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local units = tonumber(ARGV[1])
if used + units > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], units)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, used}`;

const RELEASE = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
if used <= 0 then return 0 end
local left = math.max(0, used - tonumber(ARGV[1]))
redis.call('SET', KEYS[1], left, 'KEEPTTL')
return left`;

const TAKE = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local held = redis.call('HMGET', KEYS[1], 't', 'u')
local tokens = tonumber(held[1])
local updated = tonumber(held[2])
if tokens == nil or updated == nil then tokens = burst; updated = now end
tokens = math.min(burst, tokens + math.max(0, now - updated) * rate / 1000)
if now > updated then updated = now end
local allowed = 0
if tokens >= 1 then tokens = tokens - 1; allowed = 1 end
redis.call('HSET', KEYS[1], 't', tostring(tokens), 'u', tostring(updated))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
return {allowed, tostring(tokens)}`;

/**
 * Connects to the fleet's Redis (the `connection` and `prefix` of its API nodes and workers) and returns the limit
 * counters kept there, under `<prefix>:limits:`. Needs the optional peer dependency `ioredis`.
 * @example
 * const limits = await redisLimits({ connection: 'redis://127.0.0.1:6379' });
 * await limits.reserveQuota('key-1', '2026-01-01', 10, 1000); // { granted: true, used: 10 }
 * await limits.close();
 */
export async function redisLimits(options: FleetOptions): Promise<RedisLimitStore> {
  const keys = fleetKeys(options);
  const { redis } = await loadQueue();
  // Commands fail after one retry instead of waiting for Redis for ever: a request then gets a 503.
  const client = redis({ ...keys.redis, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined); // reconnects by itself; commands report the failure
  const quotaKey = (key: string, day: string): string => `${keys.prefix}:limits:quota:${day}:${key}`;
  let closed = false;

  return {
    async reserveQuota(key, day, units, limit) {
      const [granted, used] = (await client.eval(
        RESERVE,
        1,
        quotaKey(key, day),
        units,
        limit,
        QUOTA_TTL_MS,
      )) as [number, number];
      return { granted: granted === 1, used: Number(used) };
    },
    async releaseQuota(key, day, units) {
      await client.eval(RELEASE, 1, quotaKey(key, day), units);
    },
    async quotaUsed(key, day) {
      return Number((await client.get(quotaKey(key, day))) ?? 0);
    },
    async takeToken(key, ratePerSecond, burst, nowMs) {
      const [allowed, tokens] = (await client.eval(
        TAKE,
        1,
        `${keys.prefix}:limits:rate:${key}`,
        ratePerSecond,
        burst,
        Math.floor(nowMs),
      )) as [number, string];
      return { allowed: allowed === 1, tokens: Number(tokens) };
    },
    async close() {
      if (closed) return;
      closed = true;
      await client.quit().catch(() => client.disconnect());
    },
  };
}
