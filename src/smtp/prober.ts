/**
 * The prober a verifier owns: the per-MX session pool, the catch-all cache, and the session factory that
 * opens SMTP sessions over the transport. Checks reach it through `runtime.prober`.
 * @module
 */

import { watchOptionalAbort } from '../abort-watch.js';
import { profileOfHost } from '../classify/profiles.js';
import { classifyReply } from '../classify/reply.js';
import type {
  CatchAllRequest,
  Lease,
  PoolTarget,
  Prober,
  ProberSettings,
  ProberStats,
} from '../contracts/prober.js';
import { SmtpError } from '../errors.js';
import type { CatchAllProbe } from '../result.js';
import { catchAllOutcomeOf, createCatchAllCache, randomLocalPart } from './catch-all.js';
import { createSessionPool, type SessionFactory } from './pool.js';
import { DEFAULT_REPLY_LIMITS } from './reply.js';
import { openSmtpSession } from './session.js';
import type { Transport } from './types.js';

export type { CatchAllRequest, Prober, ProberStats };

/** Options of {@link createProber}: the core's {@link ProberSettings}, and how sessions are opened. */
export interface ProberOptions extends ProberSettings {
  /** Opens sessions. @default over `transport` with `openSmtpSession` */
  readonly open?: SessionFactory;
}

/**
 * Opens sessions over a transport: TCP connect (bounded by `connectTimeoutMs` and the deadline), then
 * greeting (bounded the same way), EHLO and STARTTLS as the settings ask.
 */
export function transportSessionFactory(transport: Transport, now: () => number = Date.now): SessionFactory {
  return async (target, context) => {
    const { settings } = context;
    const timeoutMs = Math.max(1, Math.min(settings.connectTimeoutMs, context.deadline - now()));
    const channel = await transport.connect(
      { host: target.host, port: target.port, hostname: target.hostname },
      { timeoutMs, signal: context.signal, maxLineLength: DEFAULT_REPLY_LIMITS.maxLineLength },
    );
    return openSmtpSession(channel, {
      heloHost: settings.heloHost,
      tls: settings.tls,
      servername: target.hostname,
      deadline: context.deadline,
      greetingTimeoutMs: settings.connectTimeoutMs,
      ...(settings.replyTimeoutMs === undefined ? {} : { commandTimeoutMs: settings.replyTimeoutMs }),
      onLine: context.trace,
      signal: context.signal,
      now,
    });
  };
}

/**
 * Creates a prober.
 * @example
 * const prober = createProber({ transport: tcpTransport(), heloHost: 'probe.example.org' });
 * await prober.close();
 */
export function createProber(options: ProberOptions): Prober {
  const now = options.now ?? Date.now;
  const randomBytes =
    options.randomBytes ?? ((size: number) => globalThis.crypto.getRandomValues(new Uint8Array(size)));
  const pool = createSessionPool({
    open: options.open ?? transportSessionFactory(options.transport, now),
    now,
    ...(options.perMxConcurrency === undefined ? {} : { perMxConcurrency: options.perMxConcurrency }),
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.maxRcptPerSession === undefined ? {} : { maxRcptPerSession: options.maxRcptPerSession }),
    ...(options.maxRejectsPerSession === undefined
      ? {}
      : { maxRejectsPerSession: options.maxRejectsPerSession }),
    ...(options.idleSessionMs === undefined ? {} : { idleSessionMs: options.idleSessionMs }),
    ...(options.mxBackoffMs === undefined ? {} : { mxBackoffMs: options.mxBackoffMs }),
  });
  const cache = createCatchAllCache({
    now,
    ...(options.catchAllTtlMs === undefined ? {} : { ttlMs: options.catchAllTtlMs }),
  });

  async function probeOnce(
    domain: string,
    target: PoolTarget,
    request: CatchAllRequest,
    lease: Lease,
  ): Promise<CatchAllProbe> {
    const recipient = `${randomLocalPart(randomBytes)}@${domain}`;
    // The shared probe keeps the first asker's budget, transcript and span, but not its signal: one asker giving
    // up must not spoil the answer for the others.
    const outcome = await pool.rcpt(
      target,
      { sender: request.sender, recipient, smtpUtf8: false, settings: request.settings, dedicated: true },
      { deadline: lease.deadline, trace: lease.trace, span: lease.span },
    );
    if (outcome.kind !== 'reply' || outcome.stage !== 'rcpt') return 'inconclusive';
    // Read as the host's provider means it: Microsoft 365's 5.4.1 edge block refuses the random address.
    const profile = profileOfHost(target.hostname)?.id ?? null;
    return catchAllOutcomeOf(classifyReply(outcome.reply, 'rcpt', profile));
  }

  /** Settles with `answer`, or rejects when the lease's budget is spent or its signal fires first. */
  function within(answer: Promise<CatchAllProbe>, lease: Lease): Promise<CatchAllProbe> {
    return new Promise<CatchAllProbe>((resolve, reject) => {
      let unwatch = (): void => {};
      const stop = () => {
        clearTimeout(timer);
        unwatch();
      };
      const onExpire = () => {
        stop();
        reject(
          lease.signal?.aborted === true
            ? new SmtpError('aborted', 'the verification was aborted')
            : new SmtpError('timeout', 'the verification time budget is spent'),
        );
      };
      const timer = setTimeout(onExpire, Math.max(0, lease.deadline - now()));
      if (lease.signal?.aborted === true) return onExpire();
      unwatch = watchOptionalAbort(lease.signal, onExpire);
      answer.then((value) => {
        stop();
        resolve(value);
      });
    });
  }

  return {
    heloHost: options.heloHost,
    rcpt: (target, request, lease) => pool.rcpt(target, request, lease),
    catchAll(domain, target, request, lease) {
      // A known answer needs no budget watch (a timer and a promise per address on a bulk list).
      const known = cache.peek(domain);
      if (known !== undefined && lease.signal?.aborted !== true) return Promise.resolve(known);
      return within(
        cache.resolve(domain, () => probeOnce(domain, target, request, lease)),
        lease,
      );
    },
    stats: () => ({ ...pool.stats(), catchAllProbes: cache.probes() }),
    async close() {
      await pool.close();
      cache.clear();
    },
  };
}
