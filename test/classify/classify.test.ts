import { describe, expect, it } from 'vitest';
import type { ProviderProfileId } from '../../src/classify/profiles.js';
import {
  CLASSIFICATION_RULES,
  classifyError,
  classifyReply,
  explainReply,
  limitsSession,
} from '../../src/classify/reply.js';
import { SmtpError } from '../../src/errors.js';
import { SUB_STATUS_OF } from '../../src/result.js';
import { parseReply } from '../../src/smtp/reply.js';
import type { SmtpStage } from '../../src/smtp/types.js';

const reply = (line: string) => parseReply([line]);

/**
 * [rule id, stage, reply line, outcome, provider profile?]: real-world replies, at least one per row of
 * docs/classification.md (the labelled corpus in fixtures/smtp-replies is tested in classify-corpus.test.ts).
 */
type Example = readonly [string, SmtpStage, string, string, ProviderProfileId?];
const EXAMPLES: readonly Example[] = [
  ['accepted', 'rcpt', '250 2.1.5 Recipient OK', 'accepted'],
  ['accepted', 'rcpt', '251 2.1.5 User not local; will forward', 'accepted'],
  ['accepted', 'greeting', '220 mx.google.com ESMTP', 'accepted'],
  [
    'temp-greylist-text',
    'rcpt',
    '450 4.2.0 <a@b.example>: Recipient address rejected: Greylisted, see http://postgrey.schweikert.ch/',
    'greylisted',
  ],
  ['temp-greylist-text', 'rcpt', '451 Graylisted, please try again in 5 minutes', 'greylisted'],
  ['temp-greylist-text', 'mail', '421 4.7.0 greylisting in action', 'greylisted'],
  [
    'temp-refused-us',
    'rcpt',
    '451 4.7.1 Client host [198.51.100.7] blocked using zen.spamhaus.org',
    'antispam_system',
  ],
  [
    'temp-rate',
    'greeting',
    '421 4.7.0 [TSS04] Messages from 198.51.100.7 temporarily deferred due to unexpected volume or user complaints - 4.16.55.1; see https://postmaster.yahooinc.com/error-codes (reputation)',
    'mail_server_temporary_error',
  ],
  [
    'temp-session-limit',
    'rcpt',
    '421 4.7.0 mx.example.com Error: too many errors',
    'mail_server_temporary_error',
  ],
  [
    'temp-session-limit',
    'greeting',
    '421 Too many concurrent SMTP connections from this IP address; please try again later.',
    'mail_server_temporary_error',
  ],
  ['temp-session-limit', 'rcpt', '450 4.7.1 too many errors', 'mail_server_temporary_error'],
  ['temp-session-limit', 'rcpt', '452 4.5.3 Too many recipients', 'mail_server_temporary_error'],
  ['temp-refused-us', 'greeting', '421 4.7.0 Too many connections, you are blocked', 'antispam_system'],
  ['temp-greylist-code', 'rcpt', '451 4.7.1 Please try again later', 'greylisted'],
  ['temp-greylist-code', 'rcpt', '450 4.2.0 Mailbox temporarily unavailable', 'greylisted'],
  [
    'temp-other',
    'rcpt',
    '451 4.3.0 Temporary local problem - please try later',
    'mail_server_temporary_error',
  ],
  ['temp-other', 'rcpt', '452 4.2.2 Mailbox full, try later', 'mail_server_temporary_error'],
  [
    'temp-other',
    'greeting',
    '421 4.3.2 Service not available, closing transmission channel',
    'mail_server_temporary_error',
  ],
  ['temp-other', 'mail', '451 4.7.1 try again later', 'mail_server_temporary_error'],
  [
    'perm-refused-us',
    'rcpt',
    '550 5.7.1 Service unavailable; Client host [198.51.100.7] blocked using Spamhaus',
    'antispam_system',
  ],
  [
    'perm-refused-us',
    'rcpt',
    '550 Message rejected because 198.51.100.7 is listed in an RBL',
    'antispam_system',
  ],
  ['perm-refused-us', 'rcpt', '554 5.7.1 Your IP has a poor reputation', 'antispam_system'],
  ['perm-refused-us', 'rcpt', '550 5.1.1 sender IP is on our blacklist', 'antispam_system'],
  ['perm-refused-us', 'rcpt', '553 spam detected', 'antispam_system'],
  ['perm-session-limit', 'rcpt', '550 5.7.1 too many errors', 'mail_server_temporary_error'],
  ['perm-session-limit', 'rcpt', '550 too many errors', 'mail_server_temporary_error'],
  ['perm-session-limit', 'rcpt', '550 5.5.1 Too many invalid recipients', 'mail_server_temporary_error'],
  ['perm-session-limit', 'rcpt', '550 5.1.1 Too many unknown recipients', 'mail_server_temporary_error'],
  ['perm-session-limit', 'rcpt', '552 5.5.3 Too many recipients', 'mail_server_temporary_error'],
  ['perm-rate', 'rcpt', '550 5.7.1 Rate limit exceeded, try again later', 'mail_server_temporary_error'],
  ['perm-session-limit', 'greeting', '554 Too many connections from your IP', 'mail_server_temporary_error'],
  [
    'perm-before-rcpt',
    'greeting',
    '554 5.7.1 mx.example.com ESMTP not accepting messages',
    'antispam_system',
  ],
  ['perm-before-rcpt', 'greeting', '554 mx.example.com', 'antispam_system'],
  [
    'perm-refused-us',
    'ehlo',
    '550 5.5.2 Helo command rejected: need fully-qualified hostname',
    'antispam_system',
  ],
  [
    'perm-refused-us',
    'mail',
    '553 5.1.8 <verify@probe.example>: Sender address rejected: Domain not found',
    'antispam_system',
  ],
  ['perm-refused-us', 'mail', '550 5.1.0 Sender rejected', 'antispam_system'],
  ['perm-refused-us', 'rcpt', '554 5.7.1 <a@b.example>: Relay access denied', 'antispam_system'],
  ['perm-policy', 'rcpt', '550 5.7.1 Unable to relay', 'antispam_system'],
  [
    'perm-refused-us',
    'rcpt',
    '550 5.7.1 <a@b.example>: Recipient address rejected: Access denied',
    'antispam_system',
  ],
  ['perm-not-found-text', 'rcpt', '550 5.7.1 No such user here', 'mailbox_not_found'],
  ['perm-refused-us', 'rcpt', '553 5.1.7 The sender address is malformed', 'antispam_system'],
  [
    'perm-address-code',
    'rcpt',
    '550 5.1.1 The email account that you tried to reach does not exist',
    'mailbox_not_found',
  ],
  [
    'perm-address-code',
    'rcpt',
    '550 5.1.1 <bob@example.com>: Recipient address rejected: User unknown in virtual mailbox table',
    'mailbox_not_found',
  ],
  [
    'perm-address-code',
    'rcpt',
    '550 5.1.10 RESOLVER.ADR.RecipientNotFound; Recipient not found by SMTP address lookup',
    'mailbox_not_found',
  ],
  ['perm-address-code', 'rcpt', '553 5.1.3 mailbox name not allowed', 'mailbox_not_found'],
  [
    'perm-disabled-code',
    'rcpt',
    '550 5.2.1 The email account that you tried to reach is disabled',
    'mailbox_disabled',
  ],
  ['perm-disabled-code', 'rcpt', '550 5.2.1 mailbox unavailable', 'mailbox_disabled'],
  [
    'perm-quota-code',
    'rcpt',
    '552 5.2.2 The email account that you tried to reach is over quota',
    'mailbox_quota_exceeded',
  ],
  ['perm-quota-code', 'rcpt', '550 5.2.2 mailbox full', 'mailbox_quota_exceeded'],
  ['perm-disabled-text', 'rcpt', '550 This account has been disabled or discontinued', 'mailbox_disabled'],
  ['perm-disabled-text', 'rcpt', '554 delivery error: dd This user is inactive', 'mailbox_disabled'],
  ['perm-disabled-text', 'rcpt', '550 5.0.0 account suspended', 'mailbox_disabled'],
  ['perm-quota-text', 'rcpt', '554 5.0.0 Mailbox is full', 'mailbox_quota_exceeded'],
  [
    'perm-quota-text',
    'rcpt',
    '550 Requested action not taken: insufficient system storage',
    'mailbox_quota_exceeded',
  ],
  ['perm-not-found-text', 'rcpt', '550 Requested action not taken: mailbox unavailable', 'mailbox_not_found'],
  ['perm-not-found-text', 'rcpt', '550 No such user here', 'mailbox_not_found'],
  [
    'perm-not-found-text',
    'rcpt',
    "554 delivery error: dd This user doesn't have a yahoo.com account",
    'mailbox_not_found',
  ],
  ['perm-not-found-text', 'rcpt', '511 sorry, no mailbox here by that name', 'mailbox_not_found'],
  ['perm-not-found-text', 'rcpt', '553 address does not exist', 'mailbox_not_found'],
  ['perm-not-found-text', 'rcpt', '550 Invalid recipient', 'mailbox_not_found'],
  ['perm-policy', 'rcpt', '550 relaying denied', 'antispam_system'],
  [
    'perm-policy',
    'rcpt',
    "553 sorry, that domain isn't in my list of allowed rcpthosts; no valid cert for gatewaying (#5.7.1) relay",
    'antispam_system',
  ],
  ['perm-552', 'rcpt', '552 Requested mail action aborted', 'mailbox_quota_exceeded'],
  ['perm-550-551-553', 'rcpt', '550 Rejected', 'mailbox_not_found'],
  ['perm-550-551-553', 'rcpt', '551 User not local; please try <forward@example.org>', 'mailbox_not_found'],
  ['perm-550-551-553', 'rcpt', '553 Requested action not taken', 'mailbox_not_found'],
  ['perm-554', 'rcpt', '554 Transaction failed', 'antispam_system'],
  ['perm-554', 'rcpt', '554 5.0.0 Error', 'antispam_system'],
  ['perm-not-mailbox-code', 'rcpt', '500 5.5.2 Syntax error, command unrecognized', 'smtp_protocol_error'],
  ['perm-not-mailbox-code', 'rcpt', '503 5.5.1 Bad sequence of commands', 'smtp_protocol_error'],
  ['none', 'rcpt', '354 Start mail input', 'smtp_protocol_error'],
  ['none', 'greeting', '250 hello without a greeting', 'smtp_protocol_error'],
  ['perm-not-mailbox-code', 'rset', '502 5.5.1 RSET not implemented', 'smtp_protocol_error'],
  [
    'temp-rate',
    'rcpt',
    '450 4.2.1 The user you are trying to contact is receiving mail too quickly. Please resend your message at a later time. - gsmtp',
    'mail_server_temporary_error',
  ],
  [
    'microsoft365-edge-block',
    'rcpt',
    '550 5.4.1 Recipient address rejected: Access denied. AS(201806281)',
    'mailbox_not_found',
    'microsoft365',
  ],
  [
    'perm-refused-us',
    'rcpt',
    '550 5.4.1 <a@b.example>: Recipient address rejected: Access denied',
    'antispam_system',
  ],
  [
    'microsoft365-edge-block',
    'rcpt',
    '550 5.4.1 Recipient address rejected: Access denied. AS(201806281) [BN1NAM02FT022.eop-nam02.prod.protection.outlook.com]',
    'mailbox_not_found',
  ],
  [
    'perm-refused-us',
    'rcpt',
    '550 5.4.1 Relay Access Denied [BN1NAM02FT022.eop-nam02.prod.protection.outlook.com]',
    'antispam_system',
  ],
  [
    'outlook-mailbox-unavailable',
    'rcpt',
    '550 5.5.0 Requested action not taken: mailbox unavailable.',
    'mailbox_not_found',
    'outlook',
  ],
  [
    'perm-not-mailbox-code',
    'rcpt',
    '550 5.5.0 Requested action not taken: mailbox unavailable.',
    'smtp_protocol_error',
  ],
  [
    'trendmicro-directory',
    'rcpt',
    '554 5.7.1 <a@b.example>: Recipient address rejected: Access denied.',
    'mailbox_not_found',
    'trendmicro',
  ],
  [
    'perm-rate',
    'rcpt',
    '550 5.2.1 The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered. - gsmtp',
    'mail_server_temporary_error',
  ],
  ['perm-rate', 'rcpt', '550 Daily relay quota exceeded', 'mail_server_temporary_error'],
  ['perm-size', 'rcpt', '552 Message size exceeds fixed limit', 'smtp_protocol_error'],
  [
    'perm-size',
    'rcpt',
    '552 5.2.2 Message size exceeds the allowed size for this account',
    'smtp_protocol_error',
  ],
  ['perm-sender-code', 'rcpt', '553 5.1.7 Invalid address', 'antispam_system'],
  ['perm-not-mailbox-code', 'rcpt', '550 5.2.4 Mailing list expansion problem', 'smtp_protocol_error'],
  [
    'perm-not-mailbox-code',
    'rcpt',
    '550 5.4.310 DNS domain contoso.com does not exist',
    'smtp_protocol_error',
  ],
  [
    'perm-not-mailbox-code',
    'rcpt',
    '554 5.6.0 <a@b.example>: Recipient address rejected: Media error',
    'smtp_protocol_error',
  ],
  [
    'perm-recipient-prefix-system',
    'rcpt',
    '550 5.1.1 <a@b.example>: Recipient address rejected: undeliverable address: mail for b.example loops back to myself',
    'smtp_protocol_error',
  ],
  ['perm-not-found-text', 'rcpt', '550 5.7.1 No such user!', 'mailbox_not_found'],
  ['perm-not-about-mailbox', 'rcpt', '550 Protocol violation', 'smtp_protocol_error'],
  ['perm-not-about-mailbox', 'rcpt', '550 5.2.0 Other or undefined mailbox status', 'smtp_protocol_error'],
  ['perm-policy', 'rcpt', '550 Denied', 'antispam_system'],
];

describe('classifyReply', () => {
  it.each(EXAMPLES.map((example) => [...example]))('row %s: at %s, %j is %s', (...example) => {
    const [rule, stage, line, outcome, profile = null] = example as unknown as Example;
    const explained = explainReply(reply(line), stage, profile);
    expect(explained.outcome).toBe(outcome);
    expect(explained.rule?.id ?? 'none').toBe(rule);
    expect(classifyReply(reply(line), stage, profile)).toBe(outcome);
  });

  it('has an example for every row of the table', () => {
    const covered = new Set(EXAMPLES.map(([rule]) => rule));
    for (const rule of CLASSIFICATION_RULES) expect(covered, rule.id).toContain(rule.id);
  });

  it('never gives an invalid verdict for a refusal at the greeting, EHLO or MAIL FROM', () => {
    const lines = [
      '550 5.1.1 user unknown',
      '552 5.2.2 full',
      '550 5.2.1 disabled',
      '553 no such user',
      '550 nope',
    ];
    for (const stage of ['greeting', 'ehlo', 'mail'] as const) {
      for (const line of lines) {
        const outcome = classifyReply(reply(line), stage);
        expect(outcome === 'accepted' ? 'accepted' : SUB_STATUS_OF[outcome]).toBe('unknown');
      }
    }
  });

  it('never gives an invalid verdict for a 4xx', () => {
    for (const line of [
      '450 4.1.1 user unknown',
      '452 4.2.2 over quota',
      '450 4.2.1 mailbox disabled',
      '421 bye',
    ]) {
      const outcome = classifyReply(reply(line), 'rcpt');
      expect(outcome === 'accepted' ? 'accepted' : SUB_STATUS_OF[outcome]).toBe('unknown');
    }
  });
});

describe('wording that is not about the mailbox never gives a missing mailbox', () => {
  it.each([
    ['550 Service unavailable', 'antispam_system'],
    ['550 Forbidden', 'antispam_system'],
    ['550 Mail rejected', 'antispam_system'],
    ['550 Mail from your domain is not accepted from this host', 'antispam_system'],
    ['550 Invalid HELO name', 'antispam_system'],
    ['550 Your mail server is misconfigured', 'antispam_system'],
    ['550 Greylisted, come back later', 'antispam_system'],
    ['550 Address could not be verified', 'smtp_protocol_error'],
    ['550 Too many hops', 'smtp_protocol_error'],
    ['550 Postfach voll', 'mailbox_quota_exceeded'],
    ['552 Boîte aux lettres pleine', 'mailbox_quota_exceeded'],
    ['550 Benutzer unbekannt', 'mailbox_not_found'],
    ['550 Utilisateur inconnu', 'mailbox_not_found'],
    ['550 Konto deaktiviert', 'mailbox_disabled'],
    ['550 Recipient verification failed: user unknown', 'mailbox_not_found'],
  ] as const)('%s is %s', (line, outcome) => {
    expect(classifyReply(reply(line), 'rcpt')).toBe(outcome);
  });
});

describe('refusals about the session, not the mailbox', () => {
  it('are never invalid, whatever their code', () => {
    for (const line of [
      '550 5.1.1 too many errors',
      '550 5.2.1 Too many errors',
      '552 too many errors',
      '553 too many failed recipients',
      '550 5.1.0 Too many bad recipients, closing',
      '554 5.7.1 too many rejected RCPTs',
      '550 Throttled: too fast',
    ]) {
      const outcome = classifyReply(reply(line), 'rcpt');
      expect(outcome, line).toBe('mail_server_temporary_error');
      expect(limitsSession(reply(line)), line).toBe(true);
    }
  });

  it('put a mail host in backoff, a full envelope does not', () => {
    expect(limitsSession(reply('421 4.7.0 mx.example.com Error: too many errors'))).toBe(true);
    expect(limitsSession(reply('452 4.5.3 Too many recipients'))).toBe(false);
    expect(limitsSession(reply('550 5.1.1 user unknown'))).toBe(false);
    expect(
      limitsSession(reply('451 VS1-IP Excessive unknown recipients - possible Open Relay (#4.1.8)')),
    ).toBe(true);
    expect(limitsSession(reply('250 2.1.5 ok, too many errors is fine'))).toBe(true); // the pool checks the code
  });

  it('are not read in the addresses a reply echoes (the recipient is ours to choose)', () => {
    for (const [line, outcome] of [
      ['550 5.1.1 <ratelimit@example.com>: Recipient address rejected: User unknown', 'mailbox_not_found'],
      ['550 5.1.1 <throttle@example.com>: Recipient address rejected: User unknown', 'mailbox_not_found'],
      ['550 <"too many errors"@example.com>: user unknown', 'mailbox_not_found'],
      ['550 5.1.1 <spam@example.com>: Recipient address rejected: User unknown', 'mailbox_not_found'],
      ['550 <blocked@example.com> no such user', 'mailbox_not_found'],
      ['550 5.2.2 <full.quota@example.com> mailbox full', 'mailbox_quota_exceeded'],
      ['550 <a@example.com> too many errors', 'mail_server_temporary_error'],
    ] as const) {
      expect(classifyReply(reply(line), 'rcpt'), line).toBe(outcome);
    }
    expect(
      limitsSession(reply('550 5.1.1 <too.many.connections@example.com>: rate limit user unknown')),
    ).toBe(true);
    expect(limitsSession(reply('550 5.1.1 <rate-limit@example.com>: user unknown'))).toBe(false);
  });

  it('reads hostile replies in linear time', () => {
    const hostile = [
      `550 <${'@'.repeat(2000)}`,
      `550 ${'<'.repeat(2000)}@`,
      `550 ${'<a@b'.repeat(500)}`,
      `550 ${'too many '.repeat(220)}`,
      `550 ${'messages from x'.repeat(130)}`,
      `550 ${'user '.repeat(400)}`,
      `550 ${'Recipient address rejected: '.repeat(70)}`,
      `550 ${'5.1.'.repeat(500)}`,
    ];
    const started = performance.now();
    for (let round = 0; round < 20; round++) {
      for (const line of hostile) {
        expect(classifyReply(reply(line), 'rcpt')).not.toBe('accepted');
        limitsSession(reply(line));
      }
    }
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('classifyError', () => {
  it.each([
    ['connection', 'failed_smtp_connection'],
    ['tls', 'failed_smtp_connection'],
    ['no_greeting', 'mail_server_did_not_respond'],
    ['timeout', 'timeout_exceeded'],
    ['aborted', 'timeout_exceeded'],
    ['disconnect', 'forcible_disconnect'],
    ['protocol', 'smtp_protocol_error'],
    ['smtputf8', 'smtp_not_checked'],
    ['unsafe_argument', 'exception_occurred'],
    ['rejected', 'mail_server_temporary_error'],
  ] as const)('kind %s is %s', (kind, subStatus) => {
    expect(classifyError(new SmtpError(kind, 'x'))).toBe(subStatus);
  });

  it('classifies a rejection by its reply and stage', () => {
    const at = (line: string, stage: SmtpStage) =>
      classifyError(new SmtpError('rejected', 'x', { smtpReply: reply(line), stage }));
    expect(at('554 5.7.1 go away', 'greeting')).toBe('antispam_system');
    expect(at('421 4.3.2 busy', 'greeting')).toBe('mail_server_temporary_error');
    expect(at('421 4.7.0 too many recipients', 'rcpt')).toBe('mail_server_temporary_error');
    expect(at('421 4.7.0 mx.example.com Error: too many errors', 'rcpt')).toBe('mail_server_temporary_error');
    expect(at('550 Too many invalid recipients', 'rcpt')).toBe('mail_server_temporary_error');
    expect(at('550 5.5.2 bad helo', 'ehlo')).toBe('antispam_system');
    expect(at('250 odd', 'greeting')).toBe('smtp_protocol_error');
  });

  it('gives exception_occurred for anything that is not an SmtpError', () => {
    expect(classifyError(new Error('boom'))).toBe('exception_occurred');
    expect(classifyError('boom')).toBe('exception_occurred');
  });
});
