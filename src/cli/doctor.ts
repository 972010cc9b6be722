/**
 * `mailvet doctor`: can this host verify mailboxes, and will mail servers trust it? Runs `diagnose()` and prints
 * a checklist (or `--json`).
 * @module
 */
import { nodeResolver } from '../dns/node.js';
import { diagnose } from '../doctor/diagnose.js';
import type { DiagnoseOptions } from '../doctor/options.js';
import type { DiagnosticsReport } from '../doctor/types.js';
import { type FlagSpec, flagHelp, parseArgs } from './args.js';
import { readSettings, VERIFY_FLAGS } from './config.js';
import { renderDiagnostics } from './doctor-render.js';
import { type CliIo, EXIT, quote, usageError, write } from './io.js';
import { optionsUsageError } from './options-error.js';
import { colourWanted, createStyle } from './style.js';

/** The shared verification flags that mean something to `doctor`. */
const SHARED = new Set(['dns', 'smtp-port', 'helo', 'from', 'proxy', 'allow-address', 'allow-tld']);

const FLAGS: readonly FlagSpec[] = [
  { name: 'json', type: 'boolean', description: 'print the report as JSON' },
  {
    name: 'probe-domain',
    type: 'string',
    value: '<domain>',
    description: 'domain whose MX is contacted, EHLO and QUIT only (default gmail.com)',
  },
  {
    name: 'ip',
    type: 'string',
    value: '<address>',
    description: 'the public egress address, when the MX does not echo it',
  },
  {
    name: 'blocklist',
    type: 'string',
    value: '<zone>',
    multiple: true,
    description: 'DNS blocklist zone to query instead of the defaults',
  },
  { name: 'no-blocklists', type: 'boolean', description: 'query no blocklist' },
  {
    name: 'timeout',
    type: 'string',
    value: '<s>',
    description: 'budget of the whole diagnosis, in seconds (default 30)',
  },
  ...VERIFY_FLAGS.filter((flag) => SHARED.has(flag.name)),
  { name: 'help', short: 'h', type: 'boolean', description: 'show this help' },
];

/** Help text of `mailvet doctor`. */
export const DOCTOR_HELP = `Usage: mailvet doctor [flags]

Checks whether this host can verify mailboxes and whether mail servers will trust it: DNS, outbound port 25
(banner, EHLO, QUIT: no MAIL, no RCPT), the egress address, its reverse DNS, the HELO name, SPF of the MAIL FROM
domain, DNS blocklists, and the SOCKS proxy when one is set. One line per check, then a verdict.

Flags:
${flagHelp(FLAGS)}

The shared flags also read MAILVET_<NAME> (MAILVET_HELO, MAILVET_FROM, MAILVET_PROXY, MAILVET_DNS, ...); flags win.
Verdict: PASS, WARN (ready, but some mail servers may distrust this host), INCOMPLETE (a check that decides
readiness could not run: the line names the flag that lets it run) or FAIL.
Exit codes: 0 PASS or WARN, 1 FAIL or INCOMPLETE, 2 usage error, 130 interrupted.
Example: mailvet doctor --helo mx-check.example.net --from verify@example.net
See docs/doctor.md.
`;

/** Builds the options of `diagnose()` from the flags and environment. */
function diagnoseOptionsOf(argv: readonly string[], io: CliIo) {
  const args = parseArgs(argv, FLAGS, 'mailvet doctor');
  if (args.flag('help')) return { help: true as const, args };
  if (args.positionals.length > 0) {
    throw usageError(
      `doctor takes no arguments, got ${quote(args.positionals[0] ?? '')}; see mailvet doctor --help`,
    );
  }
  if (args.flag('no-blocklists') && args.list('blocklist').length > 0) {
    throw usageError('--blocklist and --no-blocklists cannot be combined');
  }
  const settings = readSettings(args, io.env);
  const options: { -readonly [K in keyof DiagnoseOptions]: DiagnoseOptions[K] } = {
    allowAddresses: settings.allowAddresses,
    allowTlds: settings.allowTlds,
  };
  if (settings.timeoutMs !== undefined) options.timeoutMs = settings.timeoutMs;
  if (settings.smtpPort !== undefined) options.smtpPort = settings.smtpPort;
  if (settings.heloHost !== undefined) options.heloHost = settings.heloHost;
  if (settings.mailFrom !== undefined) options.mailFrom = settings.mailFrom;
  if (settings.proxy !== undefined) options.proxy = settings.proxy;
  const probeDomain = args.string('probe-domain');
  if (probeDomain !== undefined) options.probeDomain = probeDomain.trim();
  const ip = args.string('ip');
  if (ip !== undefined) options.ip = ip.trim();
  if (args.flag('no-blocklists')) options.blocklists = [];
  else if (args.list('blocklist').length > 0)
    options.blocklists = args.list('blocklist').map((zone) => zone.trim());
  if (io.signal !== undefined) options.signal = io.signal;
  return { help: false as const, args, options, dnsServers: settings.dnsServers };
}

/** Runs `mailvet doctor`; returns the exit code. */
export async function runDoctor(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = diagnoseOptionsOf(argv, io);
  if (parsed.help) {
    await write(io.stdout, DOCTOR_HELP);
    return EXIT.ok;
  }
  const resolver = parsed.dnsServers.length > 0 ? nodeResolver({ servers: parsed.dnsServers }) : undefined;
  let report: DiagnosticsReport;
  try {
    report = await (io.diagnose ?? diagnose)({
      ...parsed.options,
      ...(resolver === undefined ? {} : { resolver }),
    });
  } catch (error) {
    throw optionsUsageError(error) ?? error;
  } finally {
    resolver?.close();
  }
  if (parsed.args.flag('json')) {
    await write(io.stdout, `${JSON.stringify(report, null, 2)}\n`);
  } else {
    const style = createStyle(colourWanted(io.stdoutIsTTY ?? false, io.env));
    await write(io.stdout, renderDiagnostics(report, style));
  }
  if (io.signal?.aborted) return EXIT.interrupted;
  return report.verdict === 'fail' || report.verdict === 'incomplete' ? EXIT.notValid : EXIT.ok;
}
