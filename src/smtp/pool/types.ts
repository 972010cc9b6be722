/**
 * The session pool's public types: what a request asks, what it gets back, and the pool's options. What the SMTP
 * check sends and gets back (`PoolTarget`, `RcptRequest`, `Lease`, `RcptOutcome`, ...) is declared in the core, in
 * contracts/prober.ts, and re-exported here.
 * @module
 */

import type {
  Lease,
  PoolStats,
  PoolTarget,
  RcptOutcome,
  RcptRequest,
  SessionSettings,
} from '../../contracts/prober.js';
import type { SmtpSession, TranscriptHook } from '../types.js';

export type { Lease, PoolStats, PoolTarget, RcptOutcome, RcptRequest, SessionSettings };

/** What the pool hands to a {@link SessionFactory}. */
export interface OpenContext {
  readonly settings: SessionSettings;
  /** Deadline of the verification that opens the session. */
  readonly deadline: number;
  /** Aborted when the pool drops the connection: the factory must close the channel then. */
  readonly signal: AbortSignal;
  /** Transcript hook; the pool routes it to whichever request holds the session. */
  readonly trace: TranscriptHook;
}

/** Opens a session (connect, greeting, EHLO, STARTTLS); rejects with an `SmtpError` when it cannot. */
export type SessionFactory = (target: PoolTarget, context: OpenContext) => Promise<SmtpSession>;

/** The pool. */
export interface SessionPool {
  /**
   * Probes one recipient at `target`: waits for a slot (per MX, then global), takes an idle session or opens
   * one, and sends `MAIL FROM` (when no compatible envelope is open) and `RCPT TO`. Replies are values;
   * failing to get one rejects with the session's `SmtpError` (a `421` is kind `rejected`), or kind `timeout`
   * once the lease's budget is spent, `aborted` when its signal fires or the pool is closed, `backoff` when the
   * host is backing off (see `mxBackoffMs`) and the request may not wait for the end. A reused session that
   * fails is replaced by a fresh one once, so that a stale connection never decides a verdict.
   */
  rcpt(target: PoolTarget, request: RcptRequest, lease: Lease): Promise<RcptOutcome>;
  /** Current counters. */
  stats(): PoolStats;
  /** Quits idle sessions, aborts busy ones and fails waiting requests; resolves once all are closed. */
  close(): Promise<void>;
}

/** Options of {@link createSessionPool}. */
export interface SessionPoolOptions {
  /** Opens sessions. */
  readonly open: SessionFactory;
  /**
   * Most connections open to one `ip:port`, idle ones included; a session being quit gives its slot back as
   * `QUIT` is sent (its socket closes in the background, within 2 s). @default 2
   */
  readonly perMxConcurrency?: number;
  /** Most requests at work at once, over all mail hosts; also bounds idle connections. @default 64 */
  readonly concurrency?: number;
  /** Most `RCPT TO` in one session; the session is then quit and a new one opened. @default 20 */
  readonly maxRcptPerSession?: number;
  /**
   * Most refused `RCPT TO` and `MAIL FROM` (any reply but 2xx) in one session; the session is then quit and a new
   * one opened. Below the common error limits of mail servers (Postfix slows every reply after 10 errors and drops
   * the session after 20), so that a list with many dead addresses does not get the sender flagged. A pipelined
   * group holds no more recipients than the cap has left, so only its own `MAIL FROM`, when refused, can take the
   * session one past it. @default 8
   */
  readonly maxRejectsPerSession?: number;
  /** How long an idle session is kept for reuse, in milliseconds; `0` disables reuse. @default 5000 */
  readonly idleSessionMs?: number;
  /**
   * Most `RCPT TO` in one pipelined command group (RFC 2920), on servers that advertise `PIPELINING`; never
   * more than a session has left under `maxRcptPerSession`. `1` sends one command at a time. @default 10
   */
  readonly pipelineDepth?: number;
  /**
   * How long a mail host (`ip:port`) is left alone after it answered `421` (closing the session) or refused with
   * "too many errors", in milliseconds; `0` disables backoff. Meanwhile no new session is opened to it (sessions
   * already open carry on): a request with a `fallback` fails at once with kind `backoff`, others wait for the
   * end when their budget outlasts it, else fail the same way. @default 30000
   */
  readonly mxBackoffMs?: number;
  /** Clock in milliseconds, the one lease deadlines are measured by. @default Date.now */
  readonly now?: () => number;
}
