/**
 * The envelope kept open on a session between requests: whether a request fits it (a pure decision), and the
 * commands that open, reset and fill it, counted for the pool's stats and the session's reject cap.
 * @module
 */

import { SmtpError } from '../../errors.js';
import type { SmtpReply, SmtpSession } from '../types.js';
import type { Connection, Envelope } from './connection.js';
import { commandOptions, replyDeadline } from './lease.js';
import { positive } from './replies.js';
import type { Lease, RcptRequest } from './types.js';

/**
 * Whether `request` can go in the open `envelope`: same sender, and an SMTPUTF8 envelope when its recipient needs
 * one. `RCPT TO` replies of one transaction are independent (RFC 5321 §3.3), so a fitting request costs one command.
 */
export function fitsEnvelope(
  envelope: Pick<Envelope, 'sender' | 'smtpUtf8'> | null,
  request: Pick<RcptRequest, 'sender' | 'smtpUtf8'>,
): envelope is Envelope {
  return envelope !== null && envelope.sender === request.sender && (!request.smtpUtf8 || envelope.smtpUtf8);
}

/** What the envelope commands need from the pool. */
export interface EnvelopeContext {
  readonly counters: { rcpts: number; resets: number };
  /** Settles with `promise`, or rejects when the lease ends first. */
  within<T>(promise: Promise<T>, lease: Lease): Promise<T>;
  /** Counts a reply to `MAIL FROM` or `RCPT TO` against the session (reject cap, backoff). */
  noteReply(conn: Connection, reply: SmtpReply): void;
  /** The pool's clock. */
  readonly now: () => number;
}

/** The envelope commands of a connection. */
export interface EnvelopeCommands {
  /** Opens an envelope (`RSET` first when one is open); returns the refusal of `MAIL FROM`, if any. */
  open(conn: Connection, session: SmtpSession, request: RcptRequest, lease: Lease): Promise<SmtpReply | null>;
  /** Sends `RSET` when an envelope is open; a refusal throws `SmtpError` kind `protocol`. */
  reset(conn: Connection, session: SmtpSession, lease: Lease): Promise<void>;
  /** Sends `RCPT TO` in the open envelope and counts the reply. */
  recipient(conn: Connection, session: SmtpSession, request: RcptRequest, lease: Lease): Promise<SmtpReply>;
}

/** Creates the envelope commands over `context`. */
export function envelopeCommands(context: EnvelopeContext): EnvelopeCommands {
  const { counters, within, noteReply, now } = context;

  async function reset(conn: Connection, session: SmtpSession, lease: Lease): Promise<void> {
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

  return {
    reset,
    async open(conn, session, request, lease) {
      await reset(conn, session, lease);
      const reply = await within(
        session.mailFrom(request.sender, {
          ...commandOptions(lease, replyDeadline(lease, request, now())),
          smtpUtf8: request.smtpUtf8,
        }),
        lease,
      );
      if (!positive(reply)) {
        noteReply(conn, reply); // the server counts a refused MAIL FROM among the session's errors, as a refused RCPT TO
        return reply;
      }
      conn.envelope = { sender: request.sender, smtpUtf8: request.smtpUtf8, rcpts: 0 };
      return null;
    },
    async recipient(conn, session, request, lease) {
      conn.rcpts += 1;
      conn.envelope!.rcpts += 1;
      counters.rcpts += 1;
      const reply = await within(
        session.rcptTo(request.recipient, commandOptions(lease, replyDeadline(lease, request, now()))),
        lease,
      );
      noteReply(conn, reply);
      return reply;
    },
  };
}
