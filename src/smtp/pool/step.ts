/**
 * Proof of step: a reply decides a verdict only once its session has shown that every reply was the reply to its
 * own command. A server that writes one line too many, late, shifts every later reply of the session onto the next
 * command (a 550 answering the next address), and only the end of the stream shows it: one line more than was
 * asked for. So outcomes read on a session are held until the session proves it kept in step (idle with nothing
 * more coming, or QUIT answered `221` with nothing after it), and asked again, alone, on a fresh session (once) or
 * failed with kind `protocol` when it did not. What a check means for the held outcomes is a pure decision
 * ({@link afterCheck}).
 * @module
 */

import { SmtpError } from '../../errors.js';
import type { StepCheck } from '../types.js';
import { type Backoff, mayWait } from './backoff.js';
import type { Connection, Waiter } from './connection.js';
import { expired } from './lease.js';
import type { RcptOutcome } from './types.js';

/**
 * Shortest idle time after which a session's held outcomes are checked, in milliseconds: above the 40 ms delayed
 * ACK of Linux, since a server's small writes wait for our ACK of the previous one (Nagle) and a line sent one too
 * many, late, may come that much after the reply it follows.
 */
export const QUIET_MIN_MS = 60;

/**
 * What a check of the session means for its `held` outcomes (oldest first): which are settled and which are asked
 * again. In step, all stand; out of step, none does; when the one extra line repeats the last reply, that reply's
 * value is right whichever of the two was the answer, so the last outcome stands and the others do not.
 * @example
 * afterCheck(3, 'last_reply_doubled'); // { confirmed: [2], voided: [0, 1] }
 */
export function afterCheck(held: number, check: StepCheck): { confirmed: number[]; voided: number[] } {
  const all = Array.from({ length: held }, (_, index) => index);
  if (check === 'in_step') return { confirmed: all, voided: [] };
  if (check === 'out_of_step' || held === 0) return { confirmed: [], voided: all };
  return { confirmed: [held - 1], voided: all.slice(0, -1) };
}

/** How long a session with held outcomes must be idle before it is checked: twice its slowest reply, at least. */
export function quietMs(slowestMs: number): number {
  return Math.max(QUIET_MIN_MS, 2 * slowestMs);
}

/** Time kept between a check and the end of the earliest held budget, in milliseconds. */
const BUDGET_MARGIN_MS = 20;

/**
 * How long to wait before checking a session whose held outcomes have `msLeft` of budget at the earliest: the quiet
 * time, cut short so that the check comes before that budget is spent (a shorter wait proves less, but an answer
 * that comes after the budget is no answer at all).
 * @example
 * proofDelay(5, 10_000); // 60
 * proofDelay(5_000, 3_000); // 2980
 */
export function proofDelay(slowestMs: number, msLeft: number): number {
  return Math.max(0, Math.min(quietMs(slowestMs), msLeft - BUDGET_MARGIN_MS));
}

/** What the proof of step needs from the pool. */
export interface StepContext {
  readonly now: () => number;
  /** The pool is closed. */
  closed(): boolean;
  backoffOf(key: string): Backoff | undefined;
  /** Queues a request again, at the front; `solo` to send it alone, one command at a time. */
  requeue(conn: Connection, waiter: Waiter, solo: boolean): void;
  /** Takes a connection out of the idle lists while it is checked. */
  leaveIdle(conn: Connection): void;
  /** Puts a connection back after its check (idle for reuse, or quit). */
  release(conn: Connection): void;
}

/** The proof of step of a pool's connections. */
export interface StepKeeper {
  /** Settles `waiter` with `outcome`, or holds it on `conn` until the session proves it kept in step. */
  deliver(conn: Connection, waiter: Waiter, outcome: RcptOutcome): void;
  /** A connection with held outcomes went idle: checks it once it has been quiet long enough. */
  idle(conn: Connection): void;
  /**
   * The pool is done with a connection: its held outcomes are settled by a check of the session once QUIT's reply
   * came (`quit`) or the session was dropped (`drop`), or when QUIT has been out for the quiet time with no reply
   * yet (`quitting`: any line would have been read as its reply).
   */
  ended(conn: Connection, how: 'quitting' | 'quit' | 'drop'): void;
  /** Asks `waiters` again, alone, on another session (once), or fails them with kind `protocol`. */
  askAlone(conn: Connection, waiters: readonly Waiter[]): void;
}

/** The error of a request whose only reply came on a session that fell out of step. */
export function outOfStepError(): SmtpError {
  return new SmtpError(
    'protocol',
    'the server sent a line no command asked for: the reply to this address may be another command’s',
    { stage: 'rcpt' },
  );
}

/** Creates the proof of step over `context`. */
export function stepKeeper(context: StepContext): StepKeeper {
  function askAlone(conn: Connection, waiters: readonly Waiter[]): void {
    const backoff = context.backoffOf(conn.key);
    const retry: Waiter[] = [];
    for (const waiter of waiters) {
      const again = backoff === undefined ? !waiter.retried : mayWait(waiter.request, waiter.lease, backoff);
      if (again && !context.closed() && !expired(waiter.lease, context.now())) retry.push(waiter);
      else waiter.fail(outOfStepError());
    }
    for (const waiter of retry.reverse()) context.requeue(conn, waiter, true);
  }

  function settle(conn: Connection, check: StepCheck): void {
    const held = conn.held.splice(0);
    const { confirmed, voided } = afterCheck(held.length, check);
    for (const index of confirmed) held[index]!.waiter.resolve(held[index]!.outcome);
    askAlone(
      conn,
      voided.map((index) => held[index]!.waiter),
    );
  }

  /** The wait before checking `conn`, by its slowest reply and its held outcomes' budgets. */
  function delayOf(conn: Connection): number {
    let earliest = Number.POSITIVE_INFINITY;
    for (const { waiter } of conn.held) earliest = Math.min(earliest, waiter.lease.deadline);
    return proofDelay(conn.slowestMs, earliest - context.now());
  }

  function ended(conn: Connection): void {
    if (conn.held.length > 0) check(conn, () => {});
  }

  function check(conn: Connection, then: () => void): void {
    const session = conn.session;
    if (session?.checkStep === undefined) {
      settle(conn, 'in_step');
      then();
      return;
    }
    session.checkStep().then(
      (result) => {
        settle(conn, result);
        then();
      },
      () => {
        settle(conn, 'out_of_step');
        then();
      },
    );
  }

  return {
    deliver(conn, waiter, outcome) {
      if (outcome.kind !== 'reply' || conn.session?.checkStep === undefined) waiter.resolve(outcome);
      else conn.held.push({ waiter, outcome });
    },
    idle(conn) {
      if (conn.held.length === 0) return;
      conn.proofTimer = setTimeout(() => {
        conn.proofTimer = undefined;
        if (conn.closing) return;
        context.leaveIdle(conn);
        check(conn, () => context.release(conn));
      }, delayOf(conn));
    },
    ended(conn, how) {
      if (conn.held.length === 0) return;
      if (how !== 'quitting') check(conn, () => {});
      else setTimeout(() => ended(conn), delayOf(conn));
    },
    askAlone,
  };
}
