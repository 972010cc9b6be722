/**
 * The real-Postfix loopback run (issue 10, "kinder to mail servers"), shared by bench/postfix.ts and
 * test/e2e/postfix.test.ts: verifies the addresses of fixtures/postfix/addresses.csv against the Postfix that
 * scripts/postfix-loopback.sh runs on 127.0.0.1 (Postfix's default error limits), with DNS from a dns2 server on
 * loopback, and reports what both sides saw: the client's connections, `RCPT TO`s and `421` replies (a counting
 * wrapper around the real TCP transport), and Postfix's own log (sessions, errors per session, "too many errors").
 * @module
 */
import { readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { connect } from 'node:net';
import { cachedResolver } from '../../src/dns/cached.js';
import { nodeResolver } from '../../src/dns/node.js';
import type { VerifyOptions } from '../../src/options.js';
import type { Status, SubStatus } from '../../src/result.js';
import { tcpTransport } from '../../src/smtp/tcp.js';
import type { LineChannel, Transport } from '../../src/smtp/types.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier } from '../../src/verifier.js';
import { startDnsServer } from './dns-server.js';
import { waitFor } from './wait-for.js';

/** Where the loopback Postfix listens and logs (the same environment variables as scripts/postfix-loopback.sh). */
export interface PostfixEndpoint {
  readonly port: number;
  /** Its `maillog_file`. */
  readonly maillog: string;
}

/** The endpoint from `MAILVET_POSTFIX_PORT` (default 2525) and `MAILVET_POSTFIX_DIR` (default /var/lib/mailvet-postfix). */
export function postfixEndpoint(env: NodeJS.ProcessEnv = process.env): PostfixEndpoint {
  const port = Number(env.MAILVET_POSTFIX_PORT ?? '2525');
  if (!Number.isInteger(port) || port < 1 || port > 65_535)
    throw new RangeError('MAILVET_POSTFIX_PORT must be a port');
  const dir = env.MAILVET_POSTFIX_DIR ?? '/var/lib/mailvet-postfix';
  return { port, maillog: `${dir}/maillog` };
}

/**
 * Whether a Postfix greets on 127.0.0.1:`port` within `timeoutMs` (a `220 ... ESMTP Postfix` banner). Resolves once
 * Postfix has closed the probe's session.
 */
function greets(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let banner = '';
    let greeted = false;
    const done = (answer: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(answer);
    };
    const timer = setTimeout(() => done(greeted), timeoutMs);
    socket.on('error', () => done(greeted));
    socket.on('close', () => done(greeted));
    socket.on('data', (chunk) => {
      if (banner.includes('\n')) return; // the 221 to QUIT
      banner += chunk.toString('latin1');
      if (!banner.includes('\n')) return;
      greeted = /^220 .*\bPostfix\b/.test(banner);
      if (greeted) socket.write('QUIT\r\n');
      else done(false);
    });
  });
}

/** smtpd's `disconnect from` lines in the log at `path` (none when it does not exist yet). */
async function disconnects(path: string): Promise<number> {
  return (await logSince(path, 0).catch(() => '')).match(/smtpd\[\d+\]: disconnect from /g)?.length ?? 0;
}

/**
 * Whether the Postfix of `endpoint` greets on its port within `timeoutMs` (a `220 ... ESMTP Postfix` banner).
 * Resolves once Postfix has logged the end of the probe's session: Postfix writes its log through postlogd, so the
 * lines of a session can reach the file after the session closed, and a run that starts then would count the
 * probe's session as its own.
 */
export async function postfixGreets(endpoint: PostfixEndpoint, timeoutMs = 2_000): Promise<boolean> {
  const before = await disconnects(endpoint.maillog);
  if (!(await greets(endpoint.port, timeoutMs))) return false;
  await waitFor(async () => (await disconnects(endpoint.maillog)) > before, {
    what: "the greeting probe's session in Postfix's log",
    intervalMs: 50,
  });
  return true;
}

/** One address of the run and whether Postfix has that mailbox. */
export interface PostfixAddress {
  readonly email: string;
  readonly exists: boolean;
}

/** The addresses of fixtures/postfix/addresses.csv (see scripts/postfix-addresses.mjs), in order. */
export function postfixAddresses(): PostfixAddress[] {
  const text = readFileSync(new URL('../../fixtures/postfix/addresses.csv', import.meta.url), 'utf8');
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => {
      const [email = '', exists] = line.split(',');
      return { email, exists: exists === 'yes' };
    });
}

/** Each domain's MX `mx.<domain>`, whose address is 127.0.0.1. */
function zoneOf(addresses: readonly PostfixAddress[]): Zone {
  const zone: Record<string, Zone[string]> = {};
  for (const { email } of addresses) {
    const domain = email.slice(email.lastIndexOf('@') + 1);
    zone[domain] = { mx: [{ priority: 10, exchange: `mx.${domain}` }] };
    zone[`mx.${domain}`] = { a: ['127.0.0.1'] };
  }
  return zone;
}

/** What the client sent and read, counted at the transport. */
export interface WireCounts {
  connections: number;
  rcpts: number;
  /** `421` replies (the server closing the session). */
  replies421: number;
  /** Replies with "too many errors" wording (Postfix's `421 4.7.0 ... Error: too many errors`). */
  tooManyErrors: number;
}

/** `inner`, counting connections, `RCPT TO` lines written and `421` / "too many errors" lines read. */
function countingTransport(inner: Transport, counts: WireCounts): Transport {
  const written = (line: string) => {
    if (/^RCPT TO:/i.test(line)) counts.rcpts += 1;
  };
  return {
    async connect(target, options) {
      const channel = await inner.connect(target, options);
      counts.connections += 1;
      const counted: LineChannel = {
        async readLine(timeoutMs) {
          const line = await channel.readLine(timeoutMs);
          if (/^421[ -]/.test(line)) counts.replies421 += 1;
          if (/^[45]\d\d[ -].*too many errors/i.test(line)) counts.tooManyErrors += 1;
          return line;
        },
        writeLine(line) {
          written(line);
          return channel.writeLine(line);
        },
        close: () => channel.close(),
        get closed() {
          return channel.closed;
        },
      };
      if (channel.writeLines !== undefined) {
        const writeLines = channel.writeLines.bind(channel);
        counted.writeLines = (lines) => {
          for (const line of lines) written(line);
          return writeLines(lines);
        };
      }
      if (channel.pending !== undefined) counted.pending = channel.pending.bind(channel);
      if (channel.startTls !== undefined) counted.startTls = channel.startTls.bind(channel);
      return counted;
    },
  };
}

/** What Postfix logged about the sessions of a run. */
export interface PostfixLogSummary {
  /** Sessions that ended (`disconnect from` lines). */
  readonly sessions: number;
  /** `RCPT` commands over those sessions. */
  readonly rcpts: number;
  /** Failed commands of each session (Postfix's error count: `commands=ok/total`). */
  readonly errorsPerSession: readonly number[];
  /** Sessions dropped with "too many errors" (the hard limit). */
  readonly tooManyErrors: number;
}

/**
 * Reads smtpd's lines of a Postfix log: `disconnect from ... rcpt=ok/total ... commands=ok/total` and `too many
 * errors after ...`. Other lines, and lines that do not parse, are ignored.
 */
export function parsePostfixLog(text: string): PostfixLogSummary {
  const errorsPerSession: number[] = [];
  let rcpts = 0;
  let tooManyErrors = 0;
  for (const line of text.split('\n')) {
    if (!/\/smtpd\[\d+\]: /.test(line)) continue;
    if (/: too many errors after \S+ from /.test(line)) tooManyErrors += 1;
    const stats = /: disconnect from \S+(?: (.*))?$/.exec(line);
    if (stats === null) continue;
    const counts = new Map<string, { ok: number; total: number }>();
    for (const field of (stats[1] ?? '').split(' ')) {
      const match = /^(\w+)=(\d+)(?:\/(\d+))?$/.exec(field);
      if (match === null) continue;
      const ok = Number(match[2]);
      counts.set(match[1]!, { ok, total: match[3] === undefined ? ok : Number(match[3]) });
    }
    const commands = counts.get('commands') ?? { ok: 0, total: 0 };
    errorsPerSession.push(commands.total - commands.ok);
    rcpts += counts.get('rcpt')?.total ?? 0;
  }
  return { sessions: errorsPerSession.length, rcpts, errorsPerSession, tooManyErrors };
}

/** What one run measured. */
export interface PostfixRunReport {
  readonly addresses: number;
  readonly wallMs: number;
  readonly wire: WireCounts;
  readonly log: PostfixLogSummary;
  /** Results per `status`, and per `status/sub_status`. */
  readonly statuses: Partial<Record<Status, number>>;
  readonly subStatuses: Readonly<Record<string, number>>;
  /** Addresses whose status is not the truth (`valid` for a mailbox that exists, else `invalid`). */
  readonly wrong: readonly { email: string; status: Status; sub_status: SubStatus | null }[];
}

/** The log written since `offset`. */
async function logSince(path: string, offset: number): Promise<string> {
  const file = await open(path, 'r');
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(Math.max(0, size - offset));
    await file.read(buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    await file.close();
  }
}

/**
 * The log's size once every session it shows has ended (as many `disconnect from` lines as `connect from`): smtpd
 * writes a session's last line after the client has gone, so on a busy machine the line of an earlier session
 * (the greeting probe's, a previous run's) can come late; taken before it, the offset would count it in this run.
 */
async function settledLogSize(path: string): Promise<number> {
  const count = (text: string, pattern: RegExp) => text.match(pattern)?.length ?? 0;
  const settled = async () => {
    const text = await logSince(path, 0);
    const open = count(text, /smtpd\[\d+\]: connect from /g) - count(text, /smtpd\[\d+\]: disconnect from /g);
    return open <= 0 && { size: Buffer.byteLength(text) };
  };
  const { size } = await waitFor(settled, {
    what: "every earlier session's end in Postfix's log",
    intervalMs: 50,
  });
  return size;
}

/**
 * Verifies `addresses` against the loopback Postfix with mailvet's defaults plus `options` (and what it takes to
 * reach loopback: the DNS server, `smtpPort`, `allowAddresses` 127.0.0.0/8, `allowTlds` test), `inFlight`
 * verifications under way at once as a bulk job keeps them, then waits for Postfix to log every session's end.
 */
export async function runAgainstPostfix(
  endpoint: PostfixEndpoint,
  addresses: readonly PostfixAddress[],
  options: VerifyOptions = {},
  inFlight = 64,
): Promise<PostfixRunReport> {
  const dns = await startDnsServer(zoneOf(addresses));
  const wire: WireCounts = { connections: 0, rcpts: 0, replies421: 0, tooManyErrors: 0 };
  const offset = await settledLogSize(endpoint.maillog);
  const verifier = createVerifier({
    resolver: cachedResolver(nodeResolver({ servers: [dns.address] })),
    transport: countingTransport(tcpTransport(), wire),
    smtpPort: endpoint.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    ...options,
  });
  const statuses: Partial<Record<Status, number>> = {};
  const subStatuses: Record<string, number> = {};
  const wrong: { email: string; status: Status; sub_status: SubStatus | null }[] = [];
  const started = performance.now();
  let wallMs = 0;
  let next = 0;
  const worker = async () => {
    while (next < addresses.length) {
      const { email, exists } = addresses[next++]!;
      const result = await verifier.verify(email);
      statuses[result.status] = (statuses[result.status] ?? 0) + 1;
      const key = `${result.status}/${result.sub_status ?? '-'}`;
      subStatuses[key] = (subStatuses[key] ?? 0) + 1;
      if (result.status !== (exists ? 'valid' : 'invalid')) {
        wrong.push({ email, status: result.status, sub_status: result.sub_status });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: inFlight }, worker));
    wallMs = performance.now() - started;
  } finally {
    await verifier.dispose();
    await dns.close();
  }
  // smtpd logs a session's end once it has seen the QUIT or the close: wait for every connection's line.
  const readLog = async () => parsePostfixLog(await logSince(endpoint.maillog, offset));
  const log = await waitFor(
    async () => {
      const seen = await readLog();
      return seen.sessions >= wire.connections && seen;
    },
    { what: "Postfix's log line of every session", intervalMs: 100 },
  ).catch(readLog); // a session missing from the log after 10 s is the caller's to judge
  return { addresses: addresses.length, wallMs, wire, log, statuses, subStatuses, wrong };
}
