/**
 * Kinder to mail servers, against a real Postfix (issue 10): verifies the 2,000 addresses of
 * fixtures/postfix/addresses.csv (four domains whose MX is 127.0.0.1, about half the mailboxes unknown, in runs of
 * 1 to 40) against the Postfix of scripts/postfix-loopback.sh, which keeps Postfix's default error limits
 * (smtpd_soft_error_limit 10: every reply slowed by smtpd_error_sleep_time 1 s after that; smtpd_hard_error_limit
 * 20: `421 4.7.0 Error: too many errors` and the session dropped). Two sides, in one run:
 *   defaults - mailvet's defaults (maxRejectsPerSession 8, mxBackoffMs 30 s);
 *   before   - the pool before issue 10: no cap on refused recipients but maxRcptPerSession (20), no backoff
 *              (maxRejectsPerSession 20, mxBackoffMs 0);
 *   before-patient (only with --sides) - the same with budgets long enough to sit out Postfix's slowed replies
 *              (timeoutMs 60 s, replyTimeoutMs 30 s), so that sessions reach the hard limit instead of timing out.
 * For each: addresses/s, sessions, RCPTs per session, `421` / "too many errors" replies the client read, what
 * Postfix logged (sessions, errors per session, "too many errors" disconnects), and the statuses against the truth
 * (a mailbox that exists is `valid`, another `invalid`). Exits 1 when the defaults side has a "too many errors"
 * disconnect or a wrong status.
 *
 * Run (as root): scripts/postfix-loopback.sh start && npm run bench -- postfix; scripts/postfix-loopback.sh stop
 *   npx tsx bench/postfix.ts [--in-flight 64] [--sides defaults,before[,before-patient]]
 * Environment: MAILVET_POSTFIX_PORT (2525), MAILVET_POSTFIX_DIR (/var/lib/mailvet-postfix), as for the script.
 */
import { parseArgs } from 'node:util';
import type { VerifyOptions } from '../src/options.js';
import {
  type PostfixRunReport,
  postfixAddresses,
  postfixEndpoint,
  postfixGreets,
  runAgainstPostfix,
} from '../test/support/postfix.js';

const { values } = parseArgs({
  options: {
    'in-flight': { type: 'string', default: '64' },
    sides: { type: 'string', default: 'defaults,before' },
  },
});
const inFlight = Number(values['in-flight']);
if (!Number.isInteger(inFlight) || inFlight < 1) throw new Error('--in-flight must be a positive integer');

const SIDES: Record<string, VerifyOptions> = {
  defaults: {},
  before: { maxRejectsPerSession: 20, mxBackoffMs: 0 },
  'before-patient': { maxRejectsPerSession: 20, mxBackoffMs: 0, timeoutMs: 60_000, replyTimeoutMs: 30_000 },
};
const sides = values.sides.split(',');
for (const side of sides) {
  if (!(side in SIDES))
    throw new Error(`--sides: unknown side "${side}"; known: ${Object.keys(SIDES).join(', ')}`);
}

const endpoint = postfixEndpoint();
if (!(await postfixGreets(endpoint))) {
  console.error(
    `no Postfix greets on 127.0.0.1:${endpoint.port}: run scripts/postfix-loopback.sh start (as root) first`,
  );
  process.exit(1);
}
const addresses = postfixAddresses();
const unknown = addresses.filter((address) => !address.exists).length;
console.log(
  `${addresses.length} addresses (${unknown} unknown mailboxes), ${inFlight} in flight, Postfix on 127.0.0.1:${endpoint.port}, log ${endpoint.maillog}`,
);

const reports: [string, PostfixRunReport][] = [];
for (const name of sides) {
  reports.push([name, await runAgainstPostfix(endpoint, addresses, SIDES[name], inFlight)]);
}

const max = (list: readonly number[]) => list.reduce((a, b) => Math.max(a, b), 0);
const rows: [string, (report: PostfixRunReport) => string][] = [
  ['options', (r) => JSON.stringify(SIDES[reports.find(([, x]) => x === r)![0]!])],
  ['wall time (s)', (r) => (r.wallMs / 1000).toFixed(1)],
  ['addresses/s', (r) => (r.addresses / (r.wallMs / 1000)).toFixed(0)],
  ['sessions opened (client)', (r) => String(r.wire.connections)],
  ['RCPT TO sent (client)', (r) => String(r.wire.rcpts)],
  ['RCPTs per session', (r) => (r.wire.rcpts / Math.max(1, r.wire.connections)).toFixed(1)],
  ['421 replies read (client)', (r) => String(r.wire.replies421)],
  ['"too many errors" replies read (client)', (r) => String(r.wire.tooManyErrors)],
  ['sessions (Postfix log)', (r) => String(r.log.sessions)],
  ['RCPT (Postfix log)', (r) => String(r.log.rcpts)],
  ['most errors in one session (Postfix log)', (r) => String(max(r.log.errorsPerSession))],
  [
    'sessions past the soft limit, slowed 1 s/reply',
    (r) => String(r.log.errorsPerSession.filter((e) => e > 10).length),
  ],
  ['"too many errors" disconnects (Postfix log)', (r) => String(r.log.tooManyErrors)],
  ['statuses', (r) => JSON.stringify(r.statuses)],
  ['status/sub_status', (r) => JSON.stringify(r.subStatuses)],
  ['statuses not matching the truth', (r) => String(r.wrong.length)],
];
const width = Math.max(...rows.map(([label]) => label.length));
console.log(`\n${''.padEnd(width)}  ${reports.map(([name]) => name).join('  |  ')}`);
for (const [label, cell] of rows) {
  console.log(`${label.padEnd(width)}  ${reports.map(([, report]) => cell(report)).join('  |  ')}`);
}
for (const [name, report] of reports) {
  for (const miss of report.wrong.slice(0, 5)) {
    console.log(`${name}: ${miss.email} -> ${miss.status}/${miss.sub_status ?? '-'}`);
  }
}

const defaults = reports.find(([name]) => name === 'defaults')?.[1];
if (defaults !== undefined) {
  const clean =
    defaults.log.tooManyErrors === 0 && defaults.wire.tooManyErrors === 0 && defaults.wrong.length === 0;
  console.log(
    `\ngoal (defaults): zero "too many errors" disconnects and every status right: ${clean ? 'met' : 'NOT met'}`,
  );
  if (!clean) process.exit(1);
}
process.exit(0);
