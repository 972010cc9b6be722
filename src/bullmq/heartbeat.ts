/**
 * Workers' heartbeats, and the registry of live workers that `GET /healthz` counts without walking the keyspace.
 *
 * A worker's heartbeat is two writes made together by one script: its key `<workers><worker id>` (a JSON value, with
 * a TTL: what the clean-up checks for one worker) and its entry in the sorted set `FleetKeys.workersLive`, the
 * worker id scored with the time its heartbeat key expires. A worker that closes deletes both; one that crashed
 * stops beating, and its entry's score passes. Counting the live workers is then one `ZCOUNT` of the entries whose
 * expiry has not passed: its cost grows with the log of the entries, whatever else the Redis holds (no `SCAN`).
 *
 * Every time here is Redis's own clock (`TIME`, in milliseconds), read inside the scripts: the expiry a worker
 * writes and the "now" an API node compares it with come from the same clock, so the clocks of the hosts may
 * disagree by any amount; and Redis expires the heartbeat key on that clock too, so an entry counts while its
 * heartbeat key lives (to within a millisecond).
 *
 * Entries of crashed workers are pruned by the next heartbeat or close of any worker (until then they are still
 * in the set, but not counted); the set carries a TTL no shorter than its latest expiry, so it is gone once its
 * last worker closed, or once the last heartbeat of a fleet whose workers all crashed has expired.
 * @module
 */
import type { Redis } from 'ioredis';
import type { FleetKeys } from './connection.js';

/** Redis's clock in milliseconds, as a Lua local `now` (`TIME` is seconds and microseconds). */
const NOW = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)`;

/** Drops the entries of the live set `KEYS[2]` that have expired (after `NOW`). */
const PRUNE = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', string.format('(%.0f', now))`;

/**
 * A heartbeat: sets the heartbeat key `KEYS[1]` to `ARGV[1]` for `ARGV[2]` ms, prunes the live set `KEYS[2]`, adds
 * worker `ARGV[3]` scored with its key's expiry, and keeps the set's own TTL at least that long.
 */
const BEAT = `${NOW}${PRUNE}
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], string.format('%.0f', now + ttl), ARGV[3])
if redis.call('PTTL', KEYS[2]) < ttl then redis.call('PEXPIRE', KEYS[2], ttl) end
return 0`;

/** A worker leaves: deletes its heartbeat key `KEYS[1]` and its entry `ARGV[1]` of the live set `KEYS[2]`, prunes it. */
const LEAVE = `${NOW}${PRUNE}
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 0`;

/** The entries of the live set `KEYS[1]` whose expiry has not passed (a key expires once now is past its time). */
const COUNT_LIVE = `${NOW}
return redis.call('ZCOUNT', KEYS[1], string.format('%.0f', now), '+inf')`;

/**
 * Writes worker `id`'s heartbeat: its key, holding `value`, and its entry in the live set, both for `ttlMs`
 * milliseconds from now on Redis's clock (one script, so both or neither). Throws what Redis throws.
 */
export async function beat(
  client: Redis,
  keys: FleetKeys,
  id: string,
  value: string,
  ttlMs: number,
): Promise<void> {
  await client.eval(BEAT, 2, `${keys.workers}${id}`, keys.workersLive, value, ttlMs, id);
}

/**
 * Removes worker `id`'s heartbeat key and its entry in the live set, with the entries that have expired (one
 * script): once the last worker of a fleet has left, the set is gone. Throws what Redis throws.
 */
export async function leave(client: Redis, keys: FleetKeys, id: string): Promise<void> {
  await client.eval(LEAVE, 2, `${keys.workers}${id}`, keys.workersLive, id);
}

/**
 * How many workers have a live heartbeat: the entries of the live set whose expiry (Redis's clock) has not passed.
 * Workers of a mailvet version that wrote only the heartbeat key are not counted. Throws what Redis throws.
 */
export async function liveWorkers(client: Redis, keys: FleetKeys): Promise<number> {
  return Number(await client.eval(COUNT_LIVE, 1, keys.workersLive));
}
