/**
 * The network workload of bench/network.ts, reusable by other benchmarks (bulk-network): a DNS server
 * (dns2) and several SMTP servers on 127.0.0.x that answer every command after a fixed delay, the address
 * list, and a runner that verifies the list with bounded in-flight work.
 *
 * Two kinds of SMTP server: `scripted` (default) answers the greeting and every command exactly `delayMs`
 * after it is due, which is the model the lower bound assumes, from a child process; `smtp-server` is the
 * real smtp-server package behind a delaying relay (test/support/smtp-server.ts), in this process, which also
 * holds its greeting back 100 ms to catch early talkers, as postscreen-style greet pauses do.
 * @module
 */
import { cachedResolver } from '../src/dns/cached.js';
import { nodeResolver } from '../src/dns/node.js';
import type { VerifyOptions } from '../src/options.js';
import type { Status } from '../src/result.js';
import type { Zone } from '../src/testing/zone.js';
import { createVerifier } from '../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../test/support/dns-server.js';
import { loopbackTransport } from '../test/support/loopback-transport.js';
import { type SmtpServerHarness, startSmtpServer } from '../test/support/smtp-server.js';
import { prng } from './mix.js';
import { mailboxExists, type ScriptedHostCounters, startScriptedHosts } from './scripted-smtp.js';

/** Shape of the workload. */
export interface NetworkWorkloadOptions {
  /** Addresses to verify. @default 10000 */
  readonly addresses?: number;
  /** Domains they are spread over (round robin). @default 100 */
  readonly domains?: number;
  /** Mail hosts (127.0.0.11, 127.0.0.12, ...); domain `i` is served by host `i % mxHosts`. @default 5 */
  readonly mxHosts?: number;
  /** Delay before every server reply (greeting included), in milliseconds. @default 10 */
  readonly delayMs?: number;
  /** Which SMTP server plays the mail hosts. @default 'scripted' */
  readonly server?: 'scripted' | 'smtp-server';
  /**
   * Order of the list: `interleaved` takes user 0 of every domain, then user 1 of every domain, and so on, so a
   * host's refused addresses (users 7, 8 and 9 of each ten) come in runs; `shuffled` is the same addresses in a
   * fixed pseudo-random order (seeded, the same every run), as a list gathered over time would be.
   * @default 'interleaved'
   */
  readonly order?: 'interleaved' | 'shuffled';
}

/** `items` in place, in a Fisher-Yates order drawn from `random`. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let index = items.length - 1; index > 0; index--) {
    const other = Math.floor(random() * (index + 1));
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}

/** A running fixture. */
export interface NetworkFixture {
  /** The addresses, in the order `shape.order` says (either way spread over domains and so over mail hosts). */
  readonly emails: readonly string[];
  /** Resolved shape. */
  readonly shape: Required<NetworkWorkloadOptions>;
  /** Verifier options that reach the fixture: a fresh cached resolver each call, loopback transport. */
  verifierOptions(): VerifyOptions;
  /** Where the servers listen, for verifiers in other processes: `127.0.0.1:PORT` of DNS, SMTP port per host. */
  endpoints(): { readonly dns: string; readonly ports: Readonly<Record<string, number>> };
  /** Connections accepted and `RCPT TO` commands received so far, per host. */
  smtpCounters(): Promise<ScriptedHostCounters[]>;
  /** DNS questions received so far. */
  dnsQueries(): number;
  /**
   * Addresses, catch-all probes (one per domain) and refused addresses (`550`, which count against
   * `maxRejectsPerSession`) each mail host gets, in host order; and each host's addresses in list order, as
   * `true` for a refused one.
   */
  perHost(): { addresses: number[]; probes: number[]; rejects: number[]; refusedInOrder: boolean[][] };
  /** The statuses the workload must end with (the harness's mailboxes decide them). */
  expectedStatuses(): Partial<Record<Status, number>>;
  close(): Promise<void>;
}

/** smtp-server mail hosts behind the test harness's delaying relay, in this process. */
async function smtpServerHosts(
  ips: readonly string[],
  delayMs: number,
  perDomain: number,
): Promise<{
  ports: Record<string, number>;
  counters(): Promise<ScriptedHostCounters[]>;
  close(): Promise<void>;
}> {
  const mailboxes = Object.fromEntries(
    Array.from(
      { length: perDomain },
      (_, index) => [`user${index}`, mailboxExists(index) ? 'ok' : 'missing'] as const,
    ),
  );
  const servers: SmtpServerHarness[] = await Promise.all(
    ips.map((host, index) => {
      const catchAll = index === ips.length - 1;
      return startSmtpServer({ host, mailboxes: catchAll ? {} : mailboxes, catchAll, delayMs });
    }),
  );
  return {
    ports: Object.fromEntries(servers.map((server) => [server.host, server.port])),
    counters: async () =>
      servers.map((server) => ({ connections: server.connections(), rcpts: server.rcpts().length })),
    close: async () => {
      await Promise.all(servers.map((server) => server.close()));
    },
  };
}

/**
 * Starts the DNS server and the mail hosts.
 * @example
 * const fixture = await startNetworkFixture({ addresses: 1000 });
 * const report = await runWorkload(fixture, fixture.verifierOptions());
 * await fixture.close();
 */
export async function startNetworkFixture(options: NetworkWorkloadOptions = {}): Promise<NetworkFixture> {
  const shape = {
    addresses: options.addresses ?? 10_000,
    domains: options.domains ?? 100,
    mxHosts: options.mxHosts ?? 5,
    delayMs: options.delayMs ?? 10,
    server: options.server ?? 'scripted',
    order: options.order ?? 'interleaved',
  };
  if (shape.mxHosts < 1 || shape.mxHosts > 200) throw new RangeError('mxHosts must be 1-200');
  const perDomain = Math.ceil(shape.addresses / shape.domains);
  const hostIps = Array.from({ length: shape.mxHosts }, (_, index) => `127.0.0.${11 + index}`);
  const domainName = (index: number) => `d${index}.bench.test`;

  const zone: Record<string, Zone[string]> = {};
  for (let index = 0; index < shape.domains; index++) {
    zone[domainName(index)] = { mx: [{ priority: 10, exchange: `mx${index % shape.mxHosts}.bench.test` }] };
  }
  for (const [index, ip] of hostIps.entries()) zone[`mx${index}.bench.test`] = { a: [ip] };

  const dns: DnsTestServer = await startDnsServer(zone);
  const smtp =
    shape.server === 'scripted'
      ? await startScriptedHosts(
          hostIps.map((host, index) => ({ host, catchAll: index === shape.mxHosts - 1 })),
          shape.delayMs,
        )
      : await smtpServerHosts(hostIps, shape.delayMs, perDomain);
  const ports = smtp.ports;

  /** Each address as its user number and domain number, in list order. */
  const entries = Array.from({ length: shape.addresses }, (_, index) => ({
    user: Math.floor(index / shape.domains),
    domain: index % shape.domains,
  }));
  if (shape.order === 'shuffled') shuffle(entries, prng(0x5eed));
  const emails = entries.map((entry) => `user${entry.user}@${domainName(entry.domain)}`);
  const hostOf = (entry: { readonly domain: number }) => entry.domain % shape.mxHosts;

  return {
    emails,
    shape,
    endpoints: () => ({ dns: dns.address, ports }),
    verifierOptions: () => ({
      resolver: cachedResolver(nodeResolver({ servers: [dns.address] })),
      transport: loopbackTransport(ports),
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      heloHost: 'bench.local',
      timeoutMs: 60_000,
    }),
    smtpCounters: () => smtp.counters(),
    dnsQueries: () => dns.queries(),
    perHost() {
      const addresses = hostIps.map(() => 0);
      const probes = hostIps.map(() => 0);
      const rejects = hostIps.map(() => 0);
      const refusedInOrder = hostIps.map((): boolean[] => []);
      for (const entry of entries) {
        const host = hostOf(entry);
        addresses[host] = addresses[host]! + 1;
        const refused = host !== shape.mxHosts - 1 && !mailboxExists(entry.user);
        if (refused) rejects[host] = rejects[host]! + 1;
        refusedInOrder[host]!.push(refused);
      }
      for (let index = 0; index < Math.min(shape.domains, shape.addresses); index++) {
        probes[index % shape.mxHosts] = probes[index % shape.mxHosts]! + 1;
      }
      return { addresses, probes, rejects, refusedInOrder };
    },
    expectedStatuses() {
      const counts = { valid: 0, invalid: 0, catch_all: 0 };
      for (const entry of entries) {
        const host = hostOf(entry);
        if (host === shape.mxHosts - 1) counts.catch_all += 1;
        else if (mailboxExists(entry.user)) counts.valid += 1;
        else counts.invalid += 1;
      }
      return counts;
    },
    async close() {
      await Promise.all([dns.close(), smtp.close()]);
    },
  };
}

/** What one run of the workload measured. */
export interface WorkloadReport {
  readonly wallMs: number;
  /** CPU time of this process (user + system) during the run, in milliseconds: the client's cost. */
  readonly cpuMs: number;
  /** The part of `cpuMs` spent in the kernel (system time): on loopback it includes the TCP work of the receiving side. */
  readonly systemMs: number;
  readonly connections: number;
  readonly dnsQueries: number;
  /** `RCPT TO` commands per host during the run. */
  readonly rcptsPerHost: number[];
  readonly statuses: Partial<Record<Status, number>>;
}

/**
 * Verifies every address of the fixture (or `emails`) with a fresh verifier made from `options`, keeping `inFlight`
 * verifications under way (as a bulk job would), and disposes of the verifier.
 */
export async function runWorkload(
  fixture: NetworkFixture,
  options: VerifyOptions,
  inFlight = 200,
  emails: readonly string[] = fixture.emails,
): Promise<WorkloadReport> {
  const before = await fixture.smtpCounters();
  const queries = fixture.dnsQueries();
  const verifier = createVerifier(options);
  const statuses: Partial<Record<Status, number>> = {};
  const started = performance.now();
  const cpu = process.cpuUsage();
  let next = 0;
  const worker = async () => {
    while (next < emails.length) {
      const result = await verifier.verify(emails[next++]!);
      statuses[result.status] = (statuses[result.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const wallMs = performance.now() - started;
  const spent = process.cpuUsage(cpu);
  await verifier.dispose();
  const after = await fixture.smtpCounters();
  return {
    wallMs,
    cpuMs: (spent.user + spent.system) / 1000,
    systemMs: spent.system / 1000,
    connections: after.reduce((sum, host, index) => sum + host.connections - before[index]!.connections, 0),
    dnsQueries: fixture.dnsQueries() - queries,
    rcptsPerHost: after.map((host, index) => host.rcpts - before[index]!.rcpts),
    statuses,
  };
}

/** The client's politeness and pipelining settings that the lower bounds depend on. */
export interface BoundModel {
  /** Sessions one host serves at once. */
  readonly perMxConcurrency: number;
  /** `pipelineDepth`: most `RCPT TO` the client puts in one pipelined group (1 without pipelining). */
  readonly rcptsPerRoundTrip: number;
  /** Most `RCPT TO` per session. */
  readonly maxRcptPerSession: number;
  /** Most refused `RCPT TO` per session. */
  readonly maxRejectsPerSession: number;
  /** Server delay before each reply, in milliseconds. */
  readonly delayMs: number;
}

/**
 * Most `RCPT TO` one round trip can carry: the pipeline depth, but never more than the reject cap, since the
 * pool never sends a group whose refusal, every recipient of it, would take the session past that cap (a
 * session starts with the whole cap to spend, so no group is larger).
 */
export function groupSize(model: BoundModel): number {
  return Math.min(model.rcptsPerRoundTrip, model.maxRejectsPerSession);
}

/**
 * The RCPT round-trip bound: every round trip waits `delayMs`, carries at most {@link groupSize} RCPTs, and a
 * host serves at most `perMxConcurrency` sessions at once; so a host that must answer `r` RCPTs needs at least
 * `ceil(r / (perMxConcurrency * groupSize)) * delayMs`, and the run lasts as long as its busiest host.
 * Session setup is not counted.
 */
export function lowerBoundMs(rcptsPerHost: readonly number[], model: BoundModel): number {
  const perWait = model.perMxConcurrency * groupSize(model);
  return Math.max(...rcptsPerHost.map((rcpts) => Math.ceil(rcpts / perWait) * model.delayMs));
}

/**
 * The fewest pooled sessions a host with `addresses` addresses, `rejects` of them refused, needs: each session
 * carries at most `maxRcptPerSession` RCPTs and at most `maxRejectsPerSession` refused ones.
 */
export function pooledSessions(addresses: number, rejects: number, model: BoundModel): number {
  return Math.max(
    Math.ceil(addresses / model.maxRcptPerSession),
    Math.ceil(rejects / model.maxRejectsPerSession),
  );
}

/**
 * The fewest round trips per address a pooled session can cost: a session of `n` addresses waits for its
 * greeting, its EHLO and `ceil(n / groupSize)` RCPT groups (MAIL FROM rides in the first), so
 * `min over n <= maxRcptPerSession of (2 + ceil(n / groupSize)) / n`.
 */
export function waitsPerAddress(model: BoundModel): number {
  let best = Number.POSITIVE_INFINITY;
  for (let n = 1; n <= model.maxRcptPerSession; n++) {
    best = Math.min(best, (2 + Math.ceil(n / groupSize(model))) / n);
  }
  return best;
}

/**
 * The session bound: the RCPT round trips plus the session setup that the caps force. A host with `a` addresses
 * (`r` of them refused) and `d` catch-all probes (each in a session of its own) waits at least
 * `max(a * waitsPerAddress, 2 * pooledSessions + ceil(a / groupSize))` round trips for its pooled sessions (each
 * session pays its greeting and EHLO, and its addresses go in groups of at most {@link groupSize}; the first
 * term counts a session's last, partly filled group, the second the sessions the reject cap forces), plus
 * greeting + EHLO + one round trip per probe; `perMxConcurrency` sessions wait at once. QUIT's round trip is not
 * counted: a client need not wait for the `221` before its next session.
 */
export function sessionBoundMs(
  addressesPerHost: readonly number[],
  probesPerHost: readonly number[],
  rejectsPerHost: readonly number[],
  model: BoundModel,
): number {
  return Math.max(
    ...addressesPerHost.map((addresses, host) => {
      const probes = probesPerHost[host] ?? 0;
      const sessions = pooledSessions(addresses, rejectsPerHost[host] ?? 0, model);
      const pooled = Math.max(
        Math.ceil(addresses * waitsPerAddress(model)),
        2 * sessions + Math.ceil(addresses / groupSize(model)),
      );
      const waits = pooled + 3 * probes;
      return Math.ceil(waits / model.perMxConcurrency) * model.delayMs;
    }),
  );
}

/**
 * The in-order estimate: what the session bound becomes for a client that takes each host's addresses in list
 * order (it cannot know beforehand which ones the server refuses) under the same caps. Each session waits for its
 * greeting and EHLO, then sends groups of at most {@link groupSize} RCPTs, none larger than its reject cap has left,
 * and ends at `maxRcptPerSession` RCPTs or `maxRejectsPerSession` refused ones; probes as in
 * {@link sessionBoundMs}. Where refused addresses come in runs, the reject cap ends sessions early and this is above
 * the session bound, which assumes the refusals spread evenly over the sessions. A model of the pool (its two
 * sessions per host take turns at one queue), not a bound.
 */
export function inOrderEstimateMs(
  refusedInOrder: readonly (readonly boolean[])[],
  probesPerHost: readonly number[],
  model: BoundModel,
): number {
  return Math.max(
    ...refusedInOrder.map((refused, host) => {
      let waits = 3 * (probesPerHost[host] ?? 0);
      let next = 0;
      while (next < refused.length) {
        waits += 2; // greeting, EHLO
        let rcpts = 0;
        let rejects = 0;
        while (
          next < refused.length &&
          rcpts < model.maxRcptPerSession &&
          rejects < model.maxRejectsPerSession
        ) {
          const room = Math.min(
            groupSize(model),
            model.maxRcptPerSession - rcpts,
            model.maxRejectsPerSession - rejects,
          );
          const group = refused.slice(next, next + room);
          next += group.length;
          rcpts += group.length;
          rejects += group.filter(Boolean).length;
          waits += 1;
        }
      }
      return Math.ceil(waits / model.perMxConcurrency) * model.delayMs;
    }),
  );
}
