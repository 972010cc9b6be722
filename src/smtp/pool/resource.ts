/**
 * One connection's life in the pool (nodemailer's `pool-resource`): open the session, serve a request on it (one
 * `RCPT TO`, or a pipelined group with riders), settle each request from its own reply, and then put the
 * connection back, quit it or drop it. A reused session that turns out stale is replaced once, so a stale
 * connection never decides a verdict. The queue and the slots belong to the pool; this file reaches them through
 * a {@link ResourceContext}.
 * @module
 */

import { SmtpError } from '../../errors.js';
import { commandsSpan, endWithOutcome, smtpSpan } from '../../smtp-spans.js';
import { endSpan, type TraceSpan } from '../../tracing.js';
import type { PipelinedRcpt, SmtpReply, SmtpSession, TranscriptHook } from '../types.js';
import { type Backoff, mayWait } from './backoff.js';
import type { Connection, Waiter } from './connection.js';
import { envelopeCommands, fitsEnvelope } from './envelope.js';
import { mayRetryLost, readGroup } from './group.js';
import { expired, leaseError, replyDeadline, within } from './lease.js';
import { aboutRequest, backoffReply, settled, smtpReplyOf, tooManyRecipients } from './replies.js';
import type { Slots } from './slots.js';
import type { StepKeeper } from './step.js';
import type { Lease, PoolStats, RcptOutcome, RcptRequest, SessionFactory } from './types.js';

/**
 * How long past its lease's deadline a session's open may still end with its own error. The session factory holds
 * its connect and its greeting to the same deadline, so at the deadline the open fails as what it was waiting for (a
 * server that never greeted is `no_greeting`, not a spent budget) even when a loaded machine fires both timers in one
 * turn; the lease's timer only bounds a factory that ignores the deadline.
 */
const OPEN_GRACE_MS = 250;

/** The pool's limits that shape one connection's life. */
export interface ResourceLimits {
  readonly maxRcpt: number;
  readonly maxRejects: number;
  readonly idleMs: number;
  /** Most `RCPT TO` in one pipelined group. */
  readonly depth: number;
}

/** What a connection's life needs from the pool. */
export interface ResourceContext {
  readonly limits: ResourceLimits;
  readonly counters: { -readonly [K in keyof PoolStats]: PoolStats[K] };
  readonly slots: Slots;
  /** Holds outcomes until their session proves it kept in step. */
  readonly step: StepKeeper;
  readonly open: SessionFactory;
  readonly now: () => number;
  /** The pool is closed. */
  closed(): boolean;
  /** Puts the mail host `key` in backoff after `reply`. */
  startBackoff(key: string, reply: SmtpReply): void;
  /** The backoff of `key`, while it lasts. */
  backoffOf(key: string): Backoff | undefined;
  /** Hands idle sessions and free slots of `key` to its waiters. */
  dispatch(key: string): void;
  /** Takes the waiters that can ride along in `leader`'s group on `conn` out of the queue. */
  board(conn: Connection, leader: Waiter, utf8: boolean): Waiter[];
  /**
   * Queues a request that lost its session again, at the front, for its one retry on another session; `solo` to
   * send it alone, one command at a time.
   */
  requeue(conn: Connection, waiter: Waiter, solo?: boolean): void;
}

/** One connection's life: {@link ConnectionLife.run} serves a waiter granted `conn`. */
export interface ConnectionLife {
  /** Serves `waiter` on `conn` (and riders, when pipelining), then releases, retires or drops the connection. */
  run(conn: Connection, waiter: Waiter): Promise<void>;
  /** Puts a connection back after a request: idle for reuse, or quit. */
  release(conn: Connection): void;
}

/** The group of a pipelined request: whether it opens the envelope, with SMTPUTF8, and may re-ask after 452. */
interface GroupShape {
  readonly open: boolean;
  readonly utf8: boolean;
  readonly retry452: boolean;
}

/** Counts a reply to `RCPT TO` (or a refused `MAIL FROM`) by its class (2xx-5xx). */
function countReply(counters: ResourceContext['counters'], code: number): void {
  if (code >= 500) counters.replies5xx += 1;
  else if (code >= 400) counters.replies4xx += 1;
  else if (code >= 300) counters.replies3xx += 1;
  else counters.replies2xx += 1;
}

/** Creates the connection life over `context`. */
export function connectionLife(context: ResourceContext): ConnectionLife {
  const { limits, counters, slots, step, now } = context;
  const envelope = envelopeCommands({
    counters,
    within: (promise, lease) => within(promise, lease, now),
    noteReply,
    now,
  });

  /**
   * Whether `conn` has nothing left to give, whatever its server answers: the catch-all probe's own session, one
   * that reached `maxRcptPerSession`, or any session when idle ones are not kept.
   */
  function spent(conn: Connection): boolean {
    return conn.dedicated || limits.idleMs <= 0 || conn.rcpts >= limits.maxRcpt;
  }

  function release(conn: Connection): void {
    conn.sink = undefined;
    if (conn.closing) return;
    const reusable =
      !context.closed() && !spent(conn) && conn.rejects < limits.maxRejects && conn.session?.usable === true;
    if (!reusable) {
      slots.retire(conn);
      return;
    }
    slots.park(conn);
    step.idle(conn);
    context.dispatch(conn.key);
  }

  /**
   * Counts a reply to `MAIL FROM` or `RCPT TO` on `conn`: a refusal counts against the reject cap (the server counts
   * it among the session's errors); a "too many errors" refusal also backs the host off and ends the session's reuse.
   */
  function noteReply(conn: Connection, reply: SmtpReply): void {
    countReply(counters, reply.code);
    if (reply.code < 200 || reply.code >= 300) conn.rejects += 1;
    const cause = backoffReply(reply);
    if (cause === undefined) return;
    conn.rejects = Math.max(conn.rejects, limits.maxRejects);
    context.startBackoff(conn.key, cause);
  }

  async function openSession(conn: Connection, request: RcptRequest, lease: Lease): Promise<SmtpSession> {
    const span = smtpSpan(lease.span, 'mailvet.smtp.session', conn.target);
    let session: SmtpSession;
    try {
      session = await within(
        context.open(conn.target, {
          settings: request.settings,
          deadline: lease.deadline,
          signal: conn.controller.signal,
          trace: (direction, line) => conn.sink?.(direction, line),
        }),
        lease,
        now,
        OPEN_GRACE_MS,
      );
    } catch (error) {
      counters.failed += 1;
      endSpan(span, error);
      throw error;
    }
    endSpan(span);
    conn.session = session;
    return session;
  }

  /**
   * Whether requests on this connection go in pipelined command groups (a dedicated one too: its `MAIL FROM`
   * and `RCPT TO` share a round trip, but nobody rides along).
   */
  function pipelines(session: SmtpSession): boolean {
    return (
      limits.depth > 1 &&
      session.rcptToMany !== undefined &&
      session.capabilities.extensions.has('PIPELINING')
    );
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
    const open = conn.envelope;
    const compatible = fitsEnvelope(open, request);
    if (pipelines(session) && !waiter.solo) {
      if (!compatible) await envelope.reset(conn, session, lease);
      const utf8 = compatible ? open.smtpUtf8 : request.smtpUtf8;
      const members = [waiter, ...context.board(conn, waiter, utf8)];
      try {
        await pipelined(conn, session, members, reused, { open: !compatible, utf8, retry452: true });
      } catch (error) {
        for (const member of members) member.fail(error);
        slots.drop(conn);
      }
      return null;
    }
    const span = commandsSpan(lease.span, conn.target, {
      mailFrom: !compatible,
      recipients: 1,
      pipelined: false,
    });
    try {
      const outcome = await oneByOne(conn, session, request, lease, compatible, reused);
      endWithOutcome(span, outcome);
      return outcome;
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
  }

  /** `MAIL FROM` (unless the open envelope fits the request) and `RCPT TO`, one command at a time. */
  async function oneByOne(
    conn: Connection,
    session: SmtpSession,
    request: RcptRequest,
    lease: Lease,
    compatible: boolean,
    reused: boolean,
  ): Promise<RcptOutcome> {
    if (!compatible) {
      const refused = await envelope.open(conn, session, request, lease);
      if (refused !== null) return { kind: 'reply', stage: 'mail', reply: refused, reused };
    }
    const started = now();
    let reply = await envelope.recipient(conn, session, request, lease);
    conn.slowestMs = Math.max(conn.slowestMs, now() - started);
    if (tooManyRecipients(reply) && conn.envelope!.rcpts > 1) {
      const refused = await envelope.open(conn, session, request, lease);
      if (refused !== null) return { kind: 'reply', stage: 'mail', reply: refused, reused };
      reply = await envelope.recipient(conn, session, request, lease);
    }
    return { kind: 'reply', stage: 'rcpt', reply, reused };
  }

  /**
   * Sends the `RCPT TO`s of `members` (after `MAIL FROM` when `group.open`) as one pipelined group and
   * settles each member with its own reply. Members whose reply never came fail with the session's error,
   * or are queued again once when the session was stale (a reused one failing before any reply) or closed
   * with `421` after answering. A `452 4.5.3` to a recipient that was not the first of its envelope sends
   * those recipients again in a new envelope (once): on this session, or on another when the group ended with
   * `QUIT` (a session with nothing left to give). Releases, retires or drops the connection at the end.
   */
  async function pipelined(
    conn: Connection,
    session: SmtpSession,
    members: readonly Waiter[],
    reused: boolean,
    group: GroupShape,
  ): Promise<void> {
    const sender = members[0]!.request.sender;
    const before = group.open ? 0 : (conn.envelope?.rcpts ?? 0);
    conn.envelope = { sender, smtpUtf8: group.utf8, rcpts: before + members.length };
    conn.rcpts += members.length;
    conn.sink = undefined; // each member's lines go to its own transcript
    counters.rcpts += members.length;
    if (group.retry452) counters.reused += members.length - 1;
    counters.groups += 1;
    const sentAt = now();
    const deadlines = members.map((member) => replyDeadline(member.lease, member.request, sentAt));
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
    const started = now();
    const replies = session.rcptToMany!(recipients, {
      quit,
      ...(group.open
        ? { mailFrom: { sender, smtpUtf8: group.utf8, deadline: deadlines[0]!, onLine: everyone } }
        : {}),
    });
    const spans = groupSpans(conn, members, group);
    const mail = replies.mail === null ? null : await settled(replies.mail);
    const rcpts = await Promise.all(replies.rcpts.map(settled));
    const inStep = replies.inStep === undefined || (await replies.inStep);
    conn.slowestMs = Math.max(conn.slowestMs, now() - started);
    if (spans !== undefined) for (const span of spans) endSpan(span);

    const reading = readGroup({ mail, rcpts, before, retry452: group.retry452, reused, inStep });
    if (reading.envelopeRefused) conn.envelope = null;
    for (const reply of reading.counted) noteReply(conn, reply);
    const lost: { waiter: Waiter; error: unknown }[] = [];
    const again: { waiter: Waiter; reply: SmtpReply }[] = [];
    const voided: Waiter[] = [];
    for (const [index, fate] of reading.fates.entries()) {
      const member = members[index]!;
      if (fate.kind === 'resolve') step.deliver(conn, member, fate.outcome);
      else if (fate.kind === 'fail') member.fail(fate.error);
      else if (fate.kind === 'lost') lost.push({ waiter: member, error: fate.error });
      else if (fate.kind === 'void') voided.push(member);
      else again.push({ waiter: member, reply: fate.reply });
    }
    retryOrFail(conn, lost, reused, reading.answered);
    step.askAlone(conn, voided);

    if (again.length > 0 && quit && !context.closed()) {
      // The session is quitting: they go again first in line, to a session where each opens the envelope.
      for (const { waiter, reply } of again) {
        if (waiter.retried) step.deliver(conn, waiter, { kind: 'reply', stage: 'rcpt', reply, reused: true });
        else context.requeue(conn, waiter);
      }
      slots.retire(conn);
      return;
    }
    if (again.length > 0 && session.usable && !context.closed()) {
      const first = again[0]!.waiter;
      try {
        await envelope.reset(conn, session, first.lease);
      } catch (error) {
        for (const { waiter } of again) waiter.fail(error);
        slots.drop(conn);
        return;
      }
      const waiters = again.map(({ waiter }) => waiter);
      await pipelined(conn, session, waiters, true, { open: true, utf8: group.utf8, retry452: false });
      return;
    }
    for (const { waiter, reply } of again) {
      step.deliver(conn, waiter, { kind: 'reply', stage: 'rcpt', reply, reused: true });
    }
    if (session.usable) release(conn);
    else if (quit)
      slots.retire(conn); // reads the 221 to the QUIT the group ended with
    else slots.drop(conn);
  }

  /**
   * The `mailvet.smtp.commands` spans of a pipelined group: one under each member's span (a member not traced gets
   * none), each recording the whole group's shape; `undefined` when no member is traced.
   */
  function groupSpans(
    conn: Connection,
    members: readonly Waiter[],
    group: GroupShape,
  ): TraceSpan[] | undefined {
    if (!members.some((member) => member.lease.span !== undefined)) return undefined;
    const shape = { mailFrom: group.open, recipients: members.length, pipelined: true };
    const spans: TraceSpan[] = [];
    for (const member of members) {
      const span = commandsSpan(member.lease.span, conn.target, shape);
      if (span !== undefined) spans.push(span);
    }
    return spans;
  }

  /**
   * Settles the members of a group whose reply never came. While the host backs off, a member waits in line for
   * the end when its budget outlasts it (each round costs a whole backoff, so its budget bounds the rounds); else a
   * stale session's members get one retry.
   */
  function retryOrFail(
    conn: Connection,
    lost: readonly { waiter: Waiter; error: unknown }[],
    reused: boolean,
    answered: boolean,
  ): void {
    const cause = lost.length > 0 ? backoffReply(smtpReplyOf(lost[0]!.error)) : undefined;
    if (cause !== undefined) context.startBackoff(conn.key, cause);
    const backoff = context.backoffOf(conn.key);
    const retry: Waiter[] = [];
    for (const { waiter, error } of lost) {
      const aborted = error instanceof SmtpError && error.kind === 'aborted';
      const again =
        backoff === undefined
          ? mayRetryLost({ error, reused, answered, retried: waiter.retried })
          : mayWait(waiter.request, waiter.lease, backoff);
      if (again && !context.closed() && !aborted && !expired(waiter.lease, now())) retry.push(waiter);
      else waiter.fail(error);
    }
    for (const waiter of retry.reverse()) context.requeue(conn, waiter);
  }

  /** Serves a request; a reused session that turns out stale (421, closed, broken) is replaced once. */
  async function run(first: Connection, waiter: Waiter): Promise<void> {
    const { lease } = waiter;
    if (!context.closed() && expired(lease, now())) {
      release(first); // the budget ran out while waiting for a global slot
      waiter.fail(leaseError(lease));
      return;
    }
    let conn = first;
    for (;;) {
      const reused = conn.session !== null;
      try {
        if (context.closed()) throw new SmtpError('aborted', 'the verifier was disposed');
        const outcome = await serve(conn, waiter);
        if (outcome === null) return;
        step.deliver(conn, waiter, outcome);
        release(conn);
        return;
      } catch (error) {
        if (aboutRequest(error) && conn.session?.usable === true) {
          release(conn);
          waiter.fail(error);
          return;
        }
        const cause = backoffReply(smtpReplyOf(error));
        if (cause !== undefined) context.startBackoff(conn.key, cause);
        const aborted = error instanceof SmtpError && error.kind === 'aborted';
        if (context.closed() || aborted || expired(lease, now())) {
          slots.drop(conn);
          waiter.fail(error);
          return;
        }
        const backoff = context.backoffOf(conn.key);
        if (backoff !== undefined) {
          // No new session now: wait in line for the end of the backoff, or give way with this error.
          slots.drop(conn);
          if (mayWait(waiter.request, lease, backoff)) context.requeue(conn, waiter);
          else waiter.fail(error);
          return;
        }
        if (!reused) {
          slots.drop(conn);
          waiter.fail(error);
          return;
        }
        conn = slots.replace(conn);
      }
    }
  }

  return { run, release };
}
