/**
 * What the replies of one pipelined command group mean for each of its members, as a pure function of the
 * replies ({@link readGroup}); the pool then acts on the reading (settles, retries, counts, backs off).
 * @module
 */

import { SmtpError } from '../../errors.js';
import type { SmtpReply } from '../types.js';
import { aboutRequest, positive, type Settled, tooManyRecipients } from './replies.js';
import type { RcptOutcome } from './types.js';

/** The replies of a group, as they settled, and where the group stood. */
export interface GroupReplies {
  /** The reply to `MAIL FROM` when the group opened the envelope, else `null`. */
  readonly mail: Settled<SmtpReply> | null;
  /** One per member, in order. */
  readonly rcpts: readonly Settled<SmtpReply>[];
  /** `RCPT TO` already in the envelope before this group. */
  readonly before: number;
  /** A `452 4.5.3` to a recipient that was not the first of its envelope may be asked again in a new envelope. */
  readonly retry452: boolean;
  /** The session was reused from an earlier request. */
  readonly reused: boolean;
  /**
   * The session proved the replies in step with the commands (`PipelinedReplies.inStep`). When it did not, only
   * the group's first reply (to `MAIL FROM` when the group opened the envelope, else to the first `RCPT TO`) came
   * on a session known to be quiet; every later one may belong to another command. @default true
   */
  readonly inStep?: boolean;
}

/** What becomes of one member. */
export type MemberFate =
  /** Settled with this outcome. */
  | { readonly kind: 'resolve'; readonly outcome: RcptOutcome }
  /** Failed with an error about the request itself (the session stays usable). */
  | { readonly kind: 'fail'; readonly error: unknown }
  /** Its reply never came: it fails with `error`, or is queued again (see {@link mayRetryLost}). */
  | { readonly kind: 'lost'; readonly error: unknown }
  /** `452 4.5.3` too many recipients: asked again in a new envelope (once). */
  | { readonly kind: 'again'; readonly reply: SmtpReply }
  /**
   * Its reply came on a session that fell out of step (a line no command asked for, a missing reply, a QUIT not
   * answered `221`): it may be another command's, so it decides nothing; asked again on a fresh session, alone.
   */
  | { readonly kind: 'void'; readonly reply: SmtpReply };

/** The reading of a group's replies. */
export interface GroupReading {
  /** One fate per member, in order. */
  readonly fates: readonly MemberFate[];
  /** The replies that count against the session's reject cap and may back the host off, in order. */
  readonly counted: readonly SmtpReply[];
  /** The server answered at least one command of the group. */
  readonly answered: boolean;
  /** `MAIL FROM` was refused: no envelope is open. */
  readonly envelopeRefused: boolean;
}

/**
 * Reads a group's replies. A refused `MAIL FROM` answers every member (stage `mail`), and the server counts it and
 * each `RCPT TO` it then refused for want of an envelope (503) among the session's errors. Otherwise each member
 * gets its own reply; a reply that did not come makes the member `lost` (or `fail` when the error is about the
 * request, such as an unsafe recipient that was never sent). When the session fell out of step, a reply that was
 * not the first line after the group went out makes the member `void`: a definitive verdict comes only from the
 * reply to that address's own command.
 * @example
 * readGroup({ mail: null, rcpts: [{ ok: true, value: reply250 }], before: 0, retry452: true, reused: false });
 * // { fates: [{ kind: 'resolve', outcome: { kind: 'reply', stage: 'rcpt', reply: reply250, reused: false } }], ... }
 */
export function readGroup(group: GroupReplies): GroupReading {
  const { mail, rcpts, before, retry452, reused } = group;
  const inStep = group.inStep !== false;
  const counted: SmtpReply[] = [];
  if (mail?.ok === true && !positive(mail.value)) {
    counted.push(mail.value);
    for (const result of rcpts) if (result.ok) counted.push(result.value);
    const fates = rcpts.map(
      (_, index): MemberFate => ({
        kind: 'resolve',
        outcome: { kind: 'reply', stage: 'mail', reply: mail.value, reused: reused || index > 0 },
      }),
    );
    return { fates, counted, answered: true, envelopeRefused: true };
  }
  let answered = false;
  const fates = rcpts.map((result, index): MemberFate => {
    if (!result.ok)
      return aboutRequest(result.error)
        ? { kind: 'fail', error: result.error }
        : { kind: 'lost', error: result.error };
    answered = true;
    // Out of step, only the first line after the group went out is its command's own reply.
    if (!inStep && (mail !== null || index > 0)) return { kind: 'void', reply: result.value };
    counted.push(result.value);
    if (retry452 && tooManyRecipients(result.value) && before + index > 0) {
      return { kind: 'again', reply: result.value };
    }
    return {
      kind: 'resolve',
      outcome: { kind: 'reply', stage: 'rcpt', reply: result.value, reused: reused || index > 0 },
    };
  });
  return { fates, counted, answered, envelopeRefused: false };
}

/**
 * Whether a request that lost its session (its reply never came) is queued again for one more try on another
 * session, when its host does not back off: the session was stale (a reused one failing before any reply) or closed
 * with `421` after answering, and the request was not queued again before.
 */
export function mayRetryLost(lost: {
  readonly error: unknown;
  readonly reused: boolean;
  readonly answered: boolean;
  readonly retried: boolean;
}): boolean {
  const kind = lost.error instanceof SmtpError ? lost.error.kind : undefined;
  const stale = (lost.reused && !lost.answered) || (kind === 'rejected' && (lost.reused || lost.answered));
  return stale && !lost.retried;
}
