/**
 * `mailvet/bullmq`: bulk jobs on a worker fleet. `bullmqRunner` makes a `BulkJobManager` an API node that queues
 * work on BullMQ (Redis) with PostgreSQL (`postgresStore`) as the record of jobs and results; `createWorker` runs
 * a worker that verifies chunks of jobs. Needs the optional peer dependencies `bullmq` and `ioredis`.
 * See docs/scaling.md.
 * @module
 */
export { type ChunkData, type ChunkItem, chunksOf } from './chunks.js';
export {
  checkRedis,
  deleteFleetKeys,
  type FleetConnection,
  type FleetOptions,
  queueUnavailable,
  type RedisPinger,
  redisPinger,
} from './connection.js';
export { type RedisLimitStore, redisLimits } from './redis-limits.js';
export { type BullmqRunnerOptions, bullmqRunner, RUNNER_DEFAULTS } from './runner.js';
export {
  createWorker,
  type FleetWorker,
  type FleetWorkerOptions,
  WORKER_DEFAULTS,
  type WorkerJobEvent,
} from './worker.js';
