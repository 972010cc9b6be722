/**
 * The pool's dispatch decisions as pure functions: which waiter gets which idle session or free slot, and who
 * rides along in a pipelined group. Table tests over plain data, no connection involved.
 */
import { describe, expect, it } from 'vitest';
import {
  type Candidate,
  type IdleSlot,
  pickRiders,
  planDispatch,
  type SlotView,
} from '../../src/smtp/pool/dispatch.js';

interface W extends Candidate {
  readonly name: string;
  readonly sender?: string;
  readonly smtpUtf8?: boolean;
  readonly expired?: boolean;
  readonly alone?: boolean;
}

const w = (name: string, extra: Partial<W> = {}): W => ({
  name,
  profile: 'p',
  dedicated: false,
  bypassed: 0,
  ...extra,
});
const idle = (conn: string, extra: Partial<IdleSlot<string>> = {}): IdleSlot<string> => ({
  conn,
  profile: 'p',
  usable: true,
  ...extra,
});
const slots = (extra: Partial<SlotView<string>> = {}): SlotView<string> => ({
  idle: [],
  open: 0,
  perMx: 2,
  paused: false,
  bypassLimit: 40,
  ...extra,
});

/** A plan in names: `a=c1` (idle c1), `b=new` (a new connection). */
function summary(plan: ReturnType<typeof planDispatch<W, string>>) {
  return {
    grants: plan.grants.map(({ waiter, conn }) => `${waiter.name}=${conn ?? 'new'}`),
    retire: plan.retire,
    passed: plan.passed.map(({ waiter, by }) => `${waiter.name}+${by}`),
    makeRoom: plan.makeRoom,
  };
}

describe('planDispatch', () => {
  it.each([
    {
      case: 'free slots: one new connection per waiter up to perMx',
      waiters: [w('a'), w('b'), w('c')],
      view: slots(),
      grants: ['a=new', 'b=new'],
      retire: [],
      passed: [],
      makeRoom: false,
    },
    {
      case: 'an idle session is taken before a new slot, the most recently used first',
      waiters: [w('a'), w('b')],
      view: slots({ idle: [idle('old'), idle('recent')], open: 2 }),
      grants: ['a=recent', 'b=old'],
      retire: [],
      passed: [],
      makeRoom: false,
    },
    {
      case: 'an unusable idle session is retired on the way, and its slot is not reused in the same pass',
      waiters: [w('a')],
      view: slots({ idle: [idle('good'), idle('dead', { usable: false })], open: 2 }),
      grants: ['a=good'],
      retire: ['dead'],
      passed: [],
      makeRoom: false,
    },
    {
      case: 'every slot busy, nothing idle: nobody is served and nothing is quit',
      waiters: [w('a'), w('b')],
      view: slots({ open: 2 }),
      grants: [],
      retire: [],
      passed: [],
      makeRoom: false,
    },
    {
      case: 'a dedicated waiter never takes an idle session; later ones do, and it asks for room',
      waiters: [w('probe', { dedicated: true }), w('b')],
      view: slots({ idle: [idle('c1')], open: 2 }),
      grants: ['b=c1'],
      retire: [],
      passed: ['probe+1'],
      makeRoom: true,
    },
    {
      case: 'another profile waits for a slot while same-profile waiters use the idle session',
      waiters: [w('other', { profile: 'q' }), w('b')],
      view: slots({ idle: [idle('c1')], open: 2 }),
      grants: ['b=c1'],
      retire: [],
      passed: ['other+1'],
      makeRoom: true,
    },
    {
      case: 'after bypassLimit waiters went past it, nobody goes past it any more',
      waiters: [w('probe', { dedicated: true, bypassed: 40 }), w('b')],
      view: slots({ idle: [idle('c1')], open: 2 }),
      grants: [],
      retire: [],
      passed: [],
      makeRoom: true,
    },
    {
      case: 'a host backing off opens nothing, idle sessions still serve, and no room is made',
      waiters: [w('probe', { dedicated: true }), w('b'), w('c')],
      view: slots({ idle: [idle('c1')], open: 1, paused: true }),
      grants: ['b=c1'],
      retire: [],
      passed: [],
      makeRoom: false,
    },
    {
      case: 'a host backing off with nothing idle serves nobody',
      waiters: [w('a')],
      view: slots({ paused: true }),
      grants: [],
      retire: [],
      passed: [],
      makeRoom: false,
    },
  ])('$case', ({ waiters, view, grants, retire, passed, makeRoom }) => {
    expect(summary(planDispatch(waiters, view))).toEqual({ grants, retire, passed, makeRoom });
  });

  it('does not change the idle list it is given', () => {
    const list = [idle('c1'), idle('c2')];
    planDispatch([w('a'), w('b')], slots({ idle: list, open: 2 }));
    expect(list.map((slot) => slot.conn)).toEqual(['c1', 'c2']);
  });
});

describe('pickRiders', () => {
  const boarding = { profile: 'p', sender: 's@x.test', utf8: false, room: 2, bypassLimit: 3 };
  const facts = (waiter: W) => ({
    sender: waiter.sender ?? 's@x.test',
    smtpUtf8: waiter.smtpUtf8 === true,
    expired: waiter.expired === true,
    alone: waiter.alone === true,
  });
  it.each([
    {
      case: 'takes waiters in order up to the room',
      queue: [w('a'), w('b'), w('c')],
      riders: ['a', 'b'],
      passed: [],
    },
    {
      case: 'skips another sender, which counts as passed once per rider after it',
      queue: [w('x', { sender: 'other@x.test' }), w('a'), w('b')],
      riders: ['a', 'b'],
      passed: ['x+2'],
    },
    {
      case: 'skips an UTF-8 recipient when the envelope is not SMTPUTF8',
      queue: [w('u', { smtpUtf8: true }), w('a')],
      riders: ['a'],
      passed: ['u+1'],
    },
    {
      case: 'skips a dedicated request, another profile and a spent budget',
      queue: [w('d', { dedicated: true }), w('q', { profile: 'q' }), w('e', { expired: true }), w('a')],
      riders: ['a'],
      passed: ['d+1', 'q+1', 'e+1'],
    },
    {
      case: 'skips a request bound to go alone (asked again after its session fell out of step)',
      queue: [w('solo', { alone: true }), w('a')],
      riders: ['a'],
      passed: ['solo+1'],
    },
    {
      case: 'stops at a waiter already passed bypassLimit times',
      queue: [w('x', { sender: 'other@x.test', bypassed: 3 }), w('a')],
      riders: [],
      passed: [],
    },
    {
      case: 'a passed waiter with no rider after it is not counted',
      queue: [w('a'), w('x', { sender: 'other@x.test' })],
      riders: ['a'],
      passed: [],
    },
  ])('$case', ({ queue, riders, passed }) => {
    const picked = pickRiders(queue, boarding, facts);
    expect(picked.riders.map((rider) => rider.name)).toEqual(riders);
    expect(picked.passed.map(({ waiter, by }) => `${waiter.name}+${by}`)).toEqual(passed);
  });

  it('takes nobody when the session has no room left', () => {
    expect(pickRiders([w('a')], { ...boarding, room: 0 }, facts).riders).toEqual([]);
  });
});
