/**
 * Building one {@link DiagnosticCheck}.
 * @module
 */
import type { CheckName, CheckStatus, DiagnosticCheck } from './types.js';

/** The title of each check, as the checklist prints it. */
export const CHECK_TITLES: Readonly<Record<CheckName, string>> = Object.freeze({
  dns: 'DNS',
  proxy: 'SOCKS proxy',
  port25: 'Port 25',
  egress: 'Egress address',
  reverse_dns: 'Reverse DNS',
  helo: 'HELO name',
  spf: 'SPF',
  sender_domain: 'MAIL FROM domain',
  blocklists: 'Blocklists',
});

const MAX_LINE = 400;

/** One line: control characters become spaces, and the text is bounded (evidence may quote a hostile server). */
export function oneLine(text: string): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
  return flat.length > MAX_LINE ? `${flat.slice(0, MAX_LINE)}…` : flat;
}

/** A check result; advice is dropped for `pass`. */
export function makeCheck(
  name: CheckName,
  status: CheckStatus,
  evidence: string,
  advice: string | null,
  details: Readonly<Record<string, unknown>> = {},
): DiagnosticCheck {
  return {
    name,
    title: CHECK_TITLES[name],
    status,
    evidence: oneLine(evidence),
    advice: status === 'pass' || advice === null ? null : oneLine(advice),
    details,
  };
}
