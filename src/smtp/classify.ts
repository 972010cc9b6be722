/**
 * Turns SMTP replies and failures into verdicts: codes first (the RFC 3463 enhanced code, then the basic code),
 * text second. The rules are one ordered table, documented row by row in docs/classification.md.
 * A refusal that is about us (our IP, our sender, our HELO, relaying) is never `invalid`.
 * @module
 */
import { isSmtpError } from '../errors.js';
import type { SubStatus } from '../result.js';
import type { SmtpReply, SmtpStage } from './types.js';

/** What a reply means for the address: `accepted`, or the `sub_status` of the verdict it gives. */
export type SmtpOutcome = 'accepted' | SubStatus;

/** One row of the classification table. */
export interface ClassificationRule {
  /** Stable identifier, as in docs/classification.md. */
  readonly id: string;
  /** What the row matches, in words. */
  readonly description: string;
  /** The outcome when it matches. */
  readonly outcome: SmtpOutcome;
  /** True when the row applies to `reply` read at `stage`. */
  matches(reply: SmtpReply, stage: SmtpStage): boolean;
}

const GREYLIST = /gr[ae]y[- ]?list|postgrey/i;
const ANTISPAM =
  /spamhaus|spamcop|barracuda|\bsorbs\b|\bspam|black ?list|block ?list|\bblocked\b|\b(?:rbl|dnsbl|dnsrbl)\b|reputation|\blisted (?:at|in|on|by)\b|\bbanned\b/i;
const DISABLED =
  /disabled|deactivated|\binactive\b|suspended|account (?:is |has been )?(?:locked|closed|frozen)|no longer (?:active|in use|valid)/i;
const QUOTA =
  /quota|mailbox (?:is )?full|full mailbox|insufficient (?:system )?storage|storage (?:space )?(?:exceeded|full)|exceeded (?:its |the )?storage|mailbox size limit/i;
const NOT_FOUND =
  /user unknown|unknown (?:user|recipient|mailbox|address|account)|no such (?:user|mailbox|recipient|address|account|person)|(?:mailbox|user|recipient|address|account) (?:is )?(?:unavailable|not found|unknown|invalid|rejected)|does ?n[o']t exist|does ?n[o']t have an? (?:[\w.-]+ )?account|not (?:a )?valid (?:mailbox|recipient|user|address)|invalid (?:mailbox|recipient|user|address)|unrouteable address|no mailbox|bad destination mailbox/i;
const RELAY = /relay/i;

/**
 * Wording of a refusal about the session rather than the mailbox, after which a mail host should be left alone
 * for a while: too many errors in it (Postfix's `421 4.7.0 Error: too many errors`), too many invalid or unknown
 * recipients, too many connections, a rate limit.
 */
const SESSION_LIMIT =
  /\btoo many (?:(?:smtp |protocol |syntax )?errors|(?:invalid|bad|unknown|failed|rejected|non-?existent|unresolvable) (?:recipients?|rcpts?|commands|addresses|users)|(?:concurrent |simultaneous |parallel )?(?:smtp )?(?:connections|sessions))\b|\brate[- ]?limit|\bthrottl/i;

/** A full envelope (`452 4.5.3` / `552 5.5.3 Too many recipients`): about the transaction, not the mailbox. */
const ENVELOPE_FULL = /\btoo many recipients\b/i;

/** An address in angle brackets, as servers echo the recipient (`550 5.1.1 <throttle@example.com>: ...`). */
const ECHOED_ADDRESS = /<[^<>@]*@[^<>]*>/g;

/**
 * The reply's text without the addresses it echoes, which the wording rows read: the recipient is ours to choose,
 * so `<ratelimit@example.com>` or `<spam@example.com>` must not turn a "user unknown" into a refusal about us.
 */
function wording(reply: SmtpReply): string {
  return reply.text.includes('@') ? reply.text.replace(ECHOED_ADDRESS, '<>') : reply.text;
}

/**
 * Whether `reply` refuses for the session rather than the mailbox: too many errors (Postfix's `421 4.7.0 Error:
 * too many errors`), too many invalid or unknown recipients, too many connections, a rate limit (addresses it
 * echoes are not read). The session pool backs off a mail host that says it (see `mxBackoffMs`); a full envelope
 * ("too many recipients") is not such a refusal.
 * @example
 * limitsSession(parseReply(['421 4.7.0 mx.example.com Error: too many errors'])); // true
 */
export function limitsSession(reply: SmtpReply): boolean {
  return SESSION_LIMIT.test(wording(reply));
}

/** A refusal about the session or the envelope, not the mailbox. */
const aboutSession = (reply: SmtpReply) => limitsSession(reply) || ENVELOPE_FULL.test(wording(reply));

const isTemporary = (reply: SmtpReply) => reply.code >= 400 && reply.code < 500;
const isPermanent = (reply: SmtpReply) => reply.code >= 500 && reply.code < 600;
const enhancedIn = (reply: SmtpReply, ...prefixes: string[]) =>
  reply.enhanced !== null && prefixes.some((prefix) => `${reply.enhanced}.`.startsWith(`${prefix}.`));

/**
 * The classification table, tried in order; the first matching row wins. Replies that no row matches are
 * `smtp_protocol_error`.
 */
export const CLASSIFICATION_RULES: readonly ClassificationRule[] = Object.freeze([
  {
    id: 'accepted',
    description: '2xx (at the greeting: 220)',
    outcome: 'accepted',
    matches: (reply, stage) =>
      stage === 'greeting' ? reply.code === 220 : reply.code >= 200 && reply.code < 300,
  },
  {
    id: 'temp-greylist-text',
    description: '4xx with greylist wording',
    outcome: 'greylisted',
    matches: (reply) => isTemporary(reply) && GREYLIST.test(wording(reply)),
  },
  {
    id: 'temp-antispam-text',
    description: '4xx with block / spam / blocklist / reputation wording',
    outcome: 'antispam_system',
    matches: (reply) => isTemporary(reply) && ANTISPAM.test(wording(reply)),
  },
  {
    id: 'temp-session-limit',
    description: '4xx about the session: too many errors / invalid recipients / connections, a rate limit',
    outcome: 'mail_server_temporary_error',
    matches: (reply) => isTemporary(reply) && aboutSession(reply),
  },
  {
    id: 'temp-greylist-code',
    description: '4.7.1 or 4.2.0 on RCPT',
    outcome: 'greylisted',
    matches: (reply, stage) =>
      stage === 'rcpt' && isTemporary(reply) && (reply.enhanced === '4.7.1' || reply.enhanced === '4.2.0'),
  },
  {
    id: 'temp-other',
    description: 'any other 4xx (421 included)',
    outcome: 'mail_server_temporary_error',
    matches: isTemporary,
  },
  {
    id: 'perm-antispam-text',
    description: '5xx with block / spam / blocklist / Spamhaus / RBL / reputation wording',
    outcome: 'antispam_system',
    matches: (reply) => isPermanent(reply) && ANTISPAM.test(wording(reply)),
  },
  {
    id: 'perm-session-limit',
    description:
      '5xx about the session: too many errors / invalid recipients / recipients / connections, a rate limit',
    outcome: 'mail_server_temporary_error',
    matches: (reply) => isPermanent(reply) && aboutSession(reply),
  },
  {
    id: 'perm-refused-us',
    description: '5xx at the greeting, EHLO/HELO or MAIL FROM (554 at the greeting included)',
    outcome: 'antispam_system',
    matches: (reply, stage) =>
      isPermanent(reply) && (stage === 'greeting' || stage === 'ehlo' || stage === 'mail'),
  },
  {
    id: 'perm-policy-code',
    description: '5.7.x (security or policy, relay denied included) or 5.1.7 / 5.1.8 (our sender)',
    outcome: 'antispam_system',
    matches: (reply) => isPermanent(reply) && enhancedIn(reply, '5.7', '5.1.7', '5.1.8'),
  },
  {
    id: 'perm-address-code',
    description: '5.1.x (bad mailbox, bad domain, bad syntax, moved)',
    outcome: 'mailbox_not_found',
    matches: (reply) => isPermanent(reply) && enhancedIn(reply, '5.1'),
  },
  {
    id: 'perm-disabled-code',
    description: '5.2.1 (mailbox disabled)',
    outcome: 'mailbox_disabled',
    matches: (reply) => isPermanent(reply) && reply.enhanced === '5.2.1',
  },
  {
    id: 'perm-quota-code',
    description: '5.2.2 (mailbox full)',
    outcome: 'mailbox_quota_exceeded',
    matches: (reply) => isPermanent(reply) && reply.enhanced === '5.2.2',
  },
  {
    id: 'perm-disabled-text',
    description: '5xx with disabled / deactivated / inactive / suspended wording',
    outcome: 'mailbox_disabled',
    matches: (reply) => isPermanent(reply) && DISABLED.test(wording(reply)),
  },
  {
    id: 'perm-quota-text',
    description: '5xx with quota / mailbox full / insufficient storage wording',
    outcome: 'mailbox_quota_exceeded',
    matches: (reply) => isPermanent(reply) && QUOTA.test(wording(reply)),
  },
  {
    id: 'perm-not-found-text',
    description: '5xx with "user unknown" wording (no such user, mailbox unavailable, does not exist, ...)',
    outcome: 'mailbox_not_found',
    matches: (reply) => isPermanent(reply) && NOT_FOUND.test(wording(reply)),
  },
  {
    id: 'perm-relay-text',
    description: '5xx with relay wording (relay access denied, relaying not permitted)',
    outcome: 'antispam_system',
    matches: (reply) => isPermanent(reply) && RELAY.test(wording(reply)),
  },
  {
    id: 'perm-552',
    description: '552 without a more specific code or text',
    outcome: 'mailbox_quota_exceeded',
    matches: (reply) => reply.code === 552,
  },
  {
    id: 'perm-550-551-553',
    description: '550, 551 or 553 without a more specific code or text',
    outcome: 'mailbox_not_found',
    matches: (reply) => reply.code === 550 || reply.code === 551 || reply.code === 553,
  },
  {
    id: 'perm-554',
    description: '554 (transaction failed) without a more specific code or text',
    outcome: 'antispam_system',
    matches: (reply) => reply.code === 554,
  },
]);

/** The outcome of `reply` read at `stage`, and the table row that gave it (`null`: no row matched). */
export function explainReply(
  reply: SmtpReply,
  stage: SmtpStage,
): { outcome: SmtpOutcome; rule: ClassificationRule | null } {
  const rule = CLASSIFICATION_RULES.find((candidate) => candidate.matches(reply, stage)) ?? null;
  return { outcome: rule?.outcome ?? 'smtp_protocol_error', rule };
}

/**
 * What `reply`, read at `stage`, says about the address.
 * @example
 * classifyReply({ code: 550, enhanced: '5.1.1', lines: ['5.1.1 user unknown'], text: '5.1.1 user unknown' }, 'rcpt');
 * // 'mailbox_not_found'
 */
export function classifyReply(reply: SmtpReply, stage: SmtpStage): SmtpOutcome {
  return explainReply(reply, stage).outcome;
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
