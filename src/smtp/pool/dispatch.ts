/**
 * Fair dispatch, as pure decisions over plain data: which waiting request gets which idle session or free slot
 * ({@link planDispatch}), and which waiting requests ride along in a pipelined group ({@link pickRiders}). The
 * pool applies the plans; nothing here touches a connection.
 * @module
 */

/** A waiting request, as dispatch sees it. */
export interface Candidate {
  /** The settings profile it needs a session of. */
  readonly profile: string;
  /** It needs a connection of its own (the catch-all probe). */
  readonly dedicated: boolean;
  /** How many later requests were served while it waited for a fresh connection. */
  readonly bypassed: number;
}

/** An idle session of the mail host, least recently used first in the list dispatch gets. */
export interface IdleSlot<C> {
  readonly conn: C;
  readonly profile: string;
  /** The session can take another command. */
  readonly usable: boolean;
}

/** The mail host's slots as dispatch sees them. */
export interface SlotView<C> {
  /** Idle sessions, least recently used first. */
  readonly idle: readonly IdleSlot<C>[];
  /** Connections holding a slot (opening, busy, idle). */
  readonly open: number;
  /** Most connections to the host. */
  readonly perMx: number;
  /** The host backs off: no new connection. */
  readonly paused: boolean;
  /** Most waiters that may go past one waiting for a fresh connection. */
  readonly bypassLimit: number;
}

/** What dispatch decided, in the order it is to be done. */
export interface DispatchPlan<W, C> {
  /** Idle sessions met that cannot take a command: quit them. */
  readonly retire: C[];
  /** Requests served, in queue order: each on an idle session, or on a new connection (`conn: null`). */
  readonly grants: { readonly waiter: W; readonly conn: C | null }[];
  /** Waiters passed over by later ones, and by how many. */
  readonly passed: { readonly waiter: W; readonly by: number }[];
  /** Quit the least recently used idle session to free a slot for a waiter that needs a fresh connection. */
  readonly makeRoom: boolean;
}

/**
 * Decides how the waiters of one mail host are served, first come first served: each takes the most recently used
 * idle session of its profile (retiring unusable ones met on the way), else a free slot while the host does not
 * back off. A waiter that needs a fresh connection (a dedicated one, or other settings) while every slot is taken
 * lets later waiters use idle sessions meanwhile, and takes the next slot that frees up as a session reaches its
 * RCPT cap, so a half-used session is not quit early; idle sessions nobody wants are quit for it at once, and after
 * `bypassLimit` waiters went past it, nobody goes past it any more.
 * @example
 * planDispatch([{ profile: 'a', dedicated: false, bypassed: 0 }], { idle: [], open: 0, perMx: 2, paused: false, bypassLimit: 40 });
 * // { retire: [], grants: [{ waiter, conn: null }], passed: [], makeRoom: false }
 */
export function planDispatch<W extends Candidate, C>(
  waiters: Iterable<W>,
  slots: SlotView<C>,
): DispatchPlan<W, C> {
  const idle = [...slots.idle];
  let open = slots.open;
  const plan: DispatchPlan<W, C> = { retire: [], grants: [], passed: [], makeRoom: false };
  const blocked: { waiter: W; by: number }[] = [];
  let stopped = false;
  for (const waiter of waiters) {
    // No idle session of any kind and no free slot: nobody further back can be served either.
    if (idle.length === 0 && (slots.paused || open >= slots.perMx)) break;
    let conn: C | null | undefined = waiter.dedicated
      ? undefined
      : takeIdle(idle, waiter.profile, plan.retire);
    if (conn === undefined && !slots.paused && open < slots.perMx) {
      conn = null;
      open += 1;
    }
    if (conn !== undefined) {
      for (const passed of blocked) passed.by += 1;
      plan.grants.push({ waiter, conn });
      continue;
    }
    if (slots.paused) continue; // no slot to make room for
    if (waiter.bypassed >= slots.bypassLimit) {
      stopped = true;
      break;
    }
    blocked.push({ waiter, by: 0 });
  }
  for (const passed of blocked) if (passed.by > 0) plan.passed.push(passed);
  return { ...plan, makeRoom: stopped || blocked.length > 0 };
}

/** Takes the most recently used usable idle session of `profile` out of `idle`; unusable ones go to `retire`. */
function takeIdle<C>(idle: IdleSlot<C>[], profile: string, retire: C[]): C | undefined {
  for (let index = idle.length - 1; index >= 0; index--) {
    const slot = idle[index]!;
    if (slot.profile !== profile) continue;
    idle.splice(index, 1);
    if (!slot.usable) {
      retire.push(slot.conn);
      continue;
    }
    return slot.conn;
  }
  return undefined;
}

/** What boarding needs to know of a waiting request besides its {@link Candidate} fields. */
export interface RiderFacts {
  readonly sender: string;
  /** Its recipient needs an envelope opened with SMTPUTF8. */
  readonly smtpUtf8: boolean;
  /** Its budget is spent or it was aborted. */
  readonly expired: boolean;
  /** It must go alone (asked again after its session fell out of step). */
  readonly alone: boolean;
}

/** The group a leader opens on its session. */
export interface Boarding {
  /** The leader's settings profile and sender. */
  readonly profile: string;
  readonly sender: string;
  /** The group's envelope is (or will be) opened with SMTPUTF8. */
  readonly utf8: boolean;
  /** Most riders besides the leader. */
  readonly room: number;
  /** Most waiters that may go past one that does not fit. */
  readonly bypassLimit: number;
}

/**
 * Picks the waiters that can share a leader's envelope (same settings and sender, an SMTPUTF8 envelope for those
 * who need one, budget left, not bound to go alone), in queue order, up to `room`; waiters passed over count as bypassed, and one passed
 * over `bypassLimit` times already stops the boarding. `facts` tells what each waiter asks.
 * @example
 * pickRiders(queue, { profile: 'p', sender: 's@x', utf8: false, room: 9, bypassLimit: 40 }, (w) => w.facts);
 */
export function pickRiders<W extends Candidate>(
  waiters: Iterable<W>,
  boarding: Boarding,
  facts: (waiter: W) => RiderFacts,
): { readonly riders: W[]; readonly passed: { readonly waiter: W; readonly by: number }[] } {
  const riders: W[] = [];
  const passed: { waiter: W; by: number }[] = [];
  for (const waiter of waiters) {
    if (riders.length >= boarding.room) break;
    let fits = !waiter.dedicated && waiter.profile === boarding.profile;
    if (fits) {
      const asks = facts(waiter);
      fits =
        asks.sender === boarding.sender && (!asks.smtpUtf8 || boarding.utf8) && !asks.expired && !asks.alone;
    }
    if (!fits) {
      if (waiter.bypassed >= boarding.bypassLimit) break;
      passed.push({ waiter, by: 0 });
      continue;
    }
    for (const other of passed) other.by += 1;
    riders.push(waiter);
  }
  return { riders, passed: passed.filter((entry) => entry.by > 0) };
}
