/**
 * The prober seam: how the SMTP check reaches mail servers. The check asks a {@link Prober} (`runtime.prober`) to
 * probe one recipient or a domain's catch-all; a verifier makes its prober with a {@link ProberFactory}. Declared in
 * the core (which calls through it and imports no seam module); mailvet's own, the per-MX session pool of `smtp/`
 * (`smtpProbing`, smtp/probing.ts), is wired in by `createVerifierWith` (verifier-with.ts). `smtp/pool.ts` and
 * `smtp/prober.ts` re-export these types beside their implementation.
 * @module
 */

import type { CatchAllProbe } from '../result.js';
import type { TraceSpan } from '../tracing.js';
import type { SmtpReply, TlsPolicy, TranscriptHook, Transport } from './smtp.js';

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

/** The counters of a pool that has done nothing yet: each at 0. A pool starts its own from a copy. */
export const NO_POOL_STATS: PoolStats = Object.freeze({
  opened: 0,
  reused: 0,
  rcpts: 0,
  resets: 0,
  groups: 0,
  open: 0,
  peakPerMx: 0,
  backoffs: 0,
  failed: 0,
  replies2xx: 0,
  replies3xx: 0,
  replies4xx: 0,
  replies5xx: 0,
  waiting: 0,
});

/** Counters of a prober, for tests and benchmarks. */
export interface ProberStats extends PoolStats {
  /** Catch-all probes run (not answered from the cache or shared with a probe under way). */
  readonly catchAllProbes: number;
}

/** What the catch-all probe needs besides the domain and the host. */
export interface CatchAllRequest {
  /** Envelope sender. */
  readonly sender: string;
  readonly settings: SessionSettings;
}

/** SMTP probing with pooled sessions and cached catch-all answers. */
export interface Prober {
  /** The EHLO name used when a verification sets no `heloHost`. */
  readonly heloHost: string;
  /** Probes one recipient through the pool (see `SessionPool.rcpt`). */
  rcpt(target: PoolTarget, request: RcptRequest, lease: Lease): Promise<RcptOutcome>;
  /**
   * Whether `domain` accepts any local part: `RCPT TO` a random, unguessable local part at `target`, in a
   * session of its own (never one that carried or will carry a real address), once per domain: concurrent
   * askers share one probe, conclusive answers are cached for the TTL. Resolves `accepted`, `refused` or
   * `inconclusive`; rejects with an `SmtpError` (kind `timeout` or `aborted`) only when this lease's budget
   * is spent or its signal fires first.
   */
  catchAll(
    domain: string,
    target: PoolTarget,
    request: CatchAllRequest,
    lease: Lease,
  ): Promise<CatchAllProbe>;
  /** Current counters. */
  stats(): ProberStats;
  /** Closes every pooled session and forgets cached answers. */
  close(): Promise<void>;
}

/** What a verifier's runtime gives the {@link ProberFactory}: the transport, the HELO name and the pool settings. */
export interface ProberSettings {
  /** How connections are made. */
  readonly transport: Transport;
  /** EHLO name when a verification sets none. */
  readonly heloHost: string;
  /** Most connections open to one `ip:port`. @default 2 */
  readonly perMxConcurrency?: number;
  /** Most SMTP requests at work at once. @default 64 */
  readonly concurrency?: number;
  /** Most `RCPT TO` per session. @default 20 */
  readonly maxRcptPerSession?: number;
  /** Most refused `RCPT TO` per session. @default 8 */
  readonly maxRejectsPerSession?: number;
  /** How long idle sessions are kept, in milliseconds. @default 5000 */
  readonly idleSessionMs?: number;
  /** How long a mail host is left alone after a `421` or "too many errors", in milliseconds. @default 30000 */
  readonly mxBackoffMs?: number;
  /** How long a domain's catch-all answer is kept, in milliseconds. @default 3600000 */
  readonly catchAllTtlMs?: number;
  /** Clock in milliseconds (deadlines are measured by it). @default Date.now */
  readonly now?: () => number;
  /** Random source of catch-all probe names. @default crypto.getRandomValues */
  readonly randomBytes?: (size: number) => Uint8Array;
}

/**
 * How a verifier gets its {@link Prober}. Implementation: `smtpProbing` (smtp/probing.ts), the per-MX session pool
 * and catch-all cache of `smtp/`, its code imported on the first probe.
 */
export interface ProberFactory {
  /** Makes the prober of a verifier, when the verifier first needs one (at most once per verifier). */
  create(settings: ProberSettings): Prober;
  /**
   * Loads the prober's code ahead of the first probe (a verifier that will probe SMTP waits for it before its
   * first verification's budget starts); resolves once it is loaded or failed to load (the first probe then
   * rejects with the error).
   */
  preload(): Promise<void>;
}
