/**
 * The port 25 probe: connect to a mail server, read the banner, send EHLO, then QUIT. Nothing else is sent:
 * no MAIL, no RCPT. The outcome tells a refused connection from a timed-out one (the usual sign of a provider
 * blocking outbound port 25) from a banner received.
 * @module
 */
import { isSmtpError, type SmtpError } from '../errors.js';
import { openSmtpSession } from '../smtp/session.js';
import type { Transport } from '../smtp/types.js';

/** How the probe ended. */
export type Port25Outcome =
  | 'banner' // greeting and EHLO reply received
  | 'refused' // the connection was refused (RST)
  | 'connect_timeout' // no answer to the TCP connect within the connect timeout
  | 'unreachable' // no route, host unreachable, reset, or another connect error
  | 'banner_timeout' // connected, but no banner in time (a tarpit, or a middlebox swallowing the session)
  | 'rejected' // the banner or the EHLO reply refused us (554, 421, ...)
  | 'ehlo_failed' // a banner, then no usable EHLO reply
  | 'proxy' // the SOCKS proxy could not be used or could not reach the server
  | 'aborted';

/** What the probe saw. */
export interface Port25Probe {
  readonly outcome: Port25Outcome;
  /** The banner (greeting) line(s), joined, if one came. */
  readonly banner: string | null;
  /** The first line of the EHLO reply (without the code), if one came. */
  readonly ehlo: string | null;
  /** The whole dialogue, `C: ` / `S: ` lines. */
  readonly transcript: readonly string[];
  /** The error, when the probe did not end with `banner`. */
  readonly error: SmtpError | Error | null;
  /** Milliseconds spent. */
  readonly elapsedMs: number;
}

/** Options of {@link probePort25}. */
export interface Port25Options {
  readonly transport: Transport;
  readonly heloHost: string;
  readonly connectTimeoutMs: number;
  readonly replyTimeoutMs: number;
  readonly signal?: AbortSignal;
  readonly now: () => number;
}

const MAX_TRANSCRIPT = 60;

function outcomeOf(error: unknown, viaProxy: boolean): Port25Outcome {
  if (!isSmtpError(error)) return 'unreachable';
  if (error.kind === 'aborted') return 'aborted';
  if (error.kind === 'no_greeting') return 'banner_timeout';
  if (error.kind === 'rejected') return 'rejected';
  if (error.kind === 'connection') {
    if (viaProxy && error.message.includes('SOCKS proxy')) return 'proxy';
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    if (code === 'ECONNREFUSED') return 'refused';
    if (error.message.includes('no answer within')) return 'connect_timeout';
    return 'unreachable';
  }
  return error.stage === 'greeting' ? 'banner_timeout' : 'ehlo_failed';
}

/**
 * Probes `host:port` (an IP address that passed the guard): banner, EHLO, QUIT. Never throws.
 * @example
 * const probe = await probePort25({ host: '192.0.2.25', port: 25, hostname: 'mx.example.com' }, options);
 * probe.outcome; // 'banner'
 */
export async function probePort25(
  target: { readonly host: string; readonly port: number; readonly hostname?: string },
  options: Port25Options,
  viaProxy = false,
): Promise<Port25Probe> {
  const started = options.now();
  const transcript: string[] = [];
  let banner: string | null = null;
  let ehlo: string | null = null;
  let sawEhlo = false;
  const onLine = (direction: 'client' | 'server', line: string) => {
    if (transcript.length < MAX_TRANSCRIPT) transcript.push(`${direction === 'client' ? 'C' : 'S'}: ${line}`);
    if (direction === 'client') {
      sawEhlo ||= /^(EHLO|HELO) /i.test(line);
      return;
    }
    const text = line.slice(4);
    if (!sawEhlo) banner = banner === null ? text : `${banner} ${text}`.slice(0, 1024);
    else ehlo ??= text;
  };
  const finish = (outcome: Port25Outcome, error: SmtpError | Error | null): Port25Probe => ({
    outcome,
    banner,
    ehlo,
    transcript,
    error,
    elapsedMs: options.now() - started,
  });
  const signal = options.signal;
  let channel: Awaited<ReturnType<Transport['connect']>>;
  try {
    channel = await options.transport.connect(target, {
      timeoutMs: options.connectTimeoutMs,
      maxLineLength: 2048,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (error) {
    return finish(outcomeOf(error, viaProxy), error instanceof Error ? error : new Error(String(error)));
  }
  try {
    const session = await openSmtpSession(channel, {
      heloHost: options.heloHost,
      greetingTimeoutMs: options.replyTimeoutMs,
      commandTimeoutMs: options.replyTimeoutMs,
      onLine,
      now: options.now,
      ...(signal === undefined ? {} : { signal }),
    });
    await session.quit();
    return finish('banner', null);
  } catch (error) {
    channel.close();
    return finish(outcomeOf(error, viaProxy), error instanceof Error ? error : new Error(String(error)));
  }
}
