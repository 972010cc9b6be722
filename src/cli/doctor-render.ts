/**
 * The human form of a diagnostics report: a checklist, one line per check (advice indented below it), then a
 * closing verdict.
 * @module
 */
import { blocksReadiness, type CheckStatus, type DiagnosticsReport } from '../doctor/types.js';
import type { Style } from './style.js';

const MARK: Readonly<Record<CheckStatus, string>> = {
  pass: 'ok  ',
  warn: 'warn',
  fail: 'FAIL',
  skipped: 'skip',
};
const COLOUR: Readonly<Record<CheckStatus, 'valid' | 'invalid' | 'unknown' | 'catch_all'>> = {
  pass: 'valid',
  warn: 'unknown',
  fail: 'invalid',
  skipped: 'catch_all',
};

const VERDICT_COLOUR: Readonly<Record<DiagnosticsReport['verdict'], 'valid' | 'invalid' | 'unknown'>> = {
  pass: 'valid',
  warn: 'unknown',
  incomplete: 'unknown',
  fail: 'invalid',
};

/** Joins titles as prose: `a`, `a and b`, `a, b and c`. */
function prose(items: readonly string[]): string {
  return items.length < 2 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

/** The sentence after the verdict; `incomplete` names the checks that could not run and what lets them run. */
function verdictSentence(report: DiagnosticsReport): string {
  switch (report.verdict) {
    case 'pass':
      return 'this host is ready to verify mailboxes.';
    case 'warn':
      return 'verification works, but some mail servers may distrust this host: see the warnings.';
    case 'fail':
      return 'fix the failed checks first: until then, verifications from this host end mostly unknown.';
    case 'incomplete': {
      const blocked = report.checks.filter(blocksReadiness);
      const advice = blocked[0]?.advice ?? '';
      return `readiness is not known: ${prose(blocked.map((check) => check.title))} could not run. ${advice}`;
    }
  }
}

/**
 * Renders `report` as a checklist.
 * @example
 * renderDiagnostics(report, createStyle(false));
 * // [ ok ] DNS               MX of gmail.com: gmail-smtp-in.l.google.com, ...
 * // [FAIL] Port 25           no answer from ... within 5000 ms: the usual sign of a provider blocking port 25
 * //        -> Outbound port 25 is blocked: ask your provider to open it, ...
 */
export function renderDiagnostics(report: DiagnosticsReport, style: Style): string {
  const width = Math.max(...report.checks.map((check) => check.title.length)) + 2;
  const lines = [
    style.bold(
      `mailvet doctor: probe ${report.probe_domain}, EHLO ${report.helo_host}, MAIL FROM ${report.mail_from}`,
    ),
    '',
  ];
  for (const check of report.checks) {
    const mark = style.status(COLOUR[check.status], `[${MARK[check.status]}]`);
    lines.push(`${mark} ${check.title.padEnd(width)}${check.evidence}`);
    if (check.advice !== null) lines.push(style.dim(`       -> ${check.advice}`));
  }
  const count = (status: CheckStatus) => report.checks.filter((check) => check.status === status).length;
  const tally = `${count('pass')} passed, ${count('warn')} warned, ${count('fail')} failed, ${count('skipped')} skipped`;
  lines.push(
    '',
    `${style.bold('Verdict:')} ${style.status(VERDICT_COLOUR[report.verdict], report.verdict.toUpperCase())} (${tally}; ${report.duration_ms} ms): ${verdictSentence(report)}`,
    '',
  );
  return lines.join('\n');
}
