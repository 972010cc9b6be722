/**
 * The session pool's public types: what a request asks, what it gets back, and the pool's options.
 * @module
 */

import type { TraceSpan } from '../../tracing.js';
import type { SmtpReply, SmtpSession, TlsPolicy, TranscriptHook } from '../types.js';

/** A mail host address to reach. */
export interface PoolTarget {
  /** IP address, already past the SSRF guard. */
  readonly host: string;
  /** TCP port. */
  readonly port: number;
  /** The MX host name (TLS SNI, transcripts). */
  readonly hostname: string;
}

/** What shapes a session; only sessions opened with equal settings (bar the connect timeout) are shared. */
export interface SessionSettings {
  /** Name sent in EHLO/HELO. */
  readonly heloHost: string;
  /** STARTTLS policy. */
  readonly tls: TlsPolicy;
  /** Budget of the TCP connect, in milliseconds. */
  readonly connectTimeoutMs: number;
  /** Longest wait for each reply after the greeting, in milliseconds. @default 30000 */
  readonly replyTimeoutMs?: number;
}

/** The verification that uses the pool for one request: its budget, abort signal and transcript. */
export interface Lease {
  /** Time (by the pool's clock) at which the verification's budget is spent. */
  readonly deadline: number;
  /** Aborts the request. */
  readonly signal?: AbortSignal | undefined;
  /** Receives the lines of this request's dialogue (commands and replies), when tracing. */
  readonly trace?: TranscriptHook | undefined;
  /**
   * The OpenTelemetry span of the request, when one records it: the sessions it opens and the command groups it
   * sends get spans under it (smtp/trace.ts). @default undefined (no spans)
   */
  readonly span?: TraceSpan | undefined;
}

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

/** One `RCPT TO` probe. */
export interface RcptRequest {
  /** Envelope sender (`MAIL FROM`). */
  readonly sender: string;
  /** The address to probe. */
  readonly recipient: string;
  /** The recipient needs SMTPUTF8 (RFC 6531): only servers that advertise it are asked. */
  readonly smtpUtf8: boolean;
  readonly settings: SessionSettings;
  /**
   * Use a connection of its own, opened for this request and closed right after it (the catch-all probe,
   * which must not share a session with real addresses). @default false
   */
  readonly dedicated?: boolean;
  /**
   * Another mail host can be asked instead of this one: while this one backs off (see `mxBackoffMs`), the
   * request fails at once with kind `backoff` rather than waiting for the backoff to end. @default false
   */
  readonly fallback?: boolean;
}

/** How a probe ended, when the server answered. */
export type RcptOutcome =
  | {
      readonly kind: 'reply';
      /** `mail` when `MAIL FROM` was refused (no `RCPT TO` was sent), else `rcpt`. */
      readonly stage: 'mail' | 'rcpt';
      readonly reply: SmtpReply;
      /** The session was reused from an earlier request. */
      readonly reused: boolean;
    }
  | {
      /** The recipient needs SMTPUTF8 and the server does not advertise it: nothing was asked. */
      readonly kind: 'no_smtputf8';
      readonly reused: boolean;
    };

/** Counters, for tests and benchmarks. */
export interface PoolStats {
  /** Connections opened (attempts included). */
  readonly opened: number;
  /** Requests served by a session opened for an earlier request. */
  readonly reused: number;
  /** `RCPT TO` commands sent. */
  readonly rcpts: number;
  /** `RSET` commands sent. */
  readonly resets: number;
  /** Pipelined command groups sent (each with one or more `RCPT TO`). */
  readonly groups: number;
  /** Connections holding a slot now (opening, busy or idle; a quitting one gave its slot back with `QUIT`). */
  readonly open: number;
  /** Most connections that held a slot of one `ip:port` at the same time. */
  readonly peakPerMx: number;
  /** Times a mail host was put in backoff (a `421`, or "too many errors"). */
  readonly backoffs: number;
  /** Sessions that could not be opened (connect, greeting, `EHLO` or TLS failed, or the budget ran out). */
  readonly failed: number;
  /** Replies to `RCPT TO` (and refusals of `MAIL FROM`) with a 2xx code. */
  readonly replies2xx: number;
  /** Replies to `RCPT TO` (and refusals of `MAIL FROM`) with a 3xx code. */
  readonly replies3xx: number;
  /** Replies to `RCPT TO` (and refusals of `MAIL FROM`) with a 4xx code. */
  readonly replies4xx: number;
  /** Replies to `RCPT TO` (and refusals of `MAIL FROM`) with a 5xx code. */
  readonly replies5xx: number;
  /** Requests waiting now: for a slot of their mail host, or for one of the pool's `concurrency` slots. */
  readonly waiting: number;
}

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
