/**
 * In-memory SMTP peers for unit tests: a {@link LineChannel} and a {@link Transport} that answer from a script,
 * with no sockets and no timers. A silent peer makes `readLine` time out at once, so tests never sleep.
 * @module
 */
import { SmtpError } from '../errors.js';
import type { ConnectTarget, LineChannel, Transport } from '../smtp/types.js';

/** What a scripted peer says. */
export interface SmtpScript {
  /** The greeting lines; `null` sends none (the first read times out). @default '220 mx.test ESMTP' */
  readonly greeting?: string | readonly string[] | null;
  /**
   * The reply to one command line: lines to send, `undefined` to stay silent (the read times out), or `null` to
   * close the connection. @default a happy answer to each verb
   */
  respond?(command: string): string | readonly string[] | null | undefined;
  /** Whether `startTls()` is available; it then always succeeds. @default false */
  readonly tls?: boolean;
}

/** A scripted channel, with what was written to it. */
export interface ScriptedChannel extends LineChannel {
  /** Every line written, in order. */
  readonly written: readonly string[];
  /** True once `startTls()` was called. */
  readonly upgraded: boolean;
}

/** The default answers of {@link scriptedChannel}. */
export function happyReply(command: string): string | readonly string[] {
  const verb = command.split(/[ :]/, 1)[0]!.toUpperCase();
  switch (verb) {
    case 'EHLO':
      return ['250-mx.test', '250-PIPELINING', '250 SMTPUTF8'];
    case 'STARTTLS':
      return '220 2.0.0 ready';
    case 'QUIT':
      return '221 2.0.0 bye';
    case 'HELO':
    case 'MAIL':
    case 'RCPT':
    case 'RSET':
    case 'NOOP':
      return '250 2.0.0 ok';
    default:
      return '502 5.5.1 unknown command';
  }
}

/**
 * A {@link LineChannel} that answers each written line from `script`.
 * @example
 * const channel = scriptedChannel({ respond: (line) => (line.startsWith('RCPT') ? '550 5.1.1 no such user' : happyReply(line)) });
 */
export function scriptedChannel(script: SmtpScript = {}): ScriptedChannel {
  const incoming: string[] = [];
  const written: string[] = [];
  let closed = false;
  let ending = false;
  let upgraded = false;
  const queue = (lines: string | readonly string[]) => {
    incoming.push(...(typeof lines === 'string' ? [lines] : lines));
  };
  const greeting = script.greeting === undefined ? '220 mx.test ESMTP' : script.greeting;
  if (greeting !== null) queue(greeting);

  const channel: ScriptedChannel = {
    get written() {
      return written;
    },
    get upgraded() {
      return upgraded;
    },
    get closed() {
      return closed;
    },
    async readLine(timeoutMs) {
      const line = incoming.shift();
      if (line !== undefined) return line;
      if (closed || ending) {
        closed = true;
        throw new SmtpError('disconnect', 'the scripted peer closed the connection');
      }
      throw new SmtpError('timeout', `no complete line within ${timeoutMs} ms`);
    },
    async writeLine(line) {
      if (closed || ending) throw new SmtpError('disconnect', 'the scripted peer closed the connection');
      written.push(line);
      const reply = (script.respond ?? happyReply)(line);
      if (reply === null) ending = true;
      else if (reply !== undefined) queue(reply);
    },
    close() {
      closed = true;
    },
  };
  if (script.tls) {
    channel.startTls = async () => {
      if (closed) throw new SmtpError('disconnect', 'the scripted peer closed the connection');
      upgraded = true;
    };
  }
  return channel;
}

/** A transport whose connections are scripted channels, with a record of what was opened. */
export interface ScriptedTransport extends Transport {
  /** Every target connected to, in order. */
  readonly targets: readonly ConnectTarget[];
  /** Every channel handed out, in order. */
  readonly channels: readonly ScriptedChannel[];
}

/**
 * A {@link Transport} that hands out {@link scriptedChannel}s; `script` is called for each connection and may
 * throw (for example an `SmtpError` of kind `connection`) to refuse it.
 * @example
 * const transport = scriptedTransport(() => ({ respond: happyReply }));
 */
export function scriptedTransport(script: (target: ConnectTarget) => SmtpScript): ScriptedTransport {
  const targets: ConnectTarget[] = [];
  const channels: ScriptedChannel[] = [];
  return {
    targets,
    channels,
    async connect(target, options) {
      targets.push(target);
      if (options.signal?.aborted) throw new SmtpError('aborted', 'connecting was aborted');
      const channel = scriptedChannel(script(target));
      channels.push(channel);
      return channel;
    },
  };
}
