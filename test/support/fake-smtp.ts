/**
 * An in-memory mail host for pool and check unit tests: a `SessionFactory` whose sessions answer from a
 * script, record every command, and (in manual mode) wait for the test to let each step through.
 * @module
 */
import { SmtpError } from '../../src/errors.js';
import type { SessionFactory } from '../../src/smtp/pool.js';
import type { PipelinedReplies, SmtpReply, SmtpSession, TranscriptHook } from '../../src/smtp/types.js';

/** Builds a parsed reply; a leading `x.y.z` in `text` becomes the enhanced code. */
export function reply(code: number, text = 'ok'): SmtpReply {
  const enhanced = /^([245]\.\d{1,3}\.\d{1,3})\b/.exec(text)?.[1] ?? null;
  return { code, enhanced, lines: [text], text };
}

/** Options of {@link fakeMailHost}. */
export interface FakeMailHostOptions {
  /** Answer to `RCPT TO`. @default 250 for everyone */
  readonly rcpt?: (recipient: string) => SmtpReply;
  /** Answer to `MAIL FROM`. @default 250 */
  readonly mail?: (sender: string) => SmtpReply;
  /** EHLO keywords. @default ['PIPELINING', 'SMTPUTF8'] */
  readonly extensions?: readonly string[];
  /** After this many `RCPT TO` in one session, the next command gets a 421 (thrown, as the real session does). */
  readonly closeAfterRcpts?: number;
  /** After this many `RCPT TO` in one session, the next command finds the connection dropped. */
  readonly dropAfterRcpts?: number;
  /**
   * Sessions implement `rcptToMany` (answering a group's commands in order; from the first that fails, the
   * rest fail with the same error), so the pool sends pipelined groups when PIPELINING is advertised.
   * @default false
   */
  readonly pipelining?: boolean;
  /** Every open and every command waits until the test calls `step()`. @default false */
  readonly manual?: boolean;
  /** Opening fails with this error. */
  readonly openError?: () => Error;
}

/** One session of the fake host. */
export interface FakeSession extends SmtpSession {
  /** Commands received, in order (`MAIL FROM:<a>`, `RCPT TO:<b>`, `RSET`, `QUIT`). */
  readonly commands: string[];
  /** Size of each `rcptToMany` group (its `RCPT TO` count), in order. */
  readonly groups: number[];
  /** The next command fails as if the server had silently dropped the connection (a stale session). */
  breakSilently(): void;
}

/** The fake host. */
export interface FakeMailHost {
  readonly open: SessionFactory;
  /** Sessions opened so far (failed opens excluded). */
  readonly sessions: FakeSession[];
  /** Open attempts so far. */
  opens(): number;
  /** Sessions open now (opened, neither quit nor aborted). */
  active(): number;
  /** Most sessions open at the same time. */
  peak(): number;
  /** Steps waiting in manual mode. */
  waiting(): number;
  /** Lets every waiting step through; returns how many there were. */
  step(): number;
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Lets pending promise chains settle (several turns of the event loop). */
export async function settle(turns = 5): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await flush();
}

/** Creates a fake mail host. */
export function fakeMailHost(options: FakeMailHostOptions = {}): FakeMailHost {
  const sessions: FakeSession[] = [];
  const gates: (() => void)[] = [];
  let opens = 0;
  let active = 0;
  let peak = 0;
  const extensions = new Set(options.extensions ?? ['PIPELINING', 'SMTPUTF8']);

  const gate = (signal?: AbortSignal): Promise<void> => {
    if (!options.manual) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(new SmtpError('aborted', 'aborted'));
      signal?.addEventListener('abort', onAbort, { once: true });
      gates.push(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  };

  const open: SessionFactory = async (_target, context) => {
    opens += 1;
    active += 1;
    peak = Math.max(peak, active);
    let usable = true;
    let broken = false;
    let rcpts = 0;
    const commands: string[] = [];
    const end = () => {
      if (!usable) return;
      usable = false;
      active -= 1;
    };
    context.signal.addEventListener('abort', end, { once: true });
    try {
      await gate(context.signal);
      if (options.openError) throw options.openError();
    } catch (error) {
      end();
      throw error;
    }
    const trace: TranscriptHook = context.trace;
    trace('server', '220 fake ESMTP');

    const command = async (line: string, answer: () => SmtpReply): Promise<SmtpReply> => {
      if (!usable) throw new SmtpError('disconnect', 'the SMTP session is closed');
      commands.push(line);
      trace('client', line);
      await gate(context.signal);
      if (broken) {
        end();
        throw new SmtpError('disconnect', 'the server closed the connection');
      }
      const result = answer();
      trace('server', `${result.code} ${result.text}`);
      if (result.code === 421) {
        end();
        throw new SmtpError('rejected', 'closing', { smtpReply: result });
      }
      return result;
    };

    const rcptTo = (recipient: string) => {
      if (options.dropAfterRcpts !== undefined && rcpts >= options.dropAfterRcpts) broken = true;
      return command(`RCPT TO:<${recipient}>`, () => {
        rcpts += 1;
        if (options.closeAfterRcpts !== undefined && rcpts > options.closeAfterRcpts) {
          return reply(421, '4.7.0 too many recipients this session');
        }
        return options.rcpt?.(recipient) ?? reply(250);
      });
    };
    const groups: number[] = [];
    const rcptToMany = (
      recipients: readonly { recipient: string }[],
      groupOptions: { mailFrom?: { sender: string; smtpUtf8?: boolean } } = {},
    ): PipelinedReplies => {
      groups.push(recipients.length);
      const { mailFrom } = groupOptions;
      let chain: Promise<unknown> = Promise.resolve();
      let failure: unknown;
      const next = <T>(task: () => Promise<T>): Promise<T> => {
        const run = chain.then(() => {
          if (failure !== undefined) throw failure;
          return task().catch((error: unknown) => {
            failure = error;
            throw error;
          });
        });
        chain = run.catch(() => {});
        run.catch(() => {});
        return run;
      };
      const mail =
        mailFrom === undefined
          ? null
          : next(() =>
              command(
                `MAIL FROM:<${mailFrom.sender}>${mailFrom.smtpUtf8 ? ' SMTPUTF8' : ''}`,
                () => options.mail?.(mailFrom.sender) ?? reply(250),
              ),
            );
      return { mail, rcpts: recipients.map(({ recipient }) => next(() => rcptTo(recipient))) };
    };

    const session: FakeSession = {
      groups,
      ...(options.pipelining === true ? { rcptToMany } : {}),
      capabilities: { extensions, tls: false, esmtp: true, greeting: reply(220, 'fake ESMTP') },
      commands,
      get usable() {
        return usable;
      },
      breakSilently() {
        broken = true;
      },
      mailFrom(sender, mailOptions) {
        const suffix = mailOptions?.smtpUtf8 ? ' SMTPUTF8' : '';
        return command(`MAIL FROM:<${sender}>${suffix}`, () => options.mail?.(sender) ?? reply(250));
      },
      rcptTo(recipient) {
        return rcptTo(recipient);
      },
      reset() {
        return command('RSET', () => reply(250));
      },
      async quit() {
        if (!usable) return;
        commands.push('QUIT');
        trace('client', 'QUIT');
        end();
      },
    };
    sessions.push(session);
    return session;
  };

  return {
    open,
    sessions,
    opens: () => opens,
    active: () => active,
    peak: () => peak,
    waiting: () => gates.length,
    step() {
      const ready = gates.splice(0);
      for (const resolve of ready) resolve();
      return ready.length;
    },
  };
}
