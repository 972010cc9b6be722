/**
 * Greylisting retries of one job: tasks waiting for their delay, on one timer of the injected clock.
 * @module
 */
import { Deque } from './deque.js';
import type { Clock } from './types.js';
import type { Task } from './work.js';

/** A task waiting for its retry. */
export interface WaitingRetry {
  readonly task: Task;
  readonly due: number;
}

/**
 * Tasks waiting for a retry. The delay of each retry level is fixed, so each level's queue is in due order and
 * one timer, set for the earliest head, serves them all.
 */
export class RetrySchedule {
  readonly #clock: Clock;
  readonly #delaysMs: readonly number[];
  readonly #levels: Deque<WaitingRetry>[];
  readonly #onDue: (due: WaitingRetry[]) => void;
  #timer: unknown;
  #timerDue = Number.POSITIVE_INFINITY;
  #size = 0;

  constructor(clock: Clock, delaysMs: readonly number[], onDue: (due: WaitingRetry[]) => void) {
    this.#clock = clock;
    this.#delaysMs = delaysMs;
    this.#levels = delaysMs.map(() => new Deque<WaitingRetry>());
    this.#onDue = onDue;
  }

  /** Number of tasks waiting. */
  get size(): number {
    return this.#size;
  }

  /** When the earliest waiting task is due (clock milliseconds), or `null` when none waits. */
  get nextDue(): number | null {
    return this.#size === 0 || this.#timerDue === Number.POSITIVE_INFINITY ? null : this.#timerDue;
  }

  /**
   * Schedules `task` (whose `attempt` is the retry number, from 1) after its level's delay; returns when it is
   * due (clock milliseconds).
   */
  add(task: Task): number {
    const due = this.#clock.now() + this.#delaysMs[task.attempt - 1]!;
    this.restore(task, due);
    return due;
  }

  /**
   * Schedules `task` at `due`, a time an earlier process computed (recovery from a durable store). Restore a
   * level's tasks in due order, before any `add` of that level, so that each level stays in due order.
   */
  restore(task: Task, due: number): void {
    const level = Math.min(Math.max(task.attempt, 1), this.#delaysMs.length) - 1;
    this.#levels[level]!.push({ task, due });
    this.#size++;
    if (due < this.#timerDue) this.#arm(due);
  }

  /** Cancels the timer and returns every waiting task, earliest level first (the schedule is then empty). */
  drain(): WaitingRetry[] {
    const waiting: WaitingRetry[] = [];
    for (const level of this.#levels) while (level.length > 0) waiting.push(level.shift()!);
    this.clear();
    return waiting;
  }

  /** Cancels the timer and forgets every waiting task. */
  clear(): void {
    this.#disarm();
    for (const level of this.#levels) level.clear();
    this.#size = 0;
  }

  #arm(due: number): void {
    this.#disarm();
    this.#timerDue = due;
    this.#timer = this.#clock.setTimeout(() => this.#fire(), Math.max(0, due - this.#clock.now()));
  }

  #disarm(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerDue = Number.POSITIVE_INFINITY;
    const now = this.#clock.now();
    const due: WaitingRetry[] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const level of this.#levels) {
      while (level.length > 0 && level.peek()!.due <= now) due.push(level.shift()!);
      const head = level.peek();
      if (head !== undefined && head.due < next) next = head.due;
    }
    this.#size -= due.length;
    if (next !== Number.POSITIVE_INFINITY) this.#arm(next);
    if (due.length > 0) this.#onDue(due);
  }
}
