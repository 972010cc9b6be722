/**
 * The classification table: ordered rows of pure data and one-line predicates, the first matching row wins.
 * docs/classification.md documents it row by row; test/classify/classify-corpus.test.ts runs it over the labelled
 * corpus in fixtures/smtp-replies/.
 * @module
 */

import type { SmtpStage } from '../../contracts/smtp.js';
import type { SubStatus } from '../../result.js';
import type { ProviderProfileId } from '../profiles.js';
import { codeIn, type ReplyReading } from './reading.js';
import {
  DISABLED,
  ENVELOPE_FULL,
  GREYLIST,
  NOT_ABOUT_MAILBOX,
  NOT_FOUND,
  POLICY,
  QUOTA,
  RATE,
  REFUSES_US,
  SESSION_LIMIT,
  SIZE,
} from './wording.js';

/** What a reply means for the address: `accepted`, or the `sub_status` of the verdict it gives. */
export type SmtpOutcome = 'accepted' | SubStatus;

/** Where a reply was read: the dialogue step it answers and the receiving provider, when known. */
export interface ReplyContext {
  /** The step of the dialogue the reply answers. */
  readonly stage: SmtpStage;
  /** The provider profile of the mail host that answered (from its MX name), or `null`. */
  readonly profile: ProviderProfileId | null;
}

/** One row of the classification table. */
export interface ClassificationRule {
  /** Stable identifier, as in docs/classification.md. */
  readonly id: string;
  /** What the row matches, in words. */
  readonly description: string;
  /** The outcome when it matches. */
  readonly outcome: SmtpOutcome;
  /** True when the row applies to the reply read as `reading`, in `context`. */
  matches(reading: ReplyReading, context: ReplyContext): boolean;
}

const temporary = (r: ReplyReading) => r.reply.code >= 400 && r.reply.code < 500;
const permanent = (r: ReplyReading) => r.reply.code >= 500 && r.reply.code < 600;
const at = (context: ReplyContext, profile: ProviderProfileId) =>
  context.stage === 'rcpt' && context.profile === profile;
/**
 * At Microsoft (Microsoft 365 or Outlook.com): the answering MX has a Microsoft profile, or, when the MX is of no
 * known provider, the reply itself names Microsoft's servers or tags.
 */
const atMicrosoft = (r: ReplyReading, context: ReplyContext) =>
  context.stage === 'rcpt' &&
  (context.profile === 'microsoft365' ||
    context.profile === 'outlook' ||
    (context.profile === null && r.microsoftSigned));
const aboutSession = (r: ReplyReading) => SESSION_LIMIT.test(r.text) || ENVELOPE_FULL.test(r.text);
/**
 * RFC 3463 subjects that never say that a mailbox is missing: 5.1.4 (ambiguous), 5.1.5, 5.2.3 (message too
 * big), 5.2.4, 5.3.x (mail system), 5.4.x (network and routing), 5.5.x (protocol), 5.6.x (content and media).
 */
const notAboutMailboxCode = (r: ReplyReading) =>
  codeIn(r, '5.1.4', '5.1.5', '5.2.3', '5.2.4', '5.3', '5.4', '5.5', '5.6');
/** A reply whose code may let its wording speak of the mailbox: none, 5.0.x, 5.2.0, 5.7.x. */
const wordingDecides = (r: ReplyReading) =>
  permanent(r) && !notAboutMailboxCode(r) && !codeIn(r, '5.1', '5.2.1', '5.2.2');

/** The rows, in order. */
export const CLASSIFICATION_RULES: readonly ClassificationRule[] = Object.freeze([
  {
    id: 'accepted',
    description: '2xx (at the greeting: 220)',
    outcome: 'accepted',
    matches: (r, { stage }) =>
      stage === 'greeting' ? r.reply.code === 220 : r.reply.code >= 200 && r.reply.code < 300,
  },
  {
    id: 'temp-greylist-text',
    description: '4xx with greylist wording',
    outcome: 'greylisted',
    matches: (r) => temporary(r) && GREYLIST.test(r.text),
  },
  {
    id: 'temp-rate',
    description:
      '4xx with rate-limit wording ("receiving mail too quickly", "rate limited", a sending quota)',
    outcome: 'mail_server_temporary_error',
    matches: (r) => temporary(r) && RATE.test(r.text),
  },
  {
    id: 'temp-refused-us',
    description:
      '4xx about us: a sender / client / HELO prefix, or blocklist, spam, reputation, SPF/DMARC, reverse-DNS, policy, sender wording',
    outcome: 'antispam_system',
    matches: (r) => temporary(r) && (r.about === 'us' || REFUSES_US.test(r.text)),
  },
  {
    id: 'temp-session-limit',
    description: '4xx about the session: too many errors / invalid recipients / connections / recipients',
    outcome: 'mail_server_temporary_error',
    matches: (r) => temporary(r) && aboutSession(r),
  },
  {
    id: 'temp-greylist-code',
    description: '4.7.1 or 4.2.0 on RCPT',
    outcome: 'greylisted',
    matches: (r, { stage }) =>
      stage === 'rcpt' && temporary(r) && (r.enhanced === '4.7.1' || r.enhanced === '4.2.0'),
  },
  {
    id: 'temp-other',
    description: 'any other 4xx (421 included)',
    outcome: 'mail_server_temporary_error',
    matches: temporary,
  },
  {
    id: 'microsoft365-edge-block',
    description:
      "Microsoft only (a Microsoft 365 / Outlook.com MX, or a reply naming Microsoft's servers): `550 5.4.1 Recipient address rejected: Access denied`, Directory-Based Edge Blocking of a missing recipient",
    outcome: 'mailbox_not_found',
    matches: (r, context) =>
      atMicrosoft(r, context) &&
      permanent(r) &&
      codeIn(r, '5.4.1') &&
      r.about === 'recipient' &&
      /^access denied/i.test(r.text),
  },
  {
    id: 'outlook-mailbox-unavailable',
    description:
      "Microsoft only (as row 8): Outlook.com's `550 5.5.0 Requested action not taken: mailbox unavailable`",
    outcome: 'mailbox_not_found',
    matches: (r, context) =>
      atMicrosoft(r, context) && permanent(r) && codeIn(r, '5.5.0') && /mailbox unavailable/i.test(r.text),
  },
  {
    id: 'trendmicro-directory',
    description:
      'Trend Micro Email Security only: `554 5.7.1 <a>: Recipient address rejected: Access denied` (the recipient is not in its directory)',
    outcome: 'mailbox_not_found',
    matches: (r, context) =>
      at(context, 'trendmicro') && permanent(r) && r.about === 'recipient' && /^access denied/i.test(r.text),
  },
  {
    id: 'perm-rate',
    description:
      "5xx with rate-limit wording (Gmail's `550 5.2.1 ... receiving mail at a rate`, a daily relay quota)",
    outcome: 'mail_server_temporary_error',
    matches: (r) => permanent(r) && RATE.test(r.text),
  },
  {
    id: 'perm-refused-us',
    description:
      '5xx about us: a sender / client / HELO prefix, or blocklist, spam, reputation, SPF/DKIM/DMARC, authentication, reverse-DNS/PTR, policy, access-denied, virus, sender wording',
    outcome: 'antispam_system',
    matches: (r) => permanent(r) && (r.about === 'us' || REFUSES_US.test(r.text)),
  },
  {
    id: 'perm-session-limit',
    description: '5xx about the session: too many errors / invalid recipients / connections / recipients',
    outcome: 'mail_server_temporary_error',
    matches: (r) => permanent(r) && aboutSession(r),
  },
  {
    id: 'perm-before-rcpt',
    description: '5xx at the greeting, EHLO/HELO or MAIL FROM: never about the recipient',
    outcome: 'antispam_system',
    matches: (r, { stage }) => permanent(r) && (stage === 'greeting' || stage === 'ehlo' || stage === 'mail'),
  },
  {
    id: 'perm-size',
    description:
      '5xx with message-size wording (too large, size limit): a limit on the message, not a full mailbox',
    outcome: 'smtp_protocol_error',
    matches: (r) => permanent(r) && SIZE.test(r.text),
  },
  {
    id: 'perm-sender-code',
    description: '5.1.7 / 5.1.8 (our sender)',
    outcome: 'antispam_system',
    matches: (r) => permanent(r) && codeIn(r, '5.1.7', '5.1.8'),
  },
  {
    id: 'perm-not-mailbox-code',
    description:
      '5.1.4, 5.2.3, 5.2.4, 5.3.x, 5.4.x, 5.5.x, 5.6.x: the system, the route, the protocol or the content',
    outcome: 'smtp_protocol_error',
    matches: (r) => permanent(r) && notAboutMailboxCode(r),
  },
  {
    id: 'perm-recipient-prefix-system',
    description:
      '`Recipient address rejected:` followed by system, protocol or routing wording (configuration error, loops back, verification)',
    outcome: 'smtp_protocol_error',
    matches: (r) =>
      permanent(r) && r.about === 'recipient' && NOT_ABOUT_MAILBOX.test(r.text) && !NOT_FOUND.test(r.text),
  },
  {
    id: 'perm-address-code',
    description: '5.1.x (bad mailbox, bad domain, bad syntax, moved, 5.1.10 recipient not found)',
    outcome: 'mailbox_not_found',
    matches: (r) => permanent(r) && codeIn(r, '5.1'),
  },
  {
    id: 'perm-disabled-code',
    description: '5.2.1 (mailbox disabled)',
    outcome: 'mailbox_disabled',
    matches: (r) => permanent(r) && codeIn(r, '5.2.1'),
  },
  {
    id: 'perm-quota-code',
    description: '5.2.2 (mailbox full)',
    outcome: 'mailbox_quota_exceeded',
    matches: (r) => permanent(r) && codeIn(r, '5.2.2'),
  },
  {
    id: 'perm-disabled-text',
    description: '5xx (no code, 5.0.x, 5.2.0 or 5.7.x) with disabled / inactive / suspended / closed wording',
    outcome: 'mailbox_disabled',
    matches: (r) => wordingDecides(r) && DISABLED.test(r.text),
  },
  {
    id: 'perm-quota-text',
    description: '5xx (no code, 5.0.x, 5.2.0 or 5.7.x) with quota / mailbox full / storage wording',
    outcome: 'mailbox_quota_exceeded',
    matches: (r) => wordingDecides(r) && QUOTA.test(r.text),
  },
  {
    id: 'perm-not-found-text',
    description:
      '5xx (no code, 5.0.x, 5.2.0 or 5.7.x) with "user unknown" wording (no such user, mailbox unavailable, does not exist, invalid recipient, ...)',
    outcome: 'mailbox_not_found',
    matches: (r) => wordingDecides(r) && NOT_FOUND.test(r.text),
  },
  {
    id: 'perm-policy',
    description: '5.7.x, or 5xx with relay / denied / refused / prohibited / not authorized wording',
    outcome: 'antispam_system',
    matches: (r) => permanent(r) && (codeIn(r, '5.7') || POLICY.test(r.text)),
  },
  {
    id: 'perm-not-about-mailbox',
    description: '5.2.0, or 5xx with protocol / syntax / verification / system / routing wording',
    outcome: 'smtp_protocol_error',
    matches: (r) => permanent(r) && (codeIn(r, '5.2.0') || NOT_ABOUT_MAILBOX.test(r.text)),
  },
  {
    id: 'perm-552',
    description: '552 without a more specific code or text',
    outcome: 'mailbox_quota_exceeded',
    matches: (r) => r.reply.code === 552,
  },
  {
    id: 'perm-550-551-553',
    description: '550, 551 or 553 without a more specific code or text',
    outcome: 'mailbox_not_found',
    matches: (r) => r.reply.code === 550 || r.reply.code === 551 || r.reply.code === 553,
  },
  {
    id: 'perm-554',
    description: '554 (transaction failed) without a more specific code or text',
    outcome: 'antispam_system',
    matches: (r) => r.reply.code === 554,
  },
] satisfies ClassificationRule[]);
