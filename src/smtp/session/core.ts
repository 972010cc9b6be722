/**
 * The core of an SMTP session that every stage shares: its state (usable, the last command, the envelope's
 * SMTPUTF8, a QUIT sent with a group), reading one reply within a deadline, writing commands, one command exchange,
 * and the queue that runs commands one after another. No I/O of its own beyond the channel, no timers.
 * @module
 */

import { watchAbort } from '../../abort-watch.js';
import { printable } from '../../classify/printable.js';
import { isSmtpError, SmtpError, type SmtpFailure } from '../../errors.js';
import { createReplyParser } from '../reply.js';
import type { CommandOptions, LineChannel, SmtpReply, SmtpStage, TranscriptHook } from '../types.js';
import { DEFAULT_QUIT_TIMEOUT_MS, DEFAULT_TIMEOUT_MS, type SessionOptions } from './options.js';

/**
 * Whether `code`, read as the reply to QUIT, keeps the session in step: `221`, or `421` (the server closing, as
 * Postfix answers the command after its hard error limit). Anything else is another command's reply, shifted. The
 * caller also checks that no line follows it.
 * @example
 * answersQuit(421); // true
 * answersQuit(550); // false
 */
export function answersQuit(code: number): boolean {
  return code === 221 || code === 421;
}

/** What the stages of a session share. */
export interface SessionCore {
  readonly channel: LineChannel;
  readonly options: SessionOptions;
  readonly now: () => number;
  /** The session can take another command. */
  usable: boolean;
  /** `QUIT` went out at the end of a pipelined group: the session then takes no command but `quit()`. */
  quitSent: boolean;
  /** The open envelope was opened with SMTPUTF8. */
  envelopeUtf8: boolean;
  /** The command the next failure is about. */
  lastCommand: string | undefined;
  /** The last reply read (to any command but QUIT). */
  lastReply: SmtpReply | undefined;
  /** A line came that no command asked for, or a reply was missing: later replies cannot be trusted. */
  outOfStep: boolean;
  /** Once QUIT's reply was waited for: whether it was `221` or `421` with nothing after it. */
  quitInStep: boolean | undefined;
  /** Marks the session unusable and closes the channel. */
  close(): void;
  /** Closes the session and builds the error of a failure at `stage`. */
  failure(
    kind: SmtpFailure,
    message: string,
    stage: SmtpStage,
    extra?: { smtpReply?: SmtpReply; cause?: unknown },
  ): SmtpError;
  /** Sends a transcript line to the session's hook and to `hook`. */
  emit(hook: TranscriptHook | undefined, direction: 'client' | 'server', line: string): void;
  /** The time by which the reply to `command` must have come. */
  limitOf(command: CommandOptions, timeoutMs?: number): number;
  /** Reads one reply within `limitAt`; any failure closes the session. */
  readReply(stage: SmtpStage, limitAt: number, command: CommandOptions): Promise<SmtpReply>;
  /**
   * Throws `protocol` (and closes the session) when the server has sent data no command asked for: a doubled
   * greeting, a second reply to one command, lines before EHLO. Read as replies, they would shift every later
   * reply of the session onto the next command (a 550 answering the next address).
   */
  refuseUnasked(stage: SmtpStage): void;
  /**
   * Waits until what the server already sent has come in ({@link LineChannel.settle}), then refuses it if any came
   * ({@link SessionCore.refuseUnasked}): no command goes out before pending input is drained, so that a line sent
   * after a reply (between a session's release and its reuse, say) is never read as the next command's reply.
   */
  drain(stage: SmtpStage): Promise<void>;
  /**
   * After the last reply of a pipelined group: whether the session is proven in step. Waits for what the server
   * already sent; when `quit` ended the group, a pending line is read as the reply to QUIT and must be `221` or
   * `421` ({@link answersQuit}); any
   * line beyond that is one no command asked for. Closes the session and resolves `false` when out of step.
   */
  confirmInStep(quit: boolean): Promise<boolean>;
  /** Writes lines (in one send when the channel can); a failure closes the session. */
  write(lines: readonly string[], stage: SmtpStage): Promise<void>;
  /** Writes `line` and reads its reply; a 421 closes the session and throws `rejected`. */
  exchange(stage: SmtpStage, line: string, command?: CommandOptions): Promise<SmtpReply>;
  /** Throws `rejected` (and closes the session) for a `421`: the server is closing the session. */
  refuse421(reply: SmtpReply, stage: SmtpStage): void;
  /** Runs commands one after another, whatever the caller does. */
  serial<T>(task: () => Promise<T>): Promise<T>;
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

/** Creates the shared core of a session over `channel`. */
export function createSessionCore(channel: LineChannel, options: SessionOptions): SessionCore {
  const now = options.now ?? Date.now;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const sessionHook = options.onLine;
  let queue: Promise<unknown> = Promise.resolve();
  /**
   * Watches the session's signal once for all its replies (not once per reply); not at all when the channel
   * watches that very signal, since its pending read then rejects with `aborted` by itself.
   */
  const sessionAbort =
    options.signal === undefined || options.signal === channel.signal ? undefined : abortRace(options.signal);
  /** What every read races against when its command has no signal of its own. */
  const sessionAborts: readonly Promise<never>[] = sessionAbort === undefined ? [] : [sessionAbort.promise];

  const core: SessionCore = {
    channel,
    options,
    now,
    usable: true,
    quitSent: false,
    envelopeUtf8: false,
    lastCommand: undefined,
    lastReply: undefined,
    outOfStep: false,
    quitInStep: undefined,
    close() {
      core.usable = false;
      sessionAbort?.dispose();
      channel.close();
    },
    failure(kind, message, stage, extra = {}) {
      core.close();
      return new SmtpError(kind, message, {
        stage,
        ...(core.lastCommand === undefined ? {} : { command: core.lastCommand }),
        ...extra,
      });
    },
    emit(hook, direction, line) {
      sessionHook?.(direction, line);
      hook?.(direction, line);
    },
    limitOf(command, timeoutMs = commandTimeoutMs) {
      return Math.min(now() + timeoutMs, command.deadline ?? options.deadline ?? Number.POSITIVE_INFINITY);
    },
    async readReply(stage, limitAt, command) {
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
          core.emit(command.onLine, 'server', printable(line.slice(0, 2048)));
          const reply = parser.push(line);
          if (reply !== null) {
            if (stage !== 'quit') core.lastReply = reply;
            return reply;
          }
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
        throw core.failure(kind, message, stage, { cause: error });
      } finally {
        commandAbort?.dispose();
      }
    },
    refuseUnasked(stage) {
      if (channel.pending?.() === true) {
        core.usable = false;
        core.outOfStep = true;
        throw core.failure('protocol', 'the server sent data that no command asked for', stage);
      }
    },
    async drain(stage) {
      if (channel.settle !== undefined && channel.pending !== undefined) await channel.settle();
      core.refuseUnasked(stage);
    },
    async confirmInStep(quit) {
      if (channel.pending === undefined) return true;
      if (channel.settle !== undefined) await channel.settle();
      if (quit && core.quitSent && channel.pending()) {
        const limitAt = Math.min(
          core.limitOf({}),
          now() + (options.quitTimeoutMs ?? DEFAULT_QUIT_TIMEOUT_MS),
        );
        try {
          const reply = await core.readReply('quit', limitAt, {});
          core.quitSent = false; // its reply is read: quit() only closes
          core.quitInStep = answersQuit(reply.code);
        } catch {
          core.quitInStep = false; // readReply closed the session
        }
      }
      if (core.quitInStep === false || channel.pending()) {
        if (core.quitInStep === true) core.quitInStep = false;
        core.outOfStep = true;
        core.close();
        return false;
      }
      return true;
    },
    async write(lines, stage) {
      core.refuseUnasked(stage);
      try {
        if (channel.writeLines !== undefined && lines.length > 1) await channel.writeLines(lines);
        else for (const line of lines) await channel.writeLine(line);
      } catch (error) {
        throw core.failure(
          isSmtpError(error) ? error.kind : 'disconnect',
          'the connection failed while writing',
          stage,
          { cause: error },
        );
      }
    },
    async exchange(stage, line, command = {}) {
      if (!core.usable || channel.closed) {
        core.usable = false;
        throw new SmtpError('disconnect', 'the SMTP session is closed', { stage });
      }
      if (options.signal?.aborted) throw core.failure('aborted', 'the SMTP session was aborted', stage);
      if (command.signal?.aborted)
        throw new SmtpError('aborted', 'the command was aborted before it was sent', { stage });
      const limitAt = core.limitOf(command);
      await core.drain(stage);
      core.lastCommand = line;
      core.emit(command.onLine, 'client', line);
      await core.write([line], stage);
      const reply = await core.readReply(stage, limitAt, command);
      core.refuse421(reply, stage);
      return reply;
    },
    refuse421(reply, stage) {
      if (reply.code === 421) {
        throw core.failure(
          'rejected',
          `the server is closing the session: ${reply.code} ${reply.text}`,
          stage,
          {
            smtpReply: reply,
          },
        );
      }
    },
    serial<T>(task: () => Promise<T>): Promise<T> {
      const run = queue.then(task, task);
      queue = run.catch(() => {});
      return run;
    },
  };
  return core;
}
