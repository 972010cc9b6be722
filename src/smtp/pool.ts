/**
 * The per-MX session pool: reuses open SMTP sessions for many addresses of one mail host, with a per-MX
 * and a global concurrency limit, a cap on `RCPT TO` (and refused ones) per session, reconnection of stale
 * sessions, backoff of a host that says `421` or "too many errors", and idle close.
 * It is what makes bulk verification fast without getting the prober's IP blocked.
 *
 * A session keeps its envelope open between addresses: `RCPT TO` replies of one transaction are
 * independent (RFC 5321 §3.3), so the next address only costs one `RCPT TO`. `RSET` starts a new envelope
 * when the sender or the SMTPUTF8 parameter changes, and after a `452 4.5.3` (too many recipients).
 *
 * When the server advertises `PIPELINING` (RFC 2920) and the session implements `rcptToMany`, a request that
 * gets a session takes up to `pipelineDepth - 1` compatible requests queued for the same host along
 * (same settings and sender), and their `RCPT TO`s go as one command group — after `MAIL FROM` when the
 * envelope is new — whose replies are read in order, each settling its own request. A group counts as one
 * request against the global `concurrency`.
 * @module
 */

import pLimit from 'p-limit';
import { watchOptionalAbort } from '../abort-watch.js';
import { SmtpError } from '../errors.js';
import type { TlsPolicy } from '../options.js';
import { weakMemo } from '../weak-memo.js';
import { limitsSession } from './classify.js';
import { printable } from './reply.js';
import type { CommandOptions, PipelinedRcpt, SmtpReply, SmtpSession, TranscriptHook } from './types.js';
import { type Queued, WaiterQueue } from './waiter-queue.js';

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

/** Most `RCPT TO` in one pipelined command group, unless `pipelineDepth` says otherwise. */
export const DEFAULT_PIPELINE_DEPTH = 10;

/**
 * The abort reason of a connection the pool is done with: a constant, so that tearing a session down builds no
 * `DOMException` (and captures no stack trace) each time.
 */
const DROPPED = 'the session pool is done with this connection';

/** How long a `QUIT` may take before the connection is simply dropped, in milliseconds. */
const QUIT_GRACE_MS = 2_000;

interface Connection {
  readonly key: string;
  readonly target: PoolTarget;
  readonly profile: string;
  readonly dedicated: boolean;
  readonly controller: AbortController;
  session: SmtpSession | null;
  rcpts: number;
  /** `MAIL FROM` and `RCPT TO` of this session that got anything but 2xx (see `maxRejectsPerSession`). */
  rejects: number;
  envelope: { sender: string; smtpUtf8: boolean; rcpts: number } | null;
  sink: TranscriptHook | undefined;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  closing: boolean;
}

interface Waiter extends Queued {
  readonly target: PoolTarget;
  readonly profile: string;
  readonly dedicated: boolean;
  readonly request: RcptRequest;
  readonly lease: Lease;
  /** This request already lost a session and was queued again; it is not retried a second time. */
  readonly retried: boolean;
  /** How many later waiters were served while this one waited for a fresh connection. */
  bypassed: number;
  /** Hands the waiter a connection to serve it (and maybe others) on. */
  grant(conn: Connection): void;
  /** Ends the request. */
  resolve(outcome: RcptOutcome): void;
  fail(error: unknown): void;
}

/** A mail host that answered `421` or "too many errors": no new session until `until`. */
interface Backoff {
  readonly until: number;
  /** The reply that started it, for the error of the requests it turns away. */
  readonly reply: SmtpReply;
  readonly timer: ReturnType<typeof setTimeout>;
}

interface MxState {
  readonly conns: Set<Connection>;
  /** Idle connections, least recently used first. */
  readonly idle: Connection[];
  readonly waiters: WaiterQueue<Waiter>;
}

function positive(reply: SmtpReply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

/**
 * The reply that puts a mail host in backoff: a `421`, or a refusal about the session (Postfix's `421 4.7.0 Error:
 * too many errors`, a 4xx/5xx "too many invalid recipients", "too many connections", a rate limit; see
 * `limitsSession`), as opposed to `452 4.5.3` "too many recipients" (a full envelope).
 */
function backoffReply(reply: SmtpReply | undefined): SmtpReply | undefined {
  if (reply === undefined || positive(reply)) return undefined;
  return reply.code === 421 || limitsSession(reply) ? reply : undefined;
}

/** `452 4.5.3` / "too many recipients": the envelope is full, not the mailbox. */
function tooManyRecipients(reply: SmtpReply): boolean {
  return reply.code === 452 && (reply.enhanced === '4.5.3' || /too many recipients/i.test(reply.text));
}

/** A promise's outcome as a value. */
function settled<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function keyOf(target: PoolTarget): string {
  return target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}

/** The profile of each settings object: callers reuse one object for many requests (see checks/smtp). */
const profileOf = weakMemo((settings: SessionSettings): string => `${settings.heloHost}\n${settings.tls}`);

function unref(timer: ReturnType<typeof setTimeout>): void {
  (timer as { unref?: () => void }).unref?.();
}

function integerOption(value: number | undefined, fallback: number, name: string, min: number): number {
  const result = value ?? fallback;
  if (!Number.isInteger(result) || result < min) {
    throw new RangeError(`${name} must be an integer >= ${min}`);
  }
  return result;
}

/**
 * Creates a session pool. Sessions are keyed by `ip:port`; the per-MX limit counts every connection to that
 * key that is opening, busy or idle, so a mail host never has more than `perMxConcurrency` sessions at work for
 * one verifier. A session being quit gives its slot back as `QUIT` is sent, so the next session does not wait
 * for the `221` (the old socket may still be closing meanwhile).
 * @example
 * const pool = createSessionPool({ open: (target, context) => openMySession(target, context) });
 * const outcome = await pool.rcpt(target, { sender, recipient, smtpUtf8: false, settings }, { deadline });
 * await pool.close();
 */
export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const perMx = integerOption(options.perMxConcurrency, 2, 'perMxConcurrency', 1);
  const maxRcpt = integerOption(options.maxRcptPerSession, 20, 'maxRcptPerSession', 1);
  const maxRejects = integerOption(options.maxRejectsPerSession, 8, 'maxRejectsPerSession', 1);
  const idleMs = integerOption(options.idleSessionMs, 5_000, 'idleSessionMs', 0);
  const depth = integerOption(options.pipelineDepth, DEFAULT_PIPELINE_DEPTH, 'pipelineDepth', 1);
  const backoffMs = integerOption(options.mxBackoffMs, 30_000, 'mxBackoffMs', 0);
  /** Most waiters that may go past one waiting for a fresh connection (about two sessions' worth). */
  const bypassLimit = Math.min(maxRcpt * perMx, 50);
  const limit = pLimit(integerOption(options.concurrency, 64, 'concurrency', 1));
  const now = options.now ?? Date.now;
  const open = options.open;

  const states = new Map<string, MxState>();
  /** Mail hosts backing off, by key; an entry is removed by its own timer. */
  const backoffs = new Map<string, Backoff>();
  /** Every idle connection, least recently used first (a Set keeps insertion order). */
  const idleAll = new Set<Connection>();
  const quitting = new Set<Promise<void>>();
  let drained: (() => void) | undefined;
  let closed = false;
  let openCount = 0;
  const counters = { opened: 0, reused: 0, rcpts: 0, resets: 0, groups: 0, peakPerMx: 0, backoffs: 0 };

  function stateOf(key: string): MxState {
    let state = states.get(key);
    if (state === undefined) {
      state = { conns: new Set(), idle: [], waiters: new WaiterQueue<Waiter>() };
      states.set(key, state);
    }
    return state;
  }

  function expired(lease: Lease): boolean {
    return lease.signal?.aborted === true || now() >= lease.deadline;
  }

  function leaseError(lease: Lease): SmtpError {
    return lease.signal?.aborted === true
      ? new SmtpError('aborted', 'the verification was aborted')
      : new SmtpError('timeout', 'the verification time budget is spent');
  }

  /**
   * Puts the mail host `key` in backoff for `mxBackoffMs` after `reply` (a longer one if it already was): no new
   * session until it ends, when the requests still waiting get their turn.
   */
  function startBackoff(key: string, reply: SmtpReply): void {
    if (backoffMs === 0 || closed) return;
    const previous = backoffs.get(key);
    if (previous !== undefined) clearTimeout(previous.timer);
    else counters.backoffs += 1;
    const timer = setTimeout(() => {
      if (backoffs.get(key)?.timer === timer) backoffs.delete(key);
      dispatch(key);
    }, backoffMs);
    unref(timer);
    backoffs.set(key, { until: now() + backoffMs, reply, timer });
    turnAway(key);
  }

  /** The backoff of `key`, while it lasts. */
  function backoffOf(key: string): Backoff | undefined {
    const backoff = backoffs.get(key);
    return backoff !== undefined && backoff.until > now() ? backoff : undefined;
  }

  /** Whether a waiter may wait out `backoff`: it has nowhere else to go, and its budget outlasts the backoff. */
  function mayWait(waiter: Waiter, backoff: Backoff): boolean {
    return waiter.request.fallback !== true && waiter.lease.deadline > backoff.until;
  }

  function backoffError(key: string, backoff: Backoff): SmtpError {
    const { code, text } = backoff.reply;
    const seconds = Math.ceil((backoff.until - now()) / 1000);
    return new SmtpError(
      'backoff',
      `${key} is left alone for ${seconds} s more: it answered ${code} ${printable(text).slice(0, 200)}`,
    );
  }

  /** Whether `state` has a connection that can still serve requests (not quitting or dropped). */
  function live(state: MxState): boolean {
    for (const conn of state.conns) if (!conn.closing) return true;
    return false;
  }

  /**
   * While `key` backs off and no session of it is left to serve them, fails the waiting requests that may not
   * wait for the end (kind `backoff`): they go to their next mail host, or end `unknown`.
   */
  function turnAway(key: string): void {
    const backoff = backoffOf(key);
    const state = states.get(key);
    if (backoff === undefined || state === undefined || live(state)) return;
    for (const waiter of state.waiters) {
      if (mayWait(waiter, backoff)) continue;
      state.waiters.remove(waiter);
      waiter.fail(backoffError(key, backoff));
    }
    if (state.conns.size === 0 && state.waiters.length === 0) states.delete(key);
  }

  /** Settles with `promise`, or rejects when the lease's budget is spent or its signal fires first. */
  function within<T>(promise: Promise<T>, lease: Lease): Promise<T> {
    promise.catch(() => undefined);
    if (expired(lease)) return Promise.reject(leaseError(lease));
    return new Promise<T>((resolve, reject) => {
      const stop = () => {
        clearTimeout(timer);
        unwatch();
      };
      const onAbort = () => {
        stop();
        reject(leaseError(lease));
      };
      const timer = setTimeout(onAbort, Math.max(0, lease.deadline - now()));
      const unwatch = watchOptionalAbort(lease.signal, onAbort);
      promise.then(
        (value) => {
          stop();
          resolve(value);
        },
        (error: unknown) => {
          stop();
          reject(error);
        },
      );
    });
  }

  function newConnection(key: string, target: PoolTarget, profile: string, dedicated: boolean): Connection {
    const state = stateOf(key);
    if (openCount >= limit.concurrency) {
      const lru = idleAll.values().next();
      if (!lru.done) retire(lru.value);
    }
    const conn: Connection = {
      key,
      target,
      profile,
      dedicated,
      controller: new AbortController(),
      session: null,
      rcpts: 0,
      rejects: 0,
      envelope: null,
      sink: undefined,
      idleTimer: undefined,
      closing: false,
    };
    state.conns.add(conn);
    openCount += 1;
    counters.opened += 1;
    counters.peakPerMx = Math.max(counters.peakPerMx, state.conns.size);
    return conn;
  }

  function leaveIdle(conn: Connection): void {
    if (conn.idleTimer !== undefined) clearTimeout(conn.idleTimer);
    conn.idleTimer = undefined;
    idleAll.delete(conn);
    const idle = states.get(conn.key)?.idle;
    const index = idle?.indexOf(conn) ?? -1;
    if (idle !== undefined && index >= 0) idle.splice(index, 1);
  }

  /** Removes a closed connection and lets a waiter have its slot. */
  function forget(conn: Connection): void {
    const state = states.get(conn.key);
    if (state === undefined || !state.conns.delete(conn)) return;
    openCount -= 1;
    turnAway(conn.key);
    if (state.conns.size === 0 && state.waiters.length === 0) states.delete(conn.key);
    else dispatch(conn.key);
    if (openCount === 0) drained?.();
  }

  /** Drops a connection at once (no QUIT): for sessions in an unknown state. */
  function drop(conn: Connection): void {
    leaveIdle(conn);
    conn.closing = true;
    conn.controller.abort(DROPPED);
    forget(conn);
  }

  /**
   * Quits a connection politely. Its slot frees up as `QUIT` goes out, not when the `221` comes back: the wait
   * for the reply and the socket's close happen in the background, bounded by `QUIT_GRACE_MS`, and `close()`
   * still waits for them. (A retired session is never busy, so `QUIT` is written in the tick `quit()` is
   * called; the slot is handed on in a microtask after it, never from inside a `dispatch` under way.)
   */
  function retire(conn: Connection): void {
    if (conn.closing) return;
    leaveIdle(conn);
    conn.closing = true;
    const session = conn.session;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, QUIT_GRACE_MS);
      unref(timer);
    });
    const sent = session === null ? Promise.resolve() : session.quit({ deadline: now() + QUIT_GRACE_MS });
    queueMicrotask(() => forget(conn));
    const done = Promise.race([sent, grace])
      .catch(() => undefined)
      .then(() => {
        clearTimeout(timer);
        conn.controller.abort(DROPPED);
        quitting.delete(done);
      });
    quitting.add(done);
  }

  /** Takes the most recently used idle session with this profile; retires unusable ones met on the way. */
  function takeIdle(state: MxState, profile: string): Connection | undefined {
    for (let index = state.idle.length - 1; index >= 0; index--) {
      const conn = state.idle[index]!;
      if (conn.profile !== profile) continue;
      if (conn.session?.usable !== true) {
        retire(conn);
        continue;
      }
      leaveIdle(conn);
      return conn;
    }
    return undefined;
  }

  /** Quits the least recently used idle session of `state` to free a slot, unless one is already quitting. */
  function makeRoom(state: MxState): void {
    const spare = state.idle[0];
    if (spare !== undefined && ![...state.conns].some((conn) => conn.closing)) retire(spare);
  }

  /**
   * Hands idle sessions and free slots to waiters, first come first served. A waiter that needs a fresh
   * connection (a dedicated one, or other settings) while every slot is taken lets later waiters use idle
   * sessions meanwhile, and takes the next slot that frees up as a session reaches its RCPT cap; so a
   * half-used session is not quit early. Idle sessions nobody wants are quit for it at once, and after
   * `bypassLimit` waiters went past it, nobody goes past it any more.
   */
  function dispatch(key: string): void {
    const state = states.get(key);
    if (state === undefined) return;
    // A host backing off gets no new session; the ones already open carry on.
    const paused = backoffOf(key) !== undefined;
    const blocked: Waiter[] = [];
    for (const waiter of state.waiters) {
      // No idle session of any kind and no free slot: nobody further back can be served either.
      if (state.idle.length === 0 && (paused || state.conns.size >= perMx)) break;
      let conn = waiter.dedicated ? undefined : takeIdle(state, waiter.profile);
      if (conn === undefined && !paused && state.conns.size < perMx) {
        conn = newConnection(key, waiter.target, waiter.profile, waiter.dedicated);
      }
      if (conn !== undefined) {
        state.waiters.remove(waiter);
        for (const passed of blocked) passed.bypassed += 1;
        waiter.grant(conn);
        continue;
      }
      if (paused) continue; // no slot to make room for
      if (waiter.bypassed >= bypassLimit) {
        makeRoom(state);
        return;
      }
      blocked.push(waiter);
    }
    if (blocked.length > 0) makeRoom(state);
  }

  /**
   * Queues a request for a connection to `key` (at the front when it is queued again after losing its
   * session) and settles with its outcome. The request ends with the lease: when its budget is spent or its
   * signal fires, whether it is still waiting (it leaves the queue) or already at work (its session carries on,
   * and what the request would have got is dropped).
   */
  function enqueue(
    key: string,
    target: PoolTarget,
    request: RcptRequest,
    lease: Lease,
    retried: boolean,
  ): Promise<RcptOutcome> {
    return new Promise<RcptOutcome>((resolve, reject) => {
      const state = stateOf(key);
      const stop = () => {
        clearTimeout(timer);
        unwatch();
      };
      const waiter: Waiter = {
        target,
        profile: profileOf(request.settings),
        dedicated: request.dedicated === true,
        request,
        lease,
        retried,
        bypassed: 0,
        queued: false,
        slot: -1,
        grant(conn) {
          limit(() => run(conn, waiter)).catch(waiter.fail);
        },
        resolve(outcome) {
          stop();
          resolve(outcome);
        },
        fail(error) {
          stop();
          reject(error);
        },
      };
      function onExpire() {
        const waiting = state.waiters.remove(waiter);
        waiter.fail(leaseError(lease));
        if (waiting && state.conns.size === 0 && state.waiters.length === 0) states.delete(key);
      }
      const timer = setTimeout(onExpire, Math.max(0, lease.deadline - now()));
      const unwatch = watchOptionalAbort(lease.signal, onExpire);
      if (retried) state.waiters.unshift(waiter);
      else state.waiters.push(waiter);
      dispatch(key);
      if (!waiter.queued) return; // dispatch granted it a connection (it settles later, never in dispatch)
      const backoff = backoffOf(key);
      if (backoff !== undefined && !live(state) && !mayWait(waiter, backoff)) {
        state.waiters.remove(waiter);
        if (state.conns.size === 0 && state.waiters.length === 0) states.delete(key);
        waiter.fail(backoffError(key, backoff));
      }
    });
  }

  /** Puts a connection back after a request: idle for reuse, or quit. */
  function release(conn: Connection): void {
    conn.sink = undefined;
    if (conn.closing) return;
    const reusable = !closed && !spent(conn) && conn.rejects < maxRejects && conn.session?.usable === true;
    if (!reusable) {
      retire(conn);
      return;
    }
    const state = stateOf(conn.key);
    state.idle.push(conn);
    idleAll.add(conn);
    conn.idleTimer = setTimeout(() => retire(conn), idleMs);
    unref(conn.idleTimer);
    dispatch(conn.key);
  }

  /**
   * Whether `conn` has nothing left to give, whatever its server answers: the catch-all probe's own session, one
   * that reached `maxRcptPerSession`, or any session when idle ones are not kept.
   */
  function spent(conn: Connection): boolean {
    return conn.dedicated || idleMs <= 0 || conn.rcpts >= maxRcpt;
  }

  /** Replaces a stale connection by a fresh one in the same slot, without letting a waiter take the slot. */
  function replace(conn: Connection): Connection {
    leaveIdle(conn);
    conn.closing = true;
    conn.controller.abort(DROPPED);
    const state = stateOf(conn.key);
    state.conns.delete(conn);
    openCount -= 1;
    return newConnection(conn.key, conn.target, conn.profile, conn.dedicated);
  }

  async function openSession(conn: Connection, request: RcptRequest, lease: Lease): Promise<SmtpSession> {
    const session = await within(
      open(conn.target, {
        settings: request.settings,
        deadline: lease.deadline,
        signal: conn.controller.signal,
        trace: (direction, line) => conn.sink?.(direction, line),
      }),
      lease,
    );
    conn.session = session;
    return session;
  }

  function commandOptions(lease: Lease): CommandOptions {
    return lease.signal === undefined
      ? { deadline: lease.deadline }
      : { deadline: lease.deadline, signal: lease.signal };
  }

  /** Opens an envelope (`RSET` first when one is open); returns the refusal of `MAIL FROM`, if any. */
  async function newEnvelope(
    conn: Connection,
    session: SmtpSession,
    request: RcptRequest,
    lease: Lease,
  ): Promise<SmtpReply | null> {
    await resetEnvelope(conn, session, lease);
    const reply = await within(
      session.mailFrom(request.sender, { ...commandOptions(lease), smtpUtf8: request.smtpUtf8 }),
      lease,
    );
    if (!positive(reply)) {
      noteReply(conn, reply); // the server counts a refused MAIL FROM among the session's errors, as a refused RCPT TO
      return reply;
    }
    conn.envelope = { sender: request.sender, smtpUtf8: request.smtpUtf8, rcpts: 0 };
    return null;
  }

  /** Sends `RSET` when an envelope is open; a refusal throws. */
  async function resetEnvelope(conn: Connection, session: SmtpSession, lease: Lease): Promise<void> {
    if (conn.envelope === null) return;
    conn.envelope = null;
    counters.resets += 1;
    const reply = await within(session.reset(commandOptions(lease)), lease);
    if (!positive(reply)) {
      throw new SmtpError('protocol', `RSET was refused: ${reply.code}`, {
        command: 'RSET',
        smtpReply: reply,
      });
    }
  }

  async function recipient(conn: Connection, session: SmtpSession, request: RcptRequest, lease: Lease) {
    conn.rcpts += 1;
    conn.envelope!.rcpts += 1;
    counters.rcpts += 1;
    const reply = await within(session.rcptTo(request.recipient, commandOptions(lease)), lease);
    noteReply(conn, reply);
    return reply;
  }

  /**
   * One request on one connection: open it if new, then the envelope and `RCPT TO`. Resolves `null` when
   * the request went in a pipelined group, which settled it (and its riders) and released the connection.
   */
  async function serve(conn: Connection, waiter: Waiter): Promise<RcptOutcome | null> {
    const { request, lease } = waiter;
    const reused = conn.session !== null;
    conn.sink = lease.trace;
    let session: SmtpSession;
    if (conn.session === null) {
      session = await openSession(conn, request, lease);
    } else {
      session = conn.session;
      counters.reused += 1;
    }
    if (request.smtpUtf8 && !session.capabilities.extensions.has('SMTPUTF8')) {
      return { kind: 'no_smtputf8', reused };
    }
    const envelope = conn.envelope;
    const compatible =
      envelope !== null && envelope.sender === request.sender && (!request.smtpUtf8 || envelope.smtpUtf8);
    if (pipelines(session)) {
      if (!compatible) await resetEnvelope(conn, session, lease);
      const utf8 = compatible ? envelope.smtpUtf8 : request.smtpUtf8;
      const members = [waiter, ...board(conn, waiter, utf8)];
      try {
        await pipelined(conn, session, members, reused, { open: !compatible, utf8, retry452: true });
      } catch (error) {
        for (const member of members) member.fail(error);
        drop(conn);
      }
      return null;
    }
    if (!compatible) {
      const refused = await newEnvelope(conn, session, request, lease);
      if (refused !== null) return { kind: 'reply', stage: 'mail', reply: refused, reused };
    }
    let reply = await recipient(conn, session, request, lease);
    if (tooManyRecipients(reply) && conn.envelope!.rcpts > 1) {
      const refused = await newEnvelope(conn, session, request, lease);
      if (refused !== null) return { kind: 'reply', stage: 'mail', reply: refused, reused };
      reply = await recipient(conn, session, request, lease);
    }
    return { kind: 'reply', stage: 'rcpt', reply, reused };
  }

  /**
   * Whether requests on this connection go in pipelined command groups (a dedicated one too: its `MAIL FROM`
   * and `RCPT TO` share a round trip, but nobody rides along).
   */
  function pipelines(session: SmtpSession): boolean {
    return depth > 1 && session.rcptToMany !== undefined && session.capabilities.extensions.has('PIPELINING');
  }

  /**
   * Takes waiters that can share `leader`'s envelope on `conn` out of the queue (same settings and sender,
   * an SMTPUTF8 envelope for those who need one), up to the group's room: `pipelineDepth`, bounded by what the
   * session has left under `maxRcptPerSession`. Waiters passed over count as bypassed.
   */
  function board(conn: Connection, leader: Waiter, utf8: boolean): Waiter[] {
    const riders: Waiter[] = [];
    const state = states.get(conn.key);
    if (state === undefined || conn.dedicated) return riders; // the catch-all probe never shares a session
    // Every rider might be refused: a group never takes the session past its reject cap.
    const room = Math.min(depth, maxRcpt - conn.rcpts, maxRejects - conn.rejects) - 1;
    const passed: Waiter[] = [];
    for (const waiter of state.waiters) {
      if (riders.length >= room) break;
      const fits =
        !waiter.dedicated &&
        waiter.profile === conn.profile &&
        waiter.request.sender === leader.request.sender &&
        (!waiter.request.smtpUtf8 || utf8) &&
        !expired(waiter.lease);
      if (!fits) {
        if (waiter.bypassed >= bypassLimit) break;
        passed.push(waiter);
        continue;
      }
      state.waiters.remove(waiter);
      for (const other of passed) other.bypassed += 1;
      riders.push(waiter);
    }
    return riders;
  }

  /** Queues a request that lost its session again, at the front, for its one retry on another session. */
  function requeue(conn: Connection, waiter: Waiter): void {
    enqueue(conn.key, waiter.target, waiter.request, waiter.lease, true).then(waiter.resolve, waiter.fail);
  }

  /**
   * Sends the `RCPT TO`s of `members` (after `MAIL FROM` when `group.open`) as one pipelined group and
   * settles each member with its own reply. Members whose reply never came fail with the session's error,
   * or are queued again once when the session was stale (a reused one failing before any reply) or closed
   * with `421` after answering. A `452 4.5.3` to a recipient that was not the first of its envelope sends
   * those recipients again in a new envelope (once): on this session, or on another when the group ended with
   * `QUIT` (a session with nothing left to give: see `quit` below). Releases, retires or drops the connection at
   * the end.
   */
  async function pipelined(
    conn: Connection,
    session: SmtpSession,
    members: readonly Waiter[],
    reused: boolean,
    group: { open: boolean; utf8: boolean; retry452: boolean },
  ): Promise<void> {
    const sender = members[0]!.request.sender;
    const before = group.open ? 0 : (conn.envelope?.rcpts ?? 0);
    conn.envelope = { sender, smtpUtf8: group.utf8, rcpts: before + members.length };
    conn.rcpts += members.length;
    conn.sink = undefined; // each member's lines go to its own transcript
    counters.rcpts += members.length;
    if (group.retry452) counters.reused += members.length - 1;
    counters.groups += 1;
    const deadlines = members.map((member) => member.lease.deadline);
    for (let index = deadlines.length - 2; index >= 0; index--) {
      deadlines[index] = Math.max(deadlines[index]!, deadlines[index + 1]!);
    }
    const everyone: TranscriptHook = (direction, line) => {
      for (const member of members) member.lease.trace?.(direction, line);
    };
    const recipients = members.map((member, index): PipelinedRcpt => {
      const { recipient } = member.request;
      const { trace } = member.lease;
      const deadline = deadlines[index]!;
      return trace === undefined ? { recipient, deadline } : { recipient, deadline, onLine: trace };
    });
    // A session this group leaves spent ends the group with QUIT: a write and a round trip fewer, and the server's
    // process is free sooner.
    const quit = spent(conn);
    const replies = session.rcptToMany!(recipients, {
      quit,
      ...(group.open
        ? { mailFrom: { sender, smtpUtf8: group.utf8, deadline: deadlines[0]!, onLine: everyone } }
        : {}),
    });
    const mail = replies.mail === null ? null : await settled(replies.mail);
    const rcpts = await Promise.all(replies.rcpts.map(settled));

    const failed: { waiter: Waiter; error: unknown }[] = [];
    const again: { waiter: Waiter; reply: SmtpReply }[] = [];
    let answered = false;
    if (mail?.ok === true && !positive(mail.value)) {
      conn.envelope = null;
      answered = true;
      // The server counts the refused MAIL FROM and each RCPT TO it then refused for want of an envelope (503)
      // among the session's errors: so does the reject cap, or a sender refused at MAIL FROM would run a
      // reused session into the server's hard error limit.
      noteReply(conn, mail.value);
      for (const result of rcpts) if (result.ok) noteReply(conn, result.value);
      for (const [index, member] of members.entries()) {
        member.resolve({ kind: 'reply', stage: 'mail', reply: mail.value, reused: reused || index > 0 });
      }
    } else {
      for (const [index, member] of members.entries()) {
        const result = rcpts[index]!;
        if (!result.ok) {
          if (aboutRequest(result.error)) member.fail(result.error);
          else failed.push({ waiter: member, error: result.error });
          continue;
        }
        answered = true;
        noteReply(conn, result.value);
        if (group.retry452 && tooManyRecipients(result.value) && before + index > 0) {
          again.push({ waiter: member, reply: result.value });
          continue;
        }
        member.resolve({ kind: 'reply', stage: 'rcpt', reply: result.value, reused: reused || index > 0 });
      }
    }
    const cause = failed.length > 0 ? backoffReply(smtpReplyOf(failed[0]!.error)) : undefined;
    if (cause !== undefined) startBackoff(conn.key, cause);
    // While the host backs off, a member waits in line for the end when its budget outlasts it (each round
    // costs a whole backoff, so its budget bounds the rounds); else a stale session's members get one retry.
    const backoff = backoffOf(conn.key);
    const retry: Waiter[] = [];
    for (const { waiter, error } of failed) {
      const kind = error instanceof SmtpError ? error.kind : undefined;
      const stale = (reused && !answered) || (kind === 'rejected' && (reused || answered));
      const again = backoff === undefined ? stale && !waiter.retried : mayWait(waiter, backoff);
      if (again && !closed && kind !== 'aborted' && !expired(waiter.lease)) retry.push(waiter);
      else waiter.fail(error);
    }
    for (const waiter of retry.reverse()) requeue(conn, waiter);

    if (again.length > 0 && quit && !closed) {
      // The session is quitting: they go again first in line, to a session where each opens the envelope.
      for (const { waiter, reply } of again) {
        if (waiter.retried) waiter.resolve({ kind: 'reply', stage: 'rcpt', reply, reused: true });
        else requeue(conn, waiter);
      }
      retire(conn);
      return;
    }
    if (again.length > 0 && session.usable && !closed) {
      const first = again[0]!.waiter;
      try {
        await resetEnvelope(conn, session, first.lease);
      } catch (error) {
        for (const { waiter } of again) waiter.fail(error);
        drop(conn);
        return;
      }
      const waiters = again.map(({ waiter }) => waiter);
      await pipelined(conn, session, waiters, true, { open: true, utf8: group.utf8, retry452: false });
      return;
    }
    for (const { waiter, reply } of again) {
      waiter.resolve({ kind: 'reply', stage: 'rcpt', reply, reused: true });
    }
    if (session.usable) release(conn);
    else if (quit)
      retire(conn); // reads the 221 to the QUIT the group ended with
    else drop(conn);
  }

  /**
   * Counts a reply to `MAIL FROM` or `RCPT TO` on `conn`: a refusal counts against the reject cap (the server counts
   * it among the session's errors); a "too many errors" refusal also backs the host off and ends the session's reuse.
   */
  function noteReply(conn: Connection, reply: SmtpReply): void {
    if (!positive(reply)) conn.rejects += 1;
    const cause = backoffReply(reply);
    if (cause === undefined) return;
    conn.rejects = Math.max(conn.rejects, maxRejects);
    startBackoff(conn.key, cause);
  }

  function smtpReplyOf(error: unknown): SmtpReply | undefined {
    return error instanceof SmtpError ? error.smtpReply : undefined;
  }

  /** Errors about the request rather than the connection: the session stays usable. */
  function aboutRequest(error: unknown): boolean {
    return error instanceof SmtpError && (error.kind === 'smtputf8' || error.kind === 'unsafe_argument');
  }

  /** Serves a request; a reused session that turns out stale (421, closed, broken) is replaced once. */
  async function run(first: Connection, waiter: Waiter): Promise<void> {
    const { lease } = waiter;
    if (!closed && expired(lease)) {
      release(first); // the budget ran out while waiting for a global slot
      waiter.fail(leaseError(lease));
      return;
    }
    let conn = first;
    for (;;) {
      const reused = conn.session !== null;
      try {
        if (closed) throw new SmtpError('aborted', 'the verifier was disposed');
        const outcome = await serve(conn, waiter);
        if (outcome === null) return;
        release(conn);
        waiter.resolve(outcome);
        return;
      } catch (error) {
        if (aboutRequest(error) && conn.session?.usable === true) {
          release(conn);
          waiter.fail(error);
          return;
        }
        const cause = backoffReply(smtpReplyOf(error));
        if (cause !== undefined) startBackoff(conn.key, cause);
        const aborted = error instanceof SmtpError && error.kind === 'aborted';
        if (closed || aborted || expired(lease)) {
          drop(conn);
          waiter.fail(error);
          return;
        }
        const backoff = backoffOf(conn.key);
        if (backoff !== undefined) {
          // No new session now: wait in line for the end of the backoff, or give way with this error.
          drop(conn);
          if (mayWait(waiter, backoff)) requeue(conn, waiter);
          else waiter.fail(error);
          return;
        }
        if (!reused) {
          drop(conn);
          waiter.fail(error);
          return;
        }
        conn = replace(conn);
      }
    }
  }

  return {
    async rcpt(target, request, lease) {
      if (closed) throw new SmtpError('aborted', 'the verifier was disposed');
      if (expired(lease)) throw leaseError(lease);
      return enqueue(keyOf(target), target, request, lease, false);
    },
    stats() {
      return { ...counters, open: openCount };
    },
    async close() {
      closed = true;
      for (const backoff of backoffs.values()) clearTimeout(backoff.timer);
      backoffs.clear();
      for (const state of [...states.values()]) {
        for (const waiter of state.waiters.drain()) {
          waiter.fail(new SmtpError('aborted', 'the verifier was disposed'));
        }
        for (const conn of [...state.conns]) {
          if (conn.closing) continue;
          if (state.idle.includes(conn)) retire(conn);
          else conn.controller.abort(DROPPED);
        }
      }
      if (openCount > 0) await new Promise<void>((resolve) => (drained = resolve));
      await Promise.all(quitting);
    },
  };
}
