/**
 * The slots of the pool: every connection it holds, by mail host, with the per-MX and global counts, the idle
 * lists, and the ways a connection leaves (quit politely, dropped, replaced in its slot). Knows nothing of
 * queues or requests: when a slot frees up it says so through `onFreed`.
 * @module
 */

import { WaiterQueue } from '../waiter-queue.js';
import type { Connection, MxState, Waiter } from './connection.js';
import type { PoolTarget } from './types.js';

/**
 * The abort reason of a connection the pool is done with: a constant, so that tearing a session down builds no
 * `DOMException` (and captures no stack trace) each time.
 */
const DROPPED = 'the session pool is done with this connection';

/** How long a `QUIT` may take before the connection is simply dropped, in milliseconds. */
const QUIT_GRACE_MS = 2_000;

/** Options of {@link createSlots}. */
export interface SlotsOptions {
  /** Most connections open over all mail hosts; opening one past it quits the least recently used idle one. */
  readonly concurrency: number;
  /** How long an idle connection is kept, in milliseconds. */
  readonly idleMs: number;
  /** The pool's clock. */
  readonly now: () => number;
  /** Counters the slots keep up to date. */
  readonly counters: { opened: number; peakPerMx: number };
  /** A connection of `key` left its slot (after the books are updated). */
  readonly onFreed: (key: string) => void;
  /**
   * The pool is done with a connection's session: `quitting` as QUIT goes out, `quit` once its reply came or its
   * grace ran out, `drop` when it was dropped or replaced.
   */
  readonly onEnded: (conn: Connection, how: 'quitting' | 'quit' | 'drop') => void;
}

/** The connections of the pool. */
export interface Slots {
  /** The state of `key`, created when missing. */
  stateOf(key: string): MxState;
  /** The state of `key`, if there is one. */
  existing(key: string): MxState | undefined;
  /** Forgets the state of `key` when it has neither connections nor waiters. */
  forgetIfEmpty(key: string): void;
  /** Every mail host's state. */
  states(): MxState[];
  /** Connections holding a slot. */
  count(): number;
  /** Takes a new slot of `key` (quitting the least recently used idle connection past `concurrency`). */
  open(key: string, target: PoolTarget, profile: string, dedicated: boolean): Connection;
  /** Puts a connection in its host's idle list, to be quit after `idleMs`. */
  park(conn: Connection): void;
  /** Takes a connection out of the idle lists. */
  leaveIdle(conn: Connection): void;
  /** Drops a connection at once (no QUIT): for sessions in an unknown state. */
  drop(conn: Connection): void;
  /** Quits a connection politely; its slot frees up as `QUIT` goes out. */
  retire(conn: Connection): void;
  /** Replaces a stale connection by a fresh one in the same slot, without letting a waiter take the slot. */
  replace(conn: Connection): Connection;
  /** Quits the least recently used idle session of `state` to free a slot, unless one is already quitting. */
  makeRoom(state: MxState): void;
  /** Whether `state` has a connection that can still serve requests (not quitting or dropped). */
  live(state: MxState): boolean;
  /** Quits idle connections and aborts busy ones; resolves once every one is closed. */
  closeAll(): Promise<void>;
}

/** Creates the slots of a pool. */
export function createSlots(options: SlotsOptions): Slots {
  const { concurrency, idleMs, now, counters, onFreed, onEnded } = options;
  const states = new Map<string, MxState>();
  /** Every idle connection, least recently used first (a Set keeps insertion order). */
  const idleAll = new Set<Connection>();
  const quitting = new Set<Promise<void>>();
  let drained: (() => void) | undefined;
  let openCount = 0;

  function stateOf(key: string): MxState {
    let state = states.get(key);
    if (state === undefined) {
      state = { conns: new Set(), idle: [], waiters: new WaiterQueue<Waiter>() };
      states.set(key, state);
    }
    return state;
  }

  function leaveIdle(conn: Connection): void {
    if (conn.idleTimer !== undefined) clearTimeout(conn.idleTimer);
    conn.idleTimer = undefined;
    if (conn.proofTimer !== undefined) clearTimeout(conn.proofTimer);
    conn.proofTimer = undefined;
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
    onFreed(conn.key);
    if (openCount === 0) drained?.();
  }

  function retire(conn: Connection): void {
    if (conn.closing) return;
    leaveIdle(conn);
    conn.closing = true;
    const session = conn.session;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, QUIT_GRACE_MS);
      (timer as { unref?: () => void }).unref?.();
    });
    // A retired session is never busy, so QUIT is written in this tick; the slot is handed on in a microtask after
    // it, never from inside a dispatch under way. The wait for the 221 and the socket's close go on in the
    // background, bounded by QUIT_GRACE_MS, and closeAll() still waits for them.
    const sent = session === null ? Promise.resolve() : session.quit({ deadline: now() + QUIT_GRACE_MS });
    onEnded(conn, 'quitting');
    queueMicrotask(() => forget(conn));
    const done = Promise.race([sent, grace])
      .catch(() => undefined)
      .then(() => {
        clearTimeout(timer);
        onEnded(conn, 'quit');
        conn.controller.abort(DROPPED);
        quitting.delete(done);
      });
    quitting.add(done);
  }

  /** Closes a connection at once (no QUIT), its slot not yet given back. */
  function abandon(conn: Connection): void {
    leaveIdle(conn);
    conn.closing = true;
    conn.controller.abort(DROPPED);
    onEnded(conn, 'drop');
  }

  function open(key: string, target: PoolTarget, profile: string, dedicated: boolean): Connection {
    const state = stateOf(key);
    if (openCount >= concurrency) {
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
      held: [],
      proofTimer: undefined,
      slowestMs: 0,
    };
    state.conns.add(conn);
    openCount += 1;
    counters.opened += 1;
    counters.peakPerMx = Math.max(counters.peakPerMx, state.conns.size);
    return conn;
  }

  return {
    stateOf,
    existing: (key) => states.get(key),
    forgetIfEmpty(key) {
      const state = states.get(key);
      if (state !== undefined && state.conns.size === 0 && state.waiters.length === 0) states.delete(key);
    },
    states: () => [...states.values()],
    count: () => openCount,
    open,
    park(conn) {
      stateOf(conn.key).idle.push(conn);
      idleAll.add(conn);
      conn.idleTimer = setTimeout(() => retire(conn), idleMs);
      (conn.idleTimer as { unref?: () => void }).unref?.();
    },
    leaveIdle,
    drop(conn) {
      abandon(conn);
      forget(conn);
    },
    retire,
    replace(conn) {
      abandon(conn);
      stateOf(conn.key).conns.delete(conn);
      openCount -= 1;
      return open(conn.key, conn.target, conn.profile, conn.dedicated);
    },
    makeRoom(state) {
      const spare = state.idle[0];
      if (spare !== undefined && ![...state.conns].some((conn) => conn.closing)) retire(spare);
    },
    live(state) {
      for (const conn of state.conns) if (!conn.closing) return true;
      return false;
    },
    async closeAll() {
      for (const state of [...states.values()]) {
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
