/**
 * The pool's inner records: one connection (a slot of a mail host, with the session on it), one waiting request,
 * and the state of one mail host. Plain data; the policies that change them live beside this file.
 * @module
 */

import type { SmtpSession, TranscriptHook } from '../types.js';
import type { Queued, WaiterQueue } from '../waiter-queue.js';
import type { Lease, PoolTarget, RcptOutcome, RcptRequest } from './types.js';

/** The envelope open on a session: its sender, whether it was opened with SMTPUTF8, its `RCPT TO` count. */
export interface Envelope {
  readonly sender: string;
  readonly smtpUtf8: boolean;
  rcpts: number;
}

/** One connection of the pool: a slot of its mail host, opening, busy, idle or closing. */
export interface Connection {
  /** The mail host's `ip:port` key. */
  readonly key: string;
  readonly target: PoolTarget;
  /** The settings profile (EHLO name and TLS policy) the session was opened with. */
  readonly profile: string;
  /** Opened for one request only (the catch-all probe). */
  readonly dedicated: boolean;
  /** Aborted when the pool is done with the connection: the session factory closes the channel then. */
  readonly controller: AbortController;
  /** The session, once open. */
  session: SmtpSession | null;
  /** `RCPT TO` sent on this session. */
  rcpts: number;
  /** `MAIL FROM` and `RCPT TO` of this session that got anything but 2xx (see `maxRejectsPerSession`). */
  rejects: number;
  envelope: Envelope | null;
  /** Where the session's own lines go: the transcript of the request that holds it. */
  sink: TranscriptHook | undefined;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Being quit or dropped: it serves nobody any more. */
  closing: boolean;
  /**
   * Outcomes read on this session and not yet proven to be their commands' own replies, in order: they are
   * settled when the session proves it kept in step (see `SmtpSession.checkStep`), asked again when it did not.
   */
  held: { readonly waiter: Waiter; readonly outcome: RcptOutcome }[];
  /** Runs the check that proves the held outcomes once the session has been idle long enough. */
  proofTimer: ReturnType<typeof setTimeout> | undefined;
  /** Longest wait for the replies of one command or group on this session, in milliseconds. */
  slowestMs: number;
}

/** A request waiting for a connection. */
export interface Waiter extends Queued {
  readonly target: PoolTarget;
  readonly profile: string;
  readonly dedicated: boolean;
  readonly request: RcptRequest;
  readonly lease: Lease;
  /** This request already lost a session and was queued again; it is not retried a second time. */
  readonly retried: boolean;
  /**
   * Its reply came on a session that fell out of step: it is asked again alone, one command at a time (each after
   * the session is found quiet), never in a pipelined group.
   */
  readonly solo: boolean;
  /** How many later waiters were served while this one waited for a fresh connection. */
  bypassed: number;
  /** Hands the waiter a connection to serve it (and maybe others) on. */
  grant(conn: Connection): void;
  /** Ends the request. */
  resolve(outcome: RcptOutcome): void;
  fail(error: unknown): void;
}

/** One mail host's connections and queue. */
export interface MxState {
  readonly conns: Set<Connection>;
  /** Idle connections, least recently used first. */
  readonly idle: Connection[];
  readonly waiters: WaiterQueue<Waiter>;
}
