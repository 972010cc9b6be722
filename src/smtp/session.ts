/**
 * The SMTP dialogue as pure logic over a {@link LineChannel}: greeting, EHLO (HELO fallback), optional
 * STARTTLS, then envelopes (`MAIL FROM`, `RCPT TO`, `RSET`) and `QUIT`. No I/O of its own, no timers: time
 * limits are passed to the channel, measured with an injectable clock.
 * @module
 */

import { watchAbort } from '../abort-watch.js';
import { isSmtpError, SmtpError, type SmtpFailure } from '../errors.js';
import type { TlsPolicy } from '../options.js';
import { createReplyParser, printable, type ReplyLimits } from './reply.js';
import { commands, needsSmtpUtf8 } from './sanitize.js';
import type {
  CommandOptions,
  LineChannel,
  MailFromOptions,
  PipelinedRcpt,
  PipelinedReplies,
  PipelineOptions,
  ServerCapabilities,
  SmtpReply,
  SmtpSession,
  SmtpStage,
  TranscriptHook,
} from './types.js';

/** Options of {@link openSmtpSession}. */
export interface SessionOptions {
  /** Domain sent in EHLO/HELO (see `defaultHeloHost()`). */
  readonly heloHost: string;
  /** STARTTLS policy: `required` fails with `SmtpError` kind `tls` when it cannot be had. @default 'never' */
  readonly tls?: TlsPolicy;
  /** Server name for TLS SNI (the MX host name); omitted for IP addresses. */
  readonly servername?: string;
  /**
   * Absolute time (by `now`) by which the session must be open (greeting, EHLO, STARTTLS); it also bounds
   * later commands unless they pass their own `deadline`. @default no deadline beyond the per-reply timeouts
   */
  readonly deadline?: number;
  /** Longest wait for the greeting, in milliseconds. @default 30000 */
  readonly greetingTimeoutMs?: number;
  /** Longest wait for each reply (and for the TLS handshake), in milliseconds. @default 30000 */
  readonly commandTimeoutMs?: number;
  /** Longest wait for the reply to QUIT, in milliseconds. @default 1000 */
  readonly quitTimeoutMs?: number;
  /** Bounds of each reply. @default DEFAULT_REPLY_LIMITS */
  readonly limits?: ReplyLimits;
  /** Receives every line of the dialogue (for `trace`). */
  readonly onLine?: TranscriptHook;
  /** Aborts opening the session, and the session itself later on (it is then closed). */
  readonly signal?: AbortSignal;
  /** Clock in milliseconds. @default Date.now */
  readonly now?: () => number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_QUIT_TIMEOUT_MS = 1_000;

function isSuccess(reply: SmtpReply): boolean {
  return reply.code >= 200 && reply.code < 300;
}

function extensionsOf(reply: SmtpReply): Set<string> {
  const keywords = new Set<string>();
  for (const line of reply.lines.slice(1)) {
    const keyword = line.trim().split(/\s+/, 1)[0]!.toUpperCase();
    if (/^[A-Z0-9][A-Z0-9-]*$/.test(keyword)) keywords.add(keyword);
  }
  return keywords;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** One command of a pipelined group, with the promise its reply settles. */
interface GroupItem {
  readonly stage: 'mail' | 'rcpt';
  readonly line: string;
  readonly command: CommandOptions;
  readonly settle: Deferred<SmtpReply>;
}

function isIpAddress(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

/** Rejects with `SmtpError` kind `aborted` as soon as `signal` aborts; `dispose` stops watching. */
function abortRace(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let dispose = () => {};
  const promise = new Promise<never>((_, reject) => {
    const onAbort = () => reject(new SmtpError('aborted', 'the SMTP exchange was aborted'));
    if (signal.aborted) return onAbort();
    dispose = watchAbort(signal, onAbort);
  });
  promise.catch(() => {});
  return { promise, dispose: () => dispose() };
}

/** The next line of `channel`, or the rejection of the first of `aborts` to fire. */
function nextLine(
  channel: LineChannel,
  timeoutMs: number,
  aborts: readonly Promise<never>[],
): Promise<string> {
  const read = channel.readLine(timeoutMs);
  if (aborts.length === 0) return read;
  read.catch(() => {}); // when an abort wins the race, the read fails as the channel closes
  return Promise.race([...aborts, read]);
}

/**
 * Opens an SMTP session over `channel`: reads the greeting, sends EHLO (HELO if EHLO is refused), and STARTTLS
 * when the policy asks for it. Rejects with `SmtpError`:
 * `connection` (closed before the greeting), `no_greeting`, `rejected` (greeting not 220, a 421, EHLO and HELO
 * refused; the reply is in `smtpReply`), `tls`, `timeout`, `disconnect`, `protocol`, `aborted`. On rejection
 * the channel is closed.
 * @example
 * const channel = await tcpTransport().connect({ host: '127.0.0.1', port: 2525 }, { timeoutMs: 5000, maxLineLength: 2048 });
 * const session = await openSmtpSession(channel, { heloHost: 'probe.example.org' });
 * await session.mailFrom('verify@probe.example.org');
 * const reply = await session.rcptTo('alice@example.com'); // { code: 250, ... }
 * await session.quit();
 */
export async function openSmtpSession(channel: LineChannel, options: SessionOptions): Promise<SmtpSession> {
  const now = options.now ?? Date.now;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sessionHook = options.onLine;
  let usable = true;
  /** Whether `QUIT` went out at the end of a pipelined group: the session then takes no command but `quit()`. */
  let quitSent = false;
  let envelopeUtf8 = false;
  let lastCommand: string | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  /**
   * Watches the session's signal once for all its replies (not once per reply); not at all when the channel
   * watches that very signal, since its pending read then rejects with `aborted` by itself.
   */
  const sessionAbort =
    options.signal === undefined || options.signal === channel.signal ? undefined : abortRace(options.signal);
  /** What every read races against when its command has no signal of its own. */
  const sessionAborts: readonly Promise<never>[] = sessionAbort === undefined ? [] : [sessionAbort.promise];

  const close = () => {
    usable = false;
    sessionAbort?.dispose();
    channel.close();
  };

  const failure = (
    kind: SmtpFailure,
    message: string,
    stage: SmtpStage,
    extra: { smtpReply?: SmtpReply; cause?: unknown } = {},
  ) => {
    close();
    return new SmtpError(kind, message, {
      stage,
      ...(lastCommand === undefined ? {} : { command: lastCommand }),
      ...extra,
    });
  };

  const emit = (hook: TranscriptHook | undefined, direction: 'client' | 'server', line: string) => {
    sessionHook?.(direction, line);
    hook?.(direction, line);
  };

  /** Reads one reply within `limitAt`; any failure closes the session. */
  const readReply = async (
    stage: SmtpStage,
    limitAt: number,
    command: CommandOptions,
  ): Promise<SmtpReply> => {
    const parser = createReplyParser(options.limits, stage);
    const commandAbort = command.signal === undefined ? undefined : abortRace(command.signal);
    const aborts = commandAbort === undefined ? sessionAborts : [...sessionAborts, commandAbort.promise];
    let lines = 0;
    try {
      for (;;) {
        const remaining = limitAt - now();
        if (remaining <= 0) {
          throw new SmtpError('timeout', `no complete ${stage} reply in time`);
        }
        const line = await nextLine(channel, remaining, aborts);
        lines += 1;
        emit(command.onLine, 'server', printable(line.slice(0, 2048)));
        const reply = parser.push(line);
        if (reply !== null) return reply;
      }
    } catch (error) {
      const smtp = isSmtpError(error) ? error : undefined;
      let kind: SmtpFailure = smtp?.kind ?? 'disconnect';
      if (stage === 'greeting' && lines === 0 && kind === 'timeout') kind = 'no_greeting';
      if (stage === 'greeting' && lines === 0 && kind === 'disconnect') kind = 'connection';
      const message =
        kind === 'no_greeting'
          ? 'the server sent no greeting in time'
          : kind === 'connection'
            ? 'the server closed the connection before its greeting'
            : (smtp?.message ?? 'the connection failed');
      throw failure(kind, message, stage, { cause: error });
    } finally {
      commandAbort?.dispose();
    }
  };

  const limitOf = (command: CommandOptions, timeoutMs = commandTimeoutMs) =>
    Math.min(now() + timeoutMs, command.deadline ?? options.deadline ?? Number.POSITIVE_INFINITY);

  /**
   * Throws `protocol` (and closes the session) when the server has sent data no command asked for: a doubled
   * greeting, a second reply to one command, lines before EHLO. Read as replies, they would shift every later
   * reply of the session onto the next command (a 550 answering the next address).
   */
  const refuseUnasked = (stage: SmtpStage): void => {
    if (channel.pending?.() === true) {
      usable = false;
      throw failure('protocol', 'the server sent data that no command asked for', stage);
    }
  };

  /** Writes `line` and reads its reply; a 421 closes the session and throws `rejected`. */
  const exchange = async (
    stage: SmtpStage,
    line: string,
    command: CommandOptions = {},
  ): Promise<SmtpReply> => {
    if (!usable || channel.closed) {
      usable = false;
      throw new SmtpError('disconnect', 'the SMTP session is closed', { stage });
    }
    if (options.signal?.aborted) throw failure('aborted', 'the SMTP session was aborted', stage);
    if (command.signal?.aborted)
      throw new SmtpError('aborted', 'the command was aborted before it was sent', { stage });
    const limitAt = limitOf(command);
    refuseUnasked(stage);
    lastCommand = line;
    emit(command.onLine, 'client', line);
    try {
      await channel.writeLine(line);
    } catch (error) {
      throw failure(
        isSmtpError(error) ? error.kind : 'disconnect',
        'the connection failed while writing',
        stage,
        {
          cause: error,
        },
      );
    }
    const reply = await readReply(stage, limitAt, command);
    if (reply.code === 421) {
      throw failure('rejected', `the server is closing the session: ${reply.code} ${reply.text}`, stage, {
        smtpReply: reply,
      });
    }
    return reply;
  };

  /** Writes lines (in one send when the channel can); a failure closes the session. */
  const write = async (lines: readonly string[], stage: SmtpStage): Promise<void> => {
    refuseUnasked(stage);
    try {
      if (channel.writeLines !== undefined && lines.length > 1) await channel.writeLines(lines);
      else for (const line of lines) await channel.writeLine(line);
    } catch (error) {
      throw failure(
        isSmtpError(error) ? error.kind : 'disconnect',
        'the connection failed while writing',
        stage,
        { cause: error },
      );
    }
  };

  /**
   * Sends `items` as one RFC 2920 group when the server offers PIPELINING (else one at a time) and settles
   * each item with its reply, in order. From the first reply that does not come, every later item rejects
   * with the same error. With `quit` (and PIPELINING), `QUIT` ends the group: its reply is left for `quit()`.
   */
  const group = async (
    items: readonly GroupItem[],
    signal: AbortSignal | undefined,
    quit: boolean,
  ): Promise<void> => {
    const pipelining = capabilities.extensions.has('PIPELINING');
    let index = 0;
    try {
      const stage = items[0]!.stage;
      if (!usable || channel.closed) {
        usable = false;
        throw new SmtpError('disconnect', 'the SMTP session is closed', { stage });
      }
      if (options.signal?.aborted) throw failure('aborted', 'the SMTP session was aborted', stage);
      if (signal?.aborted)
        throw new SmtpError('aborted', 'the group was aborted before it was sent', { stage });
      if (pipelining) {
        for (const item of items) emit(item.command.onLine, 'client', item.line);
        lastCommand = items[0]!.line;
        const lines = items.map((item) => item.line);
        if (quit) {
          const line = commands.quit();
          emit(undefined, 'client', line);
          lines.push(line);
          // RFC 2920 §3.1: QUIT may only end a group. Nothing more is sent on this session, whatever the replies.
          usable = false;
          quitSent = true;
        }
        await write(lines, stage);
      }
      for (; index < items.length; index++) {
        const item = items[index]!;
        lastCommand = item.line;
        if (!pipelining) {
          emit(item.command.onLine, 'client', item.line);
          await write([item.line], item.stage);
        }
        const reply = await readReply(item.stage, limitOf(item.command), item.command);
        if (reply.code === 421) {
          throw failure(
            'rejected',
            `the server is closing the session: ${reply.code} ${reply.text}`,
            item.stage,
            {
              smtpReply: reply,
            },
          );
        }
        item.settle.resolve(reply);
      }
    } catch (error) {
      for (const item of items.slice(index)) item.settle.reject(error);
    }
  };

  /** Runs commands one after another, whatever the caller does. */
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const run = queue.then(task, task);
    queue = run.catch(() => {});
    return run;
  };

  const ehlo = async (): Promise<{ extensions: Set<string>; esmtp: boolean }> => {
    const reply = await exchange('ehlo', commands.ehlo(options.heloHost));
    if (isSuccess(reply)) return { extensions: extensionsOf(reply), esmtp: true };
    const helo = await exchange('ehlo', commands.helo(options.heloHost));
    if (isSuccess(helo)) return { extensions: new Set(), esmtp: false };
    throw failure('rejected', `EHLO and HELO refused: ${helo.code} ${helo.text}`, 'ehlo', {
      smtpReply: helo,
    });
  };

  const startTls = async (offered: boolean): Promise<boolean> => {
    const policy = options.tls ?? 'never';
    if (policy === 'never') return false;
    if (!offered || channel.startTls === undefined) {
      if (policy === 'opportunistic') return false;
      throw failure(
        'tls',
        offered
          ? 'STARTTLS is required but the transport cannot upgrade'
          : 'STARTTLS is required but not offered',
        'starttls',
      );
    }
    const reply = await exchange('starttls', commands.startTls());
    if (reply.code !== 220) {
      if (policy === 'opportunistic') return false;
      throw failure('tls', `STARTTLS refused: ${reply.code} ${reply.text}`, 'starttls', { smtpReply: reply });
    }
    const remaining = limitOf({}) - now();
    if (remaining <= 0) throw failure('timeout', 'no time left for the TLS handshake', 'starttls');
    try {
      await channel.startTls({
        ...(options.servername === undefined || isIpAddress(options.servername)
          ? {}
          : { servername: options.servername }),
        timeoutMs: remaining,
      });
    } catch (error) {
      throw failure(isSmtpError(error) ? error.kind : 'tls', 'the TLS handshake failed', 'starttls', {
        cause: error,
      });
    }
    return true;
  };

  const greetingLimit = limitOf({}, options.greetingTimeoutMs ?? DEFAULT_TIMEOUT_MS);
  const greeting = await readReply('greeting', greetingLimit, {});
  if (greeting.code !== 220) {
    throw failure(
      'rejected',
      `the server refused the session: ${greeting.code} ${greeting.text}`,
      'greeting',
      {
        smtpReply: greeting,
      },
    );
  }
  let hello: { extensions: Set<string>; esmtp: boolean };
  let tls = false;
  try {
    hello = await ehlo();
    tls = await startTls(hello.extensions.has('STARTTLS'));
    if (tls) {
      hello = await ehlo();
      if (!hello.esmtp) throw failure('protocol', 'EHLO refused after STARTTLS', 'ehlo');
    }
  } catch (error) {
    close();
    throw error;
  }
  const capabilities: ServerCapabilities = {
    extensions: hello.extensions,
    tls,
    esmtp: hello.esmtp,
    greeting,
  };

  return {
    capabilities,
    get usable() {
      return usable && !channel.closed;
    },
    mailFrom(sender: string, mailOptions: MailFromOptions = {}) {
      return serial(async () => {
        const smtpUtf8 = mailOptions.smtpUtf8 === true && capabilities.extensions.has('SMTPUTF8');
        if (needsSmtpUtf8(sender) && !smtpUtf8) {
          throw new SmtpError('smtputf8', 'the sender needs SMTPUTF8, which the server does not offer', {
            stage: 'mail',
          });
        }
        const reply = await exchange('mail', commands.mailFrom(sender, smtpUtf8), mailOptions);
        envelopeUtf8 = isSuccess(reply) && smtpUtf8;
        return reply;
      });
    },
    rcptTo(recipient: string, rcptOptions: CommandOptions = {}) {
      return serial(async () => {
        if (needsSmtpUtf8(recipient) && !envelopeUtf8) {
          throw new SmtpError(
            'smtputf8',
            capabilities.extensions.has('SMTPUTF8')
              ? 'the recipient needs SMTPUTF8: open the envelope with mailFrom(sender, { smtpUtf8: true })'
              : 'the recipient needs SMTPUTF8, which the server does not offer',
            { stage: 'rcpt' },
          );
        }
        return exchange('rcpt', commands.rcptTo(recipient), rcptOptions);
      });
    },
    rcptToMany(
      recipients: readonly PipelinedRcpt[],
      pipelineOptions: PipelineOptions = {},
    ): PipelinedReplies {
      const rcpts = recipients.map(() => deferred<SmtpReply>());
      const mail = pipelineOptions.mailFrom;
      const mailReply = mail === undefined ? null : deferred<SmtpReply>();
      const signal = pipelineOptions.signal;
      const withSignal = (command: CommandOptions): CommandOptions =>
        signal === undefined ? command : { ...command, signal };
      for (const settle of [mailReply, ...rcpts]) settle?.promise.catch(() => {});
      serial(async () => {
        const items: GroupItem[] = [];
        let utf8 = envelopeUtf8;
        if (mail !== undefined && mailReply !== null) {
          const smtpUtf8 = mail.smtpUtf8 === true && capabilities.extensions.has('SMTPUTF8');
          try {
            if (needsSmtpUtf8(mail.sender) && !smtpUtf8) {
              throw new SmtpError('smtputf8', 'the sender needs SMTPUTF8, which the server does not offer', {
                stage: 'mail',
              });
            }
            const line = commands.mailFrom(mail.sender, smtpUtf8);
            const settle = deferred<SmtpReply>();
            settle.promise.then(
              (reply) => {
                envelopeUtf8 = isSuccess(reply) && smtpUtf8;
                mailReply.resolve(reply);
              },
              (error: unknown) => mailReply.reject(error),
            );
            items.push({ stage: 'mail', line, command: withSignal(mail), settle });
            utf8 = smtpUtf8;
          } catch (error) {
            for (const settle of [mailReply, ...rcpts]) settle.reject(error);
            return;
          }
        }
        for (const [index, command] of recipients.entries()) {
          const { recipient } = command; // the rest of a PipelinedRcpt is its CommandOptions
          const settle = rcpts[index]!;
          try {
            if (needsSmtpUtf8(recipient) && !utf8) {
              throw new SmtpError('smtputf8', 'the recipient needs SMTPUTF8 in an envelope opened with it', {
                stage: 'rcpt',
              });
            }
            items.push({
              stage: 'rcpt',
              line: commands.rcptTo(recipient),
              command: withSignal(command),
              settle,
            });
          } catch (error) {
            settle.reject(error);
          }
        }
        if (items.length > 0) await group(items, signal, pipelineOptions.quit === true);
      });
      return { mail: mailReply?.promise ?? null, rcpts: rcpts.map((settle) => settle.promise) };
    },
    reset(resetOptions: CommandOptions = {}) {
      return serial(async () => {
        envelopeUtf8 = false;
        const reply = await exchange('rset', commands.reset(), resetOptions);
        if (!isSuccess(reply)) close();
        return reply;
      });
    },
    quit(quitOptions: CommandOptions = {}) {
      return serial(async () => {
        if (!(usable || quitSent) || channel.closed) {
          close();
          return;
        }
        try {
          const limitAt = Math.min(
            limitOf(quitOptions),
            now() + (options.quitTimeoutMs ?? DEFAULT_QUIT_TIMEOUT_MS),
          );
          if (!quitSent) {
            const line = commands.quit();
            emit(quitOptions.onLine, 'client', line);
            await channel.writeLine(line);
          }
          quitSent = false; // its reply is read once
          await readReply('quit', limitAt, quitOptions);
        } catch {
          // QUIT is a courtesy: whatever happens, the session is over.
        } finally {
          close();
        }
      });
    },
  };
}
