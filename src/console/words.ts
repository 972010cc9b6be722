/**
 * Plain words for statuses and sub-statuses (docs/taxonomy.md), and the icon that goes with each status, so that
 * a status is never told by colour alone.
 * @module
 */
import type { Result } from './types.js';

/** Every status, in the order the console lists them. */
export const STATUSES: readonly Result['status'][] = [
  'valid',
  'catch_all',
  'unknown',
  'do_not_mail',
  'invalid',
];

/** A status as a word and an icon. */
export const STATUS_LABEL: Readonly<Record<Result['status'], { word: string; icon: string }>> = {
  valid: { word: 'Valid', icon: '✔' },
  catch_all: { word: 'Catch-all', icon: '◐' },
  unknown: { word: 'Unknown', icon: '?' },
  do_not_mail: { word: 'Do not mail', icon: '⚠' },
  invalid: { word: 'Invalid', icon: '✖' },
};

const SUB_STATUS: Readonly<Record<string, string>> = {
  failed_syntax_check: 'Not a deliverable address (syntax).',
  no_dns_entries: 'The domain does not exist or has no mail servers.',
  does_not_accept_mail: 'The domain says it accepts no mail (null MX).',
  unroutable_ip_address: 'The mail servers are on addresses that are not on the internet.',
  mailbox_not_found: 'The mail server says this mailbox does not exist.',
  mailbox_disabled: 'The mailbox exists but is disabled.',
  mailbox_quota_exceeded: 'The mailbox is full.',
  greylisted: 'The server asked to try again later (greylisting).',
  mail_server_temporary_error: 'The mail server had a temporary problem.',
  mail_server_did_not_respond: 'The mail server did not greet us in time.',
  timeout_exceeded: 'The check ran out of time.',
  failed_smtp_connection: 'No mail server could be reached.',
  forcible_disconnect: 'The mail server hung up during the check.',
  antispam_system: 'The mail server refused the check by policy (says nothing about the mailbox).',
  dns_error: 'DNS gave no answer; try again later.',
  smtp_protocol_error: 'The mail server answered in a way that breaks the protocol.',
  exception_occurred: 'An unexpected error happened during the check.',
  smtp_not_checked: 'The address looks fine, but the mailbox was not checked.',
  disposable: 'A throwaway (disposable) address provider.',
  role_based: 'A role address (a team or function, not a person).',
  blocklisted: 'On the blocklist.',
};

/**
 * The sub-status in plain words (the code itself for one the console does not know). Without a sub-status the
 * words depend on the status: a catch-all server accepts every address, so its "yes" confirms nothing.
 */
export function subStatusWords(subStatus: string | null, status?: Result['status']): string {
  if (subStatus === null && status === 'catch_all')
    return 'The domain accepts mail for any address, so this mailbox could not be confirmed.';
  if (subStatus === null) return 'The mail server accepted this address.';
  return SUB_STATUS[subStatus] ?? subStatus;
}

/** A result's `reason` for a person: the sentence, and the machine code it starts with (or `null`). */
export interface ReasonWords {
  readonly words: string;
  readonly code: string | null;
}

/**
 * Splits a syntax failure's `reason` (`no_at_sign: the address has no @`) into the sentence a person reads
 * (`The address has no @.`) and its code (`no_at_sign`); any other reason is kept as it is, with no code.
 */
export function reasonWords(reason: string, subStatus: string | null): ReasonWords {
  const coded = subStatus === 'failed_syntax_check' ? /^([a-z][a-z0-9_]*): (.+)$/s.exec(reason) : null;
  if (coded === null) return { words: reason, code: null };
  const text = coded[2]!;
  const sentence = `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
  return { words: /[.!?)]$/.test(sentence) ? sentence : `${sentence}.`, code: coded[1]! };
}

/**
 * What a failed sign-in tells a person: a key the server refused (401), a server out of reach (status 0) or
 * busy (429), in words; another failure keeps the API's own message.
 */
export function signInFailureWords(failure: { readonly message: string; readonly status?: number }): string {
  switch (failure.status) {
    case 401:
    case 403:
      return 'This API key was not accepted. Check that you copied the whole key, then try again.';
    case 0:
      return 'The server cannot be reached. Check your connection, then try again.';
    case 429:
      return 'Too many attempts. Wait a moment, then try again.';
    default:
      return failure.message;
  }
}
