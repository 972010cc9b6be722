/**
 * Where a job's addresses wait to be verified. Without a durable store they go straight into the job's work
 * ({@link memoryInputs}); a durable store keeps them, and a job reads them back a window at a time
 * ({@link inputWindow}), so that a process holds a window of addresses per job, not the whole list.
 * @module
 */
import { SLICE_CHECK_EVERY, TurnBudget } from '../turn.js';
import { isFinished, type LiveJob, recordOf } from './job.js';
import type { DurableJobStore, JobStore, StoredRetry } from './job-types.js';
import type { RetrySchedule } from './retry.js';
import { hashedSeenIndex } from './seen-index.js';
import { domainKey, JobWork, type RestoredPositions } from './work.js';

/**
 * Durable stores: the bytes of addresses a job reads from the store at once (its window), each address counted
 * {@link ADDRESS_OVERHEAD_BYTES} plus two bytes a character. A job reads its next window when fewer than half a
 * window of tasks are queued.
 * @default 2097152 (2 MiB: about 18,000 addresses of 25 characters)
 */
export const WINDOW_BYTES = 2_097_152;
/** What an address in a job's queue costs besides its characters: its entries in the queue's columns. */
const ADDRESS_OVERHEAD_BYTES = 64;
/** The fewest and the most addresses of one window, whatever their length. */
const WINDOW_MIN = 1024;
const WINDOW_MAX = 32_768;
/** The characters of an address guessed for a job's first window. */
const FIRST_GUESS_CHARS = 32;

/** How many addresses of `meanChars` characters make a window of {@link WINDOW_BYTES}. */
function windowCount(meanChars: number): number {
  const count = Math.floor(WINDOW_BYTES / (ADDRESS_OVERHEAD_BYTES + 2 * meanChars));
  return Math.min(WINDOW_MAX, Math.max(WINDOW_MIN, count));
}

/** How the engine hands a job's addresses over, and gets them back as work. */
export interface JobInputs {
  /** A new job's pending work. */
  newWork(): JobWork;
  /** True when the write of `count` new inputs carries the job's record too (so no separate save is needed). */
  carriesRecord(count: number): boolean;
  /**
   * Takes the addresses at positions `first`, `first + 1`, ... of `job` (its `total` counts them already), with
   * their CSV rows if given; returns the store write the caller must wait for, if any.
   */
  append(
    job: LiveJob,
    first: number,
    emails: readonly string[],
    rows?: readonly string[],
  ): Promise<void> | undefined;
  /** Reads the job's next addresses into its work when it runs low (no-op when they are all in memory). */
  refill(job: LiveJob): void;
}

/** What the inputs reach of the engine. */
export interface InputsContext {
  /** Runs `operation` after every earlier store call of `job`. */
  enqueue<T>(job: LiveJob, operation: () => T | Promise<T>): Promise<T>;
  /** Flushes the job soon (its work has copies of final results to write). */
  scheduleFlush(job: LiveJob): void;
  /** Offers the job to the scheduler again and starts verifications. */
  ready(job: LiveJob): void;
  /** The store failed `operation` for the job. */
  storeFailed(job: LiveJob, operation: string, error: unknown): void;
  /** The job's greylisting retries (made if the job has none yet). */
  retries(job: LiveJob): RetrySchedule | null;
  /**
   * Throws the error an add of the job would get now (the manager closing, the job deleted or failed): checked
   * after each event-loop turn of an add taken in slices.
   */
  assertAddable(job: LiveJob): void;
  /** The longest stretch of work without an event-loop turn, in milliseconds (the manager's `yieldAfterMs`). */
  readonly yieldAfterMs: number;
}

/**
 * An add taken in slices stopped before it was committed (the manager closed, the job was deleted or failed):
 * nothing of it was queued; `reason` is the error for the caller.
 */
export class AddStopped extends Error {
  override name = 'AddStopped';
  /** The error the caller of the add gets. */
  readonly reason: unknown;

  constructor(reason: unknown) {
    super('the add stopped before it was committed', { cause: reason });
    this.reason = reason;
  }
}

/**
 * Queues `emails` into the job's work in slices of about `yieldAfterMs`, an event-loop turn between them, and
 * commits them at once at the end (nothing of the add is verified before; see `JobWork.stage`). Throws
 * {@link AddStopped}, the work as it was, when the job cannot take the add any more after a turn.
 */
async function stageInSlices(
  job: LiveJob,
  first: number,
  emails: readonly string[],
  context: InputsContext,
): Promise<void> {
  const budget = new TurnBudget(context.yieldAfterMs);
  const staged = job.work!.stage(first, emails);
  try {
    for (let from = 0; from < emails.length; from += SLICE_CHECK_EVERY) {
      if (budget.spent()) {
        await budget.turn();
        context.assertAddable(job);
      }
      staged.push(from, Math.min(emails.length, from + SLICE_CHECK_EVERY));
    }
    // Then queued by domain, in slices too (still hidden from `take`), so that the commit is short.
    while (!staged.spill(SLICE_CHECK_EVERY)) {
      if (budget.spent()) {
        await budget.turn();
        context.assertAddable(job);
      }
    }
  } catch (error) {
    staged.abort();
    throw new AddStopped(error);
  }
  staged.commit();
}

/**
 * Every address in memory, in the job's work; rows, if any, written to the store ahead of any result. A large
 * add is queued in slices with event-loop turns between them, and committed at once (see {@link stageInSlices}).
 */
export function memoryInputs(store: JobStore, perDomain: number, context: InputsContext): JobInputs {
  return {
    newWork: () => new JobWork(perDomain),
    carriesRecord: () => false,
    append(job, first, emails, rows) {
      // Queued ahead of any result of these positions (a store keeps a row before its result).
      const saved =
        rows === undefined ? undefined : context.enqueue(job, () => store.putRows?.(job.id, first, rows));
      if (emails.length <= SLICE_CHECK_EVERY) {
        job.work!.add(emails, first);
        if (job.work!.copies.length > 0) context.scheduleFlush(job);
        return saved;
      }
      saved?.catch(() => {}); // awaited below, once the addresses are queued
      return stageInSlices(job, first, emails, context).then(() => {
        if (job.work!.copies.length > 0) context.scheduleFlush(job);
        context.ready(job);
        return saved;
      });
    },
    refill() {},
  };
}

/** {@link JobInputs} that also rebuild a taken-over job's work from the store. */
export interface InputWindow extends JobInputs {
  /**
   * Rebuilds the pending work of a recovered job from its stored inputs: positions with a final result are
   * skipped, duplicates follow their first position again, greylisted positions wait for their stored due time.
   * Reads everything before it changes the job, so a read that fails can simply be tried again.
   */
  restore(job: LiveJob): Promise<void>;
}

/** What the window knows of a job's stored inputs: its own state, which no other object sees. */
interface WindowState {
  /** Positions below this were read from the store into the job's work. */
  loadedUpTo: number;
  /** Positions below this have their inputs committed to the store. */
  storedUpTo: number;
  /** A window is being read. */
  loading: boolean;
  /** How many addresses the job's next window reads (sized in bytes: {@link WINDOW_BYTES}); 0: not sized yet. */
  size: number;
  /** A recovered job: what the store said of its positions below `upTo` when it was taken over. */
  restored: (RestoredPositions & { readonly upTo: number }) | null;
}

/** A durable store's addresses, read back a window at a time (its jobs keep hashes in their deduplication index). */
export function inputWindow(store: DurableJobStore, perDomain: number, context: InputsContext): InputWindow {
  const newWork = (): JobWork => new JobWork(perDomain, hashedSeenIndex());
  const states = new WeakMap<LiveJob, WindowState>();
  /**
   * The window of `job`. A job it has not seen yet has its inputs stored and read up to `upTo`: a job made here is
   * first seen by the append of its first addresses (`upTo`: where they go), one read from the store (recovered,
   * adopted) has them all stored already (`upTo`: its total; a take-over's `restore` reads them again).
   */
  const stateOf = (job: LiveJob, upTo: number = job.total): WindowState => {
    let state = states.get(job);
    if (state === undefined) {
      state = { loadedUpTo: upTo, storedUpTo: upTo, loading: false, size: 0, restored: null };
      states.set(job, state);
    }
    return state;
  };

  /**
   * Reads the job's next window of inputs from the store when its queue runs low. It reads only inputs whose
   * write (by `append`) has committed.
   */
  function refill(job: LiveJob): void {
    const state = stateOf(job);
    if (state.loading || job.deleted || job.work === null || isFinished(job)) return;
    if (state.size === 0) state.size = windowCount(FIRST_GUESS_CHARS);
    if (state.loadedUpTo >= state.storedUpTo || job.work.queued >= state.size / 2) return;
    state.loading = true;
    const from = state.loadedUpTo;
    const count = Math.min(state.size, state.storedUpTo - from);
    const load = async (): Promise<void> => {
      if (job.deleted || job.work === null) return;
      const emails = await store.getInputs(job.id, from, count);
      if (emails.length !== count) {
        throw new Error(`the store holds ${emails.length} of the ${count} addresses from position ${from}`);
      }
      let chars = 0;
      for (const email of emails) chars += email.length;
      state.size = windowCount(chars / count); // the next window, sized on this one's addresses
      const restored = state.restored !== null && from < state.restored.upTo ? state.restored : undefined;
      // Queued in slices, each visible at once (these inputs are committed: nothing to undo), a turn between.
      const work = job.work;
      const budget = new TurnBudget(context.yieldAfterMs);
      for (let at = 0; at < emails.length; at += SLICE_CHECK_EVERY) {
        if (budget.spent()) {
          await budget.turn();
          if (job.deleted || job.work !== work) return;
        }
        const staged = work.stage(from, emails, restored);
        staged.push(at, Math.min(emails.length, at + SLICE_CHECK_EVERY));
        staged.commit();
        context.ready(job);
      }
      state.loadedUpTo = from + count;
      if (state.restored !== null && state.loadedUpTo >= state.restored.upTo) state.restored = null;
      if (job.work.copies.length > 0) context.scheduleFlush(job);
    };
    // Off the job's chain of writes: these inputs are committed already, so the read need not wait for results.
    load().then(
      () => {
        state.loading = false;
        context.ready(job);
        refill(job);
      },
      (error: unknown) => {
        state.loading = false;
        context.storeFailed(job, 'read the addresses', error);
      },
    );
  }

  return {
    newWork,
    carriesRecord: (count) => count > 0,
    append(job, first, emails, rows) {
      // The addresses go to the store only, with the record in one transaction, ahead of anything that could
      // start; the job reads them back a window at a time (refill).
      const state = stateOf(job, first);
      const record = recordOf(job);
      const saved = context.enqueue(job, () =>
        rows === undefined
          ? store.putInputs(record, first, emails)
          : store.putInputs(record, first, emails, rows),
      );
      saved.then(
        () => {
          state.storedUpTo = Math.max(state.storedUpTo, first + emails.length);
          refill(job);
        },
        () => {}, // the caller of append reports it
      );
      return saved;
    },
    refill,
    async restore(job) {
      const final = new Uint8Array((job.total >>> 3) + 1);
      for (const position of await store.finalPositions(job.id))
        final[position >>> 3]! |= 1 << (position & 7);
      const waiting = new Map((await store.getRetries(job.id)).map((retry) => [retry.position, retry]));
      const retried: { retry: StoredRetry; email: string }[] = [];
      for (const retry of waiting.values()) {
        const [email] = await store.getInputs(job.id, retry.position, 1);
        if (email !== undefined) retried.push({ retry, email });
      }
      // Everything is read: the job changes only from here on, so a read that failed can simply be tried again.
      job.work = newWork();
      const state = stateOf(job);
      state.loadedUpTo = 0;
      state.storedUpTo = job.total;
      state.restored = {
        upTo: job.total,
        isFinal: (position: number) => (final[position >>> 3]! & (1 << (position & 7))) !== 0,
        isWaiting: (position: number) => waiting.has(position),
      };
      const retries = context.retries(job);
      for (const { retry, email } of retried) {
        const task = { position: retry.position, email, key: domainKey(email), attempt: retry.attempt };
        job.interim.set(retry.position, retry.result);
        if (retries === null) job.work.retry({ ...task, attempt: 0 });
        else retries.restore(task, retry.dueAt);
      }
    },
  };
}
