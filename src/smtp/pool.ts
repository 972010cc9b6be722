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
import { NO_POOL_STATS, type PoolStats } from '../contracts/prober.js';
import { SmtpError } from '../errors.js';
import { weakMemo } from '../weak-memo.js';
import { backoffError, createBackoffBook, mayWait } from './pool/backoff.js';
import type { Connection, MxState, Waiter } from './pool/connection.js';
import { pickRiders, planDispatch } from './pool/dispatch.js';
import { expired, leaseError, notTriedError } from './pool/lease.js';
import { connectionLife } from './pool/resource.js';
import { createSlots } from './pool/slots.js';
import { stepKeeper } from './pool/step.js';
import type {
  Lease,
  PoolTarget,
  RcptOutcome,
  RcptRequest,
  SessionPool,
  SessionPoolOptions,
  SessionSettings,
} from './pool/types.js';
import type { SmtpReply } from './types.js';

export type {
  Lease,
  OpenContext,
  PoolStats,
  PoolTarget,
  RcptOutcome,
  RcptRequest,
  SessionFactory,
  SessionPool,
  SessionPoolOptions,
  SessionSettings,
} from './pool/types.js';

/** Most `RCPT TO` in one pipelined command group, unless `pipelineDepth` says otherwise. */
export const DEFAULT_PIPELINE_DEPTH = 10;

function keyOf(target: PoolTarget): string {
  return target.host.includes(':') ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}

/** The profile of each settings object: callers reuse one object for many requests (see checks/smtp). */
const profileOf = weakMemo((settings: SessionSettings): string => `${settings.heloHost}\n${settings.tls}`);

/**
 * A limit of the pool: `value`, or `fallback` when it is `undefined`. The verifier hands the pool options it has
 * validated against `VERIFY_FIELDS` already (an `OptionsError` for the user); a value that still fails here is a
 * caller's bug, hence a plain `RangeError`, and no upper bound.
 */
function integerAtLeast(value: number | undefined, fallback: number, name: string, min: number): number {
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
 *
 * This file is the queue: requests wait per mail host and are handed idle sessions or free slots by
 * `planDispatch`; one connection's life (open, envelope, groups, release) is in `pool/resource.ts`, the slots in
 * `pool/slots.ts`, the backoff of a host in `pool/backoff.ts`.
 * @example
 * const pool = createSessionPool({ open: (target, context) => openMySession(target, context) });
 * const outcome = await pool.rcpt(target, { sender, recipient, smtpUtf8: false, settings }, { deadline });
 * await pool.close();
 */
export function createSessionPool(options: SessionPoolOptions): SessionPool {
  const perMx = integerAtLeast(options.perMxConcurrency, 2, 'perMxConcurrency', 1);
  const maxRcpt = integerAtLeast(options.maxRcptPerSession, 20, 'maxRcptPerSession', 1);
  const maxRejects = integerAtLeast(options.maxRejectsPerSession, 8, 'maxRejectsPerSession', 1);
  const idleMs = integerAtLeast(options.idleSessionMs, 5_000, 'idleSessionMs', 0);
  const depth = integerAtLeast(options.pipelineDepth, DEFAULT_PIPELINE_DEPTH, 'pipelineDepth', 1);
  const backoffMs = integerAtLeast(options.mxBackoffMs, 30_000, 'mxBackoffMs', 0);
  /** Most waiters that may go past one waiting for a fresh connection (about two sessions' worth). */
  const bypassLimit = Math.min(maxRcpt * perMx, 50);
  const limit = pLimit(integerAtLeast(options.concurrency, 64, 'concurrency', 1));
  const now = options.now ?? Date.now;

  let closed = false;
  const counters: { -readonly [K in keyof PoolStats]: number } = { ...NO_POOL_STATS };
  const slots = createSlots({
    concurrency: limit.concurrency,
    idleMs,
    now,
    counters,
    onFreed(key) {
      turnAway(key);
      const state = slots.existing(key);
      if (state === undefined) return;
      if (state.conns.size === 0 && state.waiters.length === 0) slots.forgetIfEmpty(key);
      else dispatch(key);
    },
    onEnded: (conn, how) => step.ended(conn, how),
  });
  const backoffs = createBackoffBook({ ms: backoffMs, now, onEnd: (key) => dispatch(key) });
  const step = stepKeeper({
    now,
    closed: () => closed,
    backoffOf: (key) => backoffs.of(key),
    requeue,
    leaveIdle: (conn) => slots.leaveIdle(conn),
    release: (conn) => life.release(conn),
  });
  const life = connectionLife({
    limits: { maxRcpt, maxRejects, idleMs, depth },
    counters,
    slots,
    step,
    open: options.open,
    now,
    closed: () => closed,
    startBackoff,
    backoffOf: (key) => backoffs.of(key),
    dispatch,
    board,
    requeue,
  });

  /**
   * Puts the mail host `key` in backoff for `mxBackoffMs` after `reply` (a longer one if it already was): no new
   * session until it ends, when the requests still waiting get their turn.
   */
  function startBackoff(key: string, reply: SmtpReply): void {
    if (closed) return;
    const started = backoffs.start(key, reply);
    if (started === 'off') return;
    if (started === 'started') counters.backoffs += 1;
    turnAway(key);
  }

  /**
   * While `key` backs off and no session of it is left to serve them, fails the waiting requests that may not
   * wait for the end (kind `backoff`): they go to their next mail host, or end `unknown`.
   */
  function turnAway(key: string): void {
    const backoff = backoffs.of(key);
    const state = slots.existing(key);
    if (backoff === undefined || state === undefined || slots.live(state)) return;
    for (const waiter of state.waiters) {
      if (mayWait(waiter.request, waiter.lease, backoff)) continue;
      state.waiters.remove(waiter);
      waiter.fail(backoffError(key, backoff, now()));
    }
    slots.forgetIfEmpty(key);
  }

  /** Hands idle sessions and free slots of `key` to its waiters, as {@link planDispatch} decides. */
  function dispatch(key: string): void {
    const state = slots.existing(key);
    if (state === undefined) return;
    const plan = planDispatch<Waiter, Connection>(state.waiters, {
      idle: state.idle.map((conn) => ({
        conn,
        profile: conn.profile,
        usable: conn.session?.usable === true,
      })),
      open: state.conns.size,
      perMx,
      paused: backoffs.of(key) !== undefined,
      bypassLimit,
    });
    for (const conn of plan.retire) slots.retire(conn);
    for (const { conn } of plan.grants) if (conn !== null) slots.leaveIdle(conn);
    for (const { waiter, by } of plan.passed) waiter.bypassed += by;
    for (const { waiter, conn } of plan.grants) {
      state.waiters.remove(waiter);
      waiter.grant(conn ?? slots.open(key, waiter.target, waiter.profile, waiter.dedicated));
    }
    if (plan.makeRoom) slots.makeRoom(state);
  }

  /**
   * Takes waiters that can share `leader`'s envelope on `conn` out of the queue, up to the group's room:
   * `pipelineDepth`, bounded by what the session has left under `maxRcptPerSession` and, since every rider might
   * be refused, under `maxRejectsPerSession`.
   */
  function board(conn: Connection, leader: Waiter, utf8: boolean): Waiter[] {
    const state = slots.existing(conn.key);
    if (state === undefined || conn.dedicated) return []; // the catch-all probe never shares a session
    const room = Math.min(depth, maxRcpt - conn.rcpts, maxRejects - conn.rejects) - 1;
    const { riders, passed } = pickRiders(
      state.waiters,
      { profile: conn.profile, sender: leader.request.sender, utf8, room, bypassLimit },
      (waiter) => ({
        sender: waiter.request.sender,
        smtpUtf8: waiter.request.smtpUtf8,
        expired: expired(waiter.lease, now()),
        alone: waiter.solo,
      }),
    );
    for (const rider of riders) {
      state.waiters.remove(rider);
      rider.started = true;
    }
    for (const { waiter, by } of passed) waiter.bypassed += by;
    return riders;
  }

  function requeue(conn: Connection, waiter: Waiter, solo = false): void {
    enqueue(conn.key, waiter.target, waiter.request, waiter.lease, true, solo).then(
      waiter.resolve,
      waiter.fail,
    );
  }

  /**
   * Queues a request for a connection to `key` (at the front when it is queued again after losing its
   * session; `solo` when it is to go alone, see `Waiter.solo`) and settles with its outcome. The request ends with the lease: when its budget is spent or its
   * signal fires, whether it is still waiting (it leaves the queue) or already at work (its session carries on,
   * and what the request would have got is dropped). A request whose budget ran out before its work began fails
   * with an error that says it was not tried and how long it waited (`notTriedError`).
   */
  function enqueue(
    key: string,
    target: PoolTarget,
    request: RcptRequest,
    lease: Lease,
    retried: boolean,
    solo = false,
  ): Promise<RcptOutcome> {
    return new Promise<RcptOutcome>((resolve, reject) => {
      const state: MxState = slots.stateOf(key);
      const queuedAt = now();
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
        solo,
        bypassed: 0,
        started: retried,
        queued: false,
        slot: -1,
        grant(conn) {
          limit(() => {
            // The budget ran out while it waited for a global slot: it was not tried (the run then lets the slot go).
            if (expired(lease, now())) onExpire();
            else waiter.started = true;
            return life.run(conn, waiter);
          }).catch(waiter.fail);
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
        waiter.fail(waiter.started ? leaseError(lease) : notTriedError(lease, now() - queuedAt, waiting));
        if (waiting) slots.forgetIfEmpty(key);
      }
      const timer = setTimeout(onExpire, Math.max(0, lease.deadline - now()));
      const unwatch = watchOptionalAbort(lease.signal, onExpire);
      if (retried) state.waiters.unshift(waiter);
      else state.waiters.push(waiter);
      dispatch(key);
      if (!waiter.queued) return; // dispatch granted it a connection (it settles later, never in dispatch)
      const backoff = backoffs.of(key);
      if (backoff !== undefined && !slots.live(state) && !mayWait(request, lease, backoff)) {
        state.waiters.remove(waiter);
        slots.forgetIfEmpty(key);
        waiter.fail(backoffError(key, backoff, now()));
      }
    });
  }

  return {
    async rcpt(target, request, lease) {
      if (closed) throw new SmtpError('aborted', 'the verifier was disposed');
      if (expired(lease, now())) throw leaseError(lease);
      return enqueue(keyOf(target), target, request, lease, false);
    },
    stats() {
      let waiting = limit.pendingCount;
      for (const state of slots.states()) waiting += state.waiters.length;
      return { ...counters, open: slots.count(), waiting };
    },
    async close() {
      closed = true;
      backoffs.clear();
      for (const state of slots.states()) {
        for (const waiter of state.waiters.drain()) {
          waiter.fail(new SmtpError('aborted', 'the verifier was disposed'));
        }
      }
      await slots.closeAll();
    },
  };
}
