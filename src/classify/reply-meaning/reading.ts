/**
 * A reply read once for the classification rules: its codes, who it speaks of, and the text its wording rules
 * read.
 * @module
 */
import type { SmtpReply } from '../../contracts/smtp.js';
import { MICROSOFT_SIGNED, prefixOf, withoutEchoedAddresses } from './wording.js';

/** One reply, read for the rules. */
export interface ReplyReading {
  /** The reply as parsed. */
  readonly reply: SmtpReply;
  /**
   * The RFC 3463 code: the one at the start of the reply, else the first one written inside its text (qmail's
   * `(#5.7.1)`, Cisco's `#5.1.0`, Barracuda's `cuda_nsu 5.1.1`, a relay's quoted `550 5.1.1`), whose class
   * matches the reply code; `null` when there is none.
   */
  readonly enhanced: string | null;
  /** `recipient` or `us` when a Postfix-style prefix says whom the reply speaks of, else `null`. */
  readonly about: 'recipient' | 'us' | null;
  /** The text the wording rules read: after the last prefix when there is one, without echoed addresses. */
  readonly text: string;
  /** True when the reply names Microsoft's servers or tags (see `MICROSOFT_SIGNED`). */
  readonly microsoftSigned: boolean;
}

const EMBEDDED = /(?:^|[\s(#[])([245])\.(\d{1,3})\.(\d{1,3})(?![.\d])/;

/** The RFC 3463 code written inside `text`, if its class is `replyClass`. */
function embeddedCode(text: string, replyClass: number): string | null {
  const match = EMBEDDED.exec(text);
  if (match === null || Number(match[1]) !== replyClass) return null;
  return `${match[1]}.${Number(match[2])}.${Number(match[3])}`;
}

/** Reads `reply` for the rules. */
export function readReply(reply: SmtpReply): ReplyReading {
  const text = withoutEchoedAddresses(reply.text);
  const prefixed = prefixOf(text);
  return {
    reply,
    enhanced: reply.enhanced ?? embeddedCode(reply.text, Math.floor(reply.code / 100)),
    about: prefixed?.about ?? null,
    text: prefixed?.rest ?? text,
    microsoftSigned: MICROSOFT_SIGNED.test(reply.text),
  };
}

/** True when the reading's RFC 3463 code is one of `codes` or falls under one of them (`5.7` covers `5.7.26`). */
export function codeIn(reading: ReplyReading, ...codes: string[]): boolean {
  const { enhanced } = reading;
  return enhanced !== null && codes.some((code) => `${enhanced}.`.startsWith(`${code}.`));
}
