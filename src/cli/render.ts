/**
 * The human-readable summary of one verification result (`mailvet verify` without `--json`).
 * @module
 */
import type { VerificationResult } from '../result.js';
import type { Style } from './style.js';

function flagsOf(result: VerificationResult): string {
  const flags = (['disposable', 'role', 'free', 'accept_all'] as const).filter((flag) => result[flag]);
  return flags.length === 0 ? '-' : flags.join(', ');
}

/** Keeps control characters from the input or a server out of the terminal. */
function printable(text: string): string {
  return text.replace(
    /[\u0000-\u001f\u007f-\u009f]/g,
    (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/**
 * Renders a result as a few aligned lines: the address with its status and score, then sub-status, reason, flags,
 * suggestion and MX (with the provider), and the SMTP transcript when there is one.
 * @example
 * renderResult(result, createStyle(false));
 * // someone@example.com  unknown  score 45
 * //   sub_status  smtp_not_checked
 * //   ...
 */
export function renderResult(result: VerificationResult, style: Style): string {
  const rows: [string, string][] = [];
  if (result.normalized !== null && result.normalized !== result.email)
    rows.push(['normalized', result.normalized]);
  rows.push(['sub_status', result.sub_status ?? '-']);
  if (result.reason !== undefined) rows.push(['reason', result.reason]);
  rows.push(['flags', flagsOf(result)]);
  rows.push(['suggestion', result.did_you_mean ?? '-']);
  const provider = result.smtp_provider === null ? '' : ` (${result.smtp_provider})`;
  rows.push(['mx', result.mx_record === null ? '-' : `${result.mx_record}${provider}`]);
  const head = `${style.bold(printable(result.email) || '""')}  ${style.status(result.status)}  score ${result.score}`;
  const body = rows.map(([label, value]) => `  ${style.dim(label.padEnd(11))} ${printable(value)}`);
  const transcript = (result.smtp_transcript ?? []).map(
    (line, index) => `  ${style.dim((index === 0 ? 'smtp' : '').padEnd(11))} ${printable(line)}`,
  );
  return `${[head, ...body, ...transcript].join('\n')}\n`;
}
