/**
 * The options of `bullmqRunner`: their defaults and their one-time validation.
 * @module
 */
import { integerOption } from '../option-fields.js';
import type { FleetOptions } from './connection.js';

/** Options of {@link bullmqRunner}. */
export interface BullmqRunnerOptions extends FleetOptions {
  /**
   * Fewest positions in one chunk (the unit a worker takes; positions of a domain are kept together), 1-10,000: the
   * size of a job's chunks while its pace is unknown, and of those whose verification is slow (SMTP). With several
   * live workers, chunks are cut smaller when a job's pending positions would make fewer than 64 chunks per worker,
   * so that the workers share it evenly. @default 100
   */
  readonly chunkSize?: number;
  /**
   * Most positions in one chunk, 1-10,000 (raised to `chunkSize` if below it): the size of chunks of fast work
   * (offline checks, cached verdicts). @default 4096
   */
  readonly maxChunkSize?: number;
  /**
   * How long a chunk should take to verify in a worker, in milliseconds (1-600,000): once workers report a job's pace
   * (a chunk's verification time per address, as it shares the worker with its other chunks), its next chunks hold
   * about this many milliseconds of work, within `chunkSize`..`maxChunkSize`. @default 2000
   */
  readonly chunkTargetMs?: number;
  /**
   * How often this API node checks that the queue holds the work the database says is pending, in milliseconds:
   * inputs never queued (a node died between the two writes), Redis emptied (lost its data), greylisting
   * retries overdue. @default 5000
   */
  readonly reconcileMs?: number;
  /**
   * How long after its due time a greylisting retry waits for the worker that was greylisted before any worker
   * may take it, in milliseconds. @default 60000
   */
  readonly retryFallbackMs?: number;
  /** Longest wait of a stream for an event before it looks at the store again, in milliseconds. @default 1000 */
  readonly pollMs?: number;
  /**
   * Runs of a chunk that fails with an error that is not the database being out of reach (the database refuses
   * its results, the worker's verifier is disposed), 1-50, with exponential backoff from 1 s between them: when
   * the last one fails, the job becomes `failed`. @default 5
   */
  readonly chunkAttempts?: number;
}

/** The defaults of {@link BullmqRunnerOptions}. */
export const RUNNER_DEFAULTS = Object.freeze({
  chunkSize: 100,
  maxChunkSize: 4096,
  chunkTargetMs: 2000,
  reconcileMs: 5000,
  retryFallbackMs: 60_000,
  pollMs: 1000,
  chunkAttempts: 5,
});

/** The runner's validated settings. */
export type RunnerSettings = Readonly<Record<keyof typeof RUNNER_DEFAULTS, number>>;

/** Validates the runner's own options (an `OptionsError` names a bad one) and fills in the defaults. */
export function runnerSettings(options: BullmqRunnerOptions): RunnerSettings {
  const chunkSize = integerOption(options.chunkSize, 'chunkSize', RUNNER_DEFAULTS.chunkSize, 1, 10_000);
  const maxChunkSize = integerOption(
    options.maxChunkSize,
    'maxChunkSize',
    RUNNER_DEFAULTS.maxChunkSize,
    1,
    10_000,
  );
  return {
    chunkSize,
    maxChunkSize: Math.max(chunkSize, maxChunkSize),
    chunkTargetMs: integerOption(
      options.chunkTargetMs,
      'chunkTargetMs',
      RUNNER_DEFAULTS.chunkTargetMs,
      1,
      600_000,
    ),
    reconcileMs: integerOption(
      options.reconcileMs,
      'reconcileMs',
      RUNNER_DEFAULTS.reconcileMs,
      100,
      3_600_000,
    ),
    retryFallbackMs: integerOption(
      options.retryFallbackMs,
      'retryFallbackMs',
      RUNNER_DEFAULTS.retryFallbackMs,
      0,
      86_400_000,
    ),
    pollMs: integerOption(options.pollMs, 'pollMs', RUNNER_DEFAULTS.pollMs, 10, 60_000),
    chunkAttempts: integerOption(
      options.chunkAttempts,
      'chunkAttempts',
      RUNNER_DEFAULTS.chunkAttempts,
      1,
      50,
    ),
  };
}
