/**
 * Turns SMTP replies and failures into verdicts. The rules are one ordered table (`CLASSIFICATION_RULES`, in
 * `reply-meaning/rules.ts`), documented row by row in docs/classification.md and tested over the labelled corpus
 * in fixtures/smtp-replies/. A refusal that is about us (our IP, our sender, our HELO, relaying) is never
 * `invalid`; neither is a reply about the system, the route, the protocol or the message.
 * @module
 */

import type { SmtpReply, SmtpStage } from '../contracts/smtp.js';
import { isSmtpError } from '../errors.js';
import type { SubStatus } from '../result.js';
import type { ProviderProfileId } from './profiles.js';
import { type ReplyReading, readReply } from './reply-meaning/reading.js';
import {
  CLASSIFICATION_RULES,
  type ClassificationRule,
  type ReplyContext,
  type SmtpOutcome,
} from './reply-meaning/rules.js';
import { SESSION_LIMIT, withoutEchoedAddresses } from './reply-meaning/wording.js';

export {
  CLASSIFICATION_RULES,
  type ClassificationRule,
  type ReplyContext,
  type ReplyReading,
  type SmtpOutcome,
};

/**
 * Whether `reply` refuses for the session rather than the mailbox: too many errors (Postfix's `421 4.7.0 Error:
 * too many errors`), too many invalid or unknown recipients, too many connections, a rate limit (addresses it
 * echoes are not read). The session pool backs off a mail host that says it (see `mxBackoffMs`); a full envelope
 * ("too many recipients") is not such a refusal.
 * @example
 * limitsSession(parseReply(['421 4.7.0 mx.example.com Error: too many errors'])); // true
 */
export function limitsSession(reply: SmtpReply): boolean {
  return SESSION_LIMIT.test(withoutEchoedAddresses(reply.text));
}

/**
 * The outcome of `reply` read at `stage` (at the mail host of provider `profile`, when known), and the table row
 * that gave it (`null`: no row matched, `smtp_protocol_error`).
 */
export function explainReply(
  reply: SmtpReply,
  stage: SmtpStage,
  profile: ProviderProfileId | null = null,
): { outcome: SmtpOutcome; rule: ClassificationRule | null } {
  const reading = readReply(reply);
  const context: ReplyContext = { stage, profile };
  const rule = CLASSIFICATION_RULES.find((candidate) => candidate.matches(reading, context)) ?? null;
  return { outcome: rule?.outcome ?? 'smtp_protocol_error', rule };
}

/**
 * What `reply`, read at `stage`, says about the address. `profile` is the receiving provider's profile (from
 * `profileOfHost(mx)`): a few providers use a code in a way of their own (Microsoft 365's `5.4.1` edge block).
 * @example
 * classifyReply({ code: 550, enhanced: '5.1.1', lines: ['5.1.1 user unknown'], text: '5.1.1 user unknown' }, 'rcpt');
 * // 'mailbox_not_found'
 */
export function classifyReply(
  reply: SmtpReply,
  stage: SmtpStage,
  profile: ProviderProfileId | null = null,
): SmtpOutcome {
  return explainReply(reply, stage, profile).outcome;
}

/**
 * The `sub_status` of a failed SMTP exchange: an `SmtpError` by its kind (a `rejected` one by its reply),
 * anything else `exception_occurred`.
 */
export function classifyError(error: unknown): SubStatus {
  if (!isSmtpError(error)) return 'exception_occurred';
  switch (error.kind) {
    case 'connection':
    case 'tls':
      return 'failed_smtp_connection';
    case 'no_greeting':
      return 'mail_server_did_not_respond';
    case 'timeout':
    case 'aborted':
      return 'timeout_exceeded';
    case 'disconnect':
      return 'forcible_disconnect';
    case 'protocol':
      return 'smtp_protocol_error';
    case 'smtputf8':
      return 'smtp_not_checked';
    case 'unsafe_argument':
      return 'exception_occurred';
    case 'backoff':
      return 'mail_server_temporary_error';
    case 'rejected': {
      if (error.smtpReply === undefined) return 'mail_server_temporary_error';
      const outcome = classifyReply(error.smtpReply, error.stage ?? 'greeting');
      return outcome === 'accepted' ? 'smtp_protocol_error' : outcome;
    }
  }
}
