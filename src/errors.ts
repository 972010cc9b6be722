/**
 * Typed errors with stable codes. `verify` throws only on misuse (bad options); a bad address gives a result.
 * @module
 */
import type { SmtpReply, SmtpStage } from './contracts/smtp.js';

/** Every stable error code, with the HTTP status the adapter maps it to. */
export const ERROR_CODES = {
  invalid_option: 400,
  invalid_request: 400,
  dns_error: 502,
  smtp_error: 502,
  connection_error: 502,
  timeout: 504,
  aborted: 499,
  disposed: 503,
  job_not_found: 404,
  job_not_complete: 409,
  job_finished: 409,
  job_not_processing: 409,
  job_failed: 409,
  limit_exceeded: 429,
  store_error: 500,
  store_unavailable: 503,
  store_locked: 503,
  lease_lost: 409,
  queue_unavailable: 503,
  webhook_refused: 422,
  api_key_conflict: 409,
} as const;

/** A stable error code. */
export type ErrorCode = keyof typeof ERROR_CODES;

const BRAND = Symbol.for('mailvet.error');

/** Base class of every mailvet error; `code` is stable, `message` is for humans and may change. */
export class MailvetError extends Error {
  override name = 'MailvetError';
  readonly code: ErrorCode;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Thrown when an option is malformed; `option` names it (e.g. `smtpPort`). */
export class OptionsError extends MailvetError {
  override name = 'OptionsError';
  readonly option: string;

  constructor(option: string, message: string) {
    super('invalid_option', `${option} ${message}`);
    this.option = option;
  }
}

/** The job does not exist, was deleted, or belongs to another owner (code `job_not_found`). */
export class JobNotFoundError extends MailvetError {
  override name = 'JobNotFoundError';
  readonly jobId: string;

  constructor(jobId: string) {
    super('job_not_found', 'no such job');
    this.jobId = jobId;
  }
}

/**
 * True for any mailvet error, also across realms (a second copy of the package, a worker), where
 * `instanceof` would fail.
 */
export function isMailvetError(value: unknown): value is MailvetError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

/** Why a DNS lookup got no answer. */
export type DnsFailure = 'servfail' | 'refused' | 'timeout' | 'aborted' | 'malformed' | 'other';

/** A DNS lookup that got no answer (as opposed to an answer of "no records", which is a value). */
export class DnsError extends MailvetError {
  override name = 'DnsError';
  readonly reason: DnsFailure;
  readonly hostname: string;

  constructor(reason: DnsFailure, hostname: string, message: string, options?: { cause?: unknown }) {
    super(
      reason === 'timeout' ? 'timeout' : reason === 'aborted' ? 'aborted' : 'dns_error',
      message,
      options,
    );
    this.reason = reason;
    this.hostname = hostname;
  }
}

/** What went wrong in an SMTP exchange. */
export type SmtpFailure =
  | 'connection' // refused, unreachable, connect timeout, closed before the greeting
  | 'no_greeting' // connected, but no greeting in time
  | 'timeout' // a reply did not come in time, or the verification budget is spent
  | 'disconnect' // the peer closed the connection mid-dialogue
  | 'protocol' // garbage, over-long lines or replies, unparseable replies
  | 'rejected' // the server refused the session with a reply (greeting not 220, 421, EHLO and HELO refused)
  | 'tls' // STARTTLS required but not offered, or the handshake failed
  | 'smtputf8' // the recipient (or sender) needs SMTPUTF8 and the server does not offer it
  | 'unsafe_argument' // a value meant for a command line contains CR, LF, NUL or is too long (nothing was sent)
  | 'backoff' // the mail host is backing off after a 421 or "too many errors" (mxBackoffMs): nothing was sent
  | 'aborted'; // the caller aborted

/** Evidence attached to an {@link SmtpError}. */
export interface SmtpEvidence {
  /** The last command written, if any. */
  readonly command?: string;
  /** The reply that ended the exchange, parsed. */
  readonly smtpReply?: SmtpReply;
  /** The step of the dialogue at which it failed. */
  readonly stage?: SmtpStage;
  readonly cause?: unknown;
}

/**
 * An SMTP exchange that failed, with the protocol evidence (last command, last reply, dialogue stage) when
 * there is some. `classifyError()` (classify/reply.ts) turns it into a `sub_status`.
 */
export class SmtpError extends MailvetError {
  override name = 'SmtpError';
  readonly kind: SmtpFailure;
  /** The last command written, if any. */
  readonly command: string | undefined;
  /** The reply that ended the exchange (raw text, lines joined), if any. */
  readonly reply: string | undefined;
  /** The reply that ended the exchange, parsed, if any (e.g. the `421` or `554` of kind `rejected`). */
  readonly smtpReply: SmtpReply | undefined;
  /** The step of the dialogue at which it failed, when known. */
  readonly stage: SmtpStage | undefined;

  constructor(kind: SmtpFailure, message: string, evidence: SmtpEvidence = {}) {
    super(
      kind === 'timeout' || kind === 'no_greeting'
        ? 'timeout'
        : kind === 'aborted'
          ? 'aborted'
          : kind === 'connection'
            ? 'connection_error'
            : 'smtp_error',
      message,
      evidence.cause === undefined ? undefined : { cause: evidence.cause },
    );
    this.kind = kind;
    this.command = evidence.command;
    this.smtpReply = evidence.smtpReply;
    this.reply =
      evidence.smtpReply === undefined ? undefined : `${evidence.smtpReply.code} ${evidence.smtpReply.text}`;
    this.stage = evidence.stage;
  }
}

/** True for an {@link SmtpError}, also across realms. */
export function isSmtpError(value: unknown): value is SmtpError {
  return isMailvetError(value) && value.name === 'SmtpError';
}
