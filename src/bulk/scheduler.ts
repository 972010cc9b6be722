/**
 * The in-process scheduler: which verification starts next, how many run at once, when the event loop gets a
 * turn, and the manager's own deadline on each. It knows nothing of stores: the engine says through a small
 * {@link SchedulerContext} whether a job may run, what its next task is and what to do with an answer.
 * @module
 */
import { type VerificationResult, verdictOf } from '../result.js';
import { verdictOnlyResult } from '../score.js';
import { turnWorkBegan } from '../turn.js';
import { Deque } from './deque.js';
import { exceptionResult, type LiveJob } from './job.js';
import type { BulkVerifier } from './job-types.js';
import type { Task } from './work.js';

/** What the scheduler reaches of the engine. */
export interface SchedulerContext {
  /** True when the job may start verifications now (armed, not finished or deleted, with work, not held back). */
  runnable(job: LiveJob): boolean;
  /** The job's next task, taken from its work, or `undefined` when it has none to start now. */
  take(job: LiveJob): Task | undefined;
  /** A verification of the job ended (its answer, its error, the deadline); not called once the job is deleted. */
  settled(job: LiveJob, task: Task, outcome: unknown, ok: boolean): void;
}

/** The scheduler's settings (the manager's validated options). */
export interface SchedulerOptions {
  readonly concurrency: number;
  readonly yieldAfterMs: number;
  readonly verificationTimeoutMs: number;
}

/** A verification in flight. */
interface Running {
  readonly job: LiveJob;
  readonly task: Task;
  /** `performance.now()` when it started. */
  readonly started: number;
  settled: boolean;
}

/** Starts verifications round-robin over the ready jobs, within `concurrency`, yielding every `yieldAfterMs`. */
export class Scheduler {
  readonly #options: SchedulerOptions;
  readonly #verifier: BulkVerifier;
  readonly #context: SchedulerContext;
  readonly #ready = new Deque<LiveJob>();
  #inFlight = 0;
  /** Verifications in flight, for the deadline and for `cancel` to free their slots. */
  readonly #running = new Set<Running>();
  #deadlineTimer: ReturnType<typeof setInterval> | undefined;
  /** When the current stretch of work without an event-loop turn began (`performance.now()`), if any. */
  #sliceStart: number | undefined;
  #turnPending = false;
  #idle: (() => void)[] = [];
  #stopped = false;

  constructor(options: SchedulerOptions, verifier: BulkVerifier, context: SchedulerContext) {
    this.#options = options;
    this.#verifier = verifier;
    this.#context = context;
  }

  /** Queues the job for its next verification unless it is queued already or may not run now. */
  ready(job: LiveJob): void {
    if (job.inReady || this.#stopped || !this.#context.runnable(job)) return;
    job.inReady = true;
    this.#ready.push(job);
  }

  /**
   * Starts verifications while there is room and work, round-robin over jobs. After `yieldAfterMs` of work
   * without an event-loop turn it stops and goes on from a `setImmediate`, so that I/O (an HTTP request, a
   * timer) gets its turn even when every verification settles in a microtask.
   */
  pump(): void {
    if (this.#turnPending) return;
    while (this.#inFlight < this.#options.concurrency && !this.#stopped) {
      if (this.#sliceSpent()) {
        this.#turnPending = true;
        setImmediate(() => {
          this.#turnPending = false;
          this.pump();
        });
        return;
      }
      const job = this.#ready.shift();
      if (job === undefined) return;
      job.inReady = false;
      const task = this.#context.take(job);
      if (task === undefined) continue;
      this.ready(job);
      this.#startSlice();
      this.#launch(job, task);
    }
  }

  /** Ends the verifications in flight of a deleted job now: their slots are free; their answers are dropped. */
  cancel(job: LiveJob): void {
    for (const running of [...this.#running]) {
      if (running.job === job) this.#finish(running, exceptionResult(running.task.email), true);
    }
  }

  /** Starts nothing more (the engine is closing). */
  stop(): void {
    this.#stopped = true;
    this.#ready.clear();
  }

  /** Resolves once no verification is in flight. */
  async idle(): Promise<void> {
    if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#idle.push(resolve));
  }

  /**
   * True when the verifications started since the last event-loop turn have taken `yieldAfterMs`. A stretch starts
   * with the first verification started after a turn ({@link #startSlice}) and ends at the next turn (an immediate
   * marks it), so neither idle time nor what the caller did earlier in the turn counts: a pump that has work starts
   * at least one verification per turn.
   */
  #sliceSpent(): boolean {
    return (
      this.#sliceStart !== undefined && performance.now() - this.#sliceStart >= this.#options.yieldAfterMs
    );
  }

  /** Starts a stretch of work at the first verification started after an event-loop turn. */
  #startSlice(): void {
    if (this.#sliceStart !== undefined) return;
    this.#sliceStart = performance.now();
    turnWorkBegan(); // the sliced loops of this turn (a commit's texts, a window's inputs) count this work too
    setImmediate(() => {
      this.#sliceStart = undefined;
    });
  }

  #launch(job: LiveJob, task: Task): void {
    this.#inFlight++;
    job.inFlight++;
    const running: Running = { job, task, started: performance.now(), settled: false };
    this.#running.add(running);
    this.#watchDeadlines();
    let pending: Promise<VerificationResult>;
    try {
      const calls = task.attempt > 0 ? job.calls.retry : job.calls.first;
      pending = Promise.resolve(
        calls === undefined ? this.#verifier.verify(task.email) : this.#verifier.verify(task.email, calls),
      );
    } catch (error) {
      pending = Promise.reject(error);
    }
    pending.then(
      (result) => this.#finish(running, result, true),
      (error: unknown) => this.#finish(running, error, false),
    );
  }

  /** Settles a verification once: by its answer, by the deadline, or by the deletion of its job. */
  #finish(running: Running, outcome: unknown, ok: boolean): void {
    if (running.settled) return;
    running.settled = true;
    this.#running.delete(running);
    const { job, task } = running;
    this.#inFlight--;
    job.inFlight--;
    if (!job.deleted) this.#context.settled(job, task, outcome, ok);
    if (this.#inFlight === 0 && this.#idle.length > 0) {
      const idle = this.#idle;
      this.#idle = [];
      for (const resolve of idle) resolve();
    }
    this.pump();
  }

  /**
   * While verifications run, checks every so often for any that has outlived `verificationTimeoutMs`: it ends
   * `unknown`/`timeout_exceeded` and frees its slot, whatever the verifier does later (a custom verifier that
   * never answers cannot hold the manager).
   */
  #watchDeadlines(): void {
    if (this.#deadlineTimer !== undefined) return;
    const limit = this.#options.verificationTimeoutMs;
    const every = Math.max(10, Math.min(1000, Math.floor(limit / 4)));
    this.#deadlineTimer = setInterval(() => {
      const now = performance.now();
      for (const running of [...this.#running]) {
        if (now - running.started >= limit)
          this.#finish(running, verdictOnlyResult(running.task.email, verdictOf('timeout_exceeded')), true);
      }
      if (this.#running.size === 0) {
        clearInterval(this.#deadlineTimer);
        this.#deadlineTimer = undefined;
      }
    }, every);
    (this.#deadlineTimer as { unref?: () => void }).unref?.();
  }
}
