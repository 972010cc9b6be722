/**
 * The pipelined stage of an SMTP session (RFC 2920): `MAIL FROM` (optional) and several `RCPT TO` written in one
 * send, then their replies read in order, each settling its own promise; optionally `QUIT` at the end of the group.
 * @module
 */

import { isSmtpError, SmtpError } from '../../errors.js';
import { commands, needsSmtpUtf8 } from '../sanitize.js';
import type {
  CommandOptions,
  PipelinedRcpt,
  PipelinedReplies,
  PipelineOptions,
  ServerCapabilities,
  SmtpReply,
  SmtpStage,
} from '../types.js';
import type { SessionCore } from './core.js';
import { isSuccess } from './hello.js';

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

/**
 * Sends `items` as one RFC 2920 group when the server offers PIPELINING (else one at a time) and settles
 * each item with its reply, in order. From the first reply that does not come, every later item rejects
 * with the same error. With `quit` (and PIPELINING), `QUIT` ends the group: its reply is read here when it came with
 * the others, else left for `quit()`. Resolves whether the replies are proven in step with the commands (see
 * `PipelinedReplies.inStep`).
 */
async function runGroup(
  core: SessionCore,
  capabilities: ServerCapabilities,
  items: readonly GroupItem[],
  signal: AbortSignal | undefined,
  quit: boolean,
): Promise<boolean> {
  const { channel, options } = core;
  const pipelining = capabilities.extensions.has('PIPELINING');
  let index = 0;
  try {
    const stage: SmtpStage = items[0]!.stage;
    if (!core.usable || channel.closed) {
      core.usable = false;
      throw new SmtpError('disconnect', 'the SMTP session is closed', { stage });
    }
    if (options.signal?.aborted) throw core.failure('aborted', 'the SMTP session was aborted', stage);
    if (signal?.aborted)
      throw new SmtpError('aborted', 'the group was aborted before it was sent', { stage });
    if (pipelining) {
      await core.drain(stage);
      for (const item of items) core.emit(item.command.onLine, 'client', item.line);
      core.lastCommand = items[0]!.line;
      const lines = items.map((item) => item.line);
      if (quit) {
        const line = commands.quit();
        core.emit(undefined, 'client', line);
        lines.push(line);
        // RFC 2920 §3.1: QUIT may only end a group. Nothing more is sent on this session, whatever the replies.
        core.usable = false;
        core.quitSent = true;
      }
      await core.write(lines, stage);
    }
    for (; index < items.length; index++) {
      const item = items[index]!;
      core.lastCommand = item.line;
      if (!pipelining) {
        await core.drain(item.stage);
        core.emit(item.command.onLine, 'client', item.line);
        await core.write([item.line], item.stage);
      }
      const reply = await core.readReply(item.stage, core.limitOf(item.command), item.command);
      core.refuse421(reply, item.stage);
      item.settle.resolve(reply);
    }
  } catch (error) {
    for (const item of items.slice(index)) item.settle.reject(error);
    // One at a time, each command went out on a quiet session: the replies that came are their own.
    if (!pipelining) return true;
    // A reply that never came (or garbage) may have been an earlier one's: the later replies shifted onto
    // the wrong commands. A server that closed (421, or the connection) is in step unless more came than asked for.
    const kind = isSmtpError(error) ? error.kind : undefined;
    if (kind === 'rejected' || kind === 'disconnect') return core.confirmInStep(false);
    core.outOfStep = true;
    core.close();
    return false;
  }
  return pipelining ? core.confirmInStep(quit) : true;
}

/** The `rcptToMany` of a session: builds the group's commands (each checked alone) and queues the group. */
export function rcptToMany(
  core: SessionCore,
  capabilities: ServerCapabilities,
  recipients: readonly PipelinedRcpt[],
  pipelineOptions: PipelineOptions,
): PipelinedReplies {
  const rcpts = recipients.map(() => deferred<SmtpReply>());
  const mail = pipelineOptions.mailFrom;
  const mailReply = mail === undefined ? null : deferred<SmtpReply>();
  const inStep = deferred<boolean>();
  const signal = pipelineOptions.signal;
  const withSignal = (command: CommandOptions): CommandOptions =>
    signal === undefined ? command : { ...command, signal };
  for (const settle of [mailReply, ...rcpts]) settle?.promise.catch(() => {});
  core.serial(async () => {
    const items: GroupItem[] = [];
    let utf8 = core.envelopeUtf8;
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
            core.envelopeUtf8 = isSuccess(reply) && smtpUtf8;
            mailReply.resolve(reply);
          },
          (error: unknown) => mailReply.reject(error),
        );
        items.push({ stage: 'mail', line, command: withSignal(mail), settle });
        utf8 = smtpUtf8;
      } catch (error) {
        for (const settle of [mailReply, ...rcpts]) settle.reject(error);
        inStep.resolve(true); // nothing was sent
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
        items.push({ stage: 'rcpt', line: commands.rcptTo(recipient), command: withSignal(command), settle });
      } catch (error) {
        settle.reject(error);
      }
    }
    inStep.resolve(
      items.length === 0 ||
        (await runGroup(core, capabilities, items, signal, pipelineOptions.quit === true)),
    );
  });
  return {
    mail: mailReply?.promise ?? null,
    rcpts: rcpts.map((settle) => settle.promise),
    inStep: inStep.promise,
  };
}
