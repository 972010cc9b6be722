/**
 * The egress address as the mail server saw it: many servers echo the client's address in their EHLO reply
 * (`250-mx.google.com at your service, [203.0.113.7]`, `250-... Hello [203.0.113.7]`).
 * @module
 */
import { parseIp } from '../net/guard.js';

const BRACKETED = /[[(](?:IPv6:)?([0-9A-Fa-f:.]{2,45})[\])]/g;

/**
 * The first IP address in brackets or parentheses in `text` (the first line of an EHLO reply, without the
 * code), or `null`. The server's own name, a bare number, or a malformed address never count.
 * @example
 * echoedAddress('mx.google.com at your service, [203.0.113.7]'); // '203.0.113.7'
 * echoedAddress('mx.example Hello [IPv6:2001:db8::7]'); // '2001:db8::7'
 * echoedAddress('mx.example ESMTP'); // null
 */
export function echoedAddress(text: string): string | null {
  for (const match of text.slice(0, 1024).matchAll(BRACKETED)) {
    const candidate = match[1] ?? '';
    if (parseIp(candidate) !== null) return candidate;
  }
  return null;
}
