/**
 * The SMTP dialogue as pure logic over a {@link LineChannel}: greeting, EHLO (HELO fallback), optional
 * STARTTLS, then envelopes (`MAIL FROM`, `RCPT TO`, `RSET`) and `QUIT`. No I/O of its own, no timers: time
 * limits are passed to the channel, measured with an injectable clock.
 * @module
 */

import { SmtpError } from '../errors.js';
import { commands, needsSmtpUtf8 } from './sanitize.js';
import { answersQuit, createSessionCore } from './session/core.js';
import { rcptToMany } from './session/group.js';
import { hello, isSuccess } from './session/hello.js';
import { DEFAULT_QUIT_TIMEOUT_MS, type SessionOptions } from './session/options.js';
import type {
  CommandOptions,
  LineChannel,
  MailFromOptions,
  PipelinedRcpt,
  PipelinedReplies,
  PipelineOptions,
  SmtpReply,
  SmtpSession,
  StepCheck,
} from './types.js';

export type { SessionOptions } from './session/options.js';

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
  const core = createSessionCore(channel, options);
  const capabilities = await hello(core);
  /** `quit()` has begun: QUIT is (about to be) out and its reply awaited. */
  let quitting = false;

  return {
    capabilities,
    get usable() {
      return core.usable && !channel.closed;
    },
    mailFrom(sender: string, mailOptions: MailFromOptions = {}) {
      return core.serial(async () => {
        const smtpUtf8 = mailOptions.smtpUtf8 === true && capabilities.extensions.has('SMTPUTF8');
        if (needsSmtpUtf8(sender) && !smtpUtf8) {
          throw new SmtpError('smtputf8', 'the sender needs SMTPUTF8, which the server does not offer', {
            stage: 'mail',
          });
        }
        const reply = await core.exchange('mail', commands.mailFrom(sender, smtpUtf8), mailOptions);
        core.envelopeUtf8 = isSuccess(reply) && smtpUtf8;
        return reply;
      });
    },
    rcptTo(recipient: string, rcptOptions: CommandOptions = {}) {
      return core.serial(async () => {
        if (needsSmtpUtf8(recipient) && !core.envelopeUtf8) {
          throw new SmtpError(
            'smtputf8',
            capabilities.extensions.has('SMTPUTF8')
              ? 'the recipient needs SMTPUTF8: open the envelope with mailFrom(sender, { smtpUtf8: true })'
              : 'the recipient needs SMTPUTF8, which the server does not offer',
            { stage: 'rcpt' },
          );
        }
        return core.exchange('rcpt', commands.rcptTo(recipient), rcptOptions);
      });
    },
    rcptToMany(
      recipients: readonly PipelinedRcpt[],
      pipelineOptions: PipelineOptions = {},
    ): PipelinedReplies {
      return rcptToMany(core, capabilities, recipients, pipelineOptions);
    },
    reset(resetOptions: CommandOptions = {}) {
      return core.serial(async () => {
        core.envelopeUtf8 = false;
        const reply = await core.exchange('rset', commands.reset(), resetOptions);
        if (!isSuccess(reply)) core.close();
        return reply;
      });
    },
    quit(quitOptions: CommandOptions = {}) {
      quitting = true;
      return core.serial(async () => {
        if (!(core.usable || core.quitSent) || channel.closed) {
          core.close();
          return;
        }
        try {
          const limitAt = Math.min(
            core.limitOf(quitOptions),
            core.now() + (options.quitTimeoutMs ?? DEFAULT_QUIT_TIMEOUT_MS),
          );
          if (!core.quitSent) {
            const line = commands.quit();
            core.emit(quitOptions.onLine, 'client', line);
            await channel.writeLine(line);
          }
          core.quitSent = false; // its reply is read once
          const reply = await core.readReply('quit', limitAt, quitOptions);
          if (channel.settle !== undefined) await channel.settle();
          core.quitInStep = answersQuit(reply.code) && channel.pending?.() !== true;
        } catch {
          // QUIT is a courtesy: whatever happens, the session is over (and nothing proved it in step).
          core.quitInStep ??= false;
        } finally {
          core.close();
        }
      });
    },
    checkStep,
  };

  /**
   * Not queued behind commands: the pool calls it with none outstanding, or once QUIT is out (then, when nothing
   * came yet, no extra line came within the wait that preceded the call).
   */
  async function checkStep(): Promise<StepCheck> {
    if (core.outOfStep) {
      core.close();
      return 'out_of_step';
    }
    if (core.quitInStep !== undefined) return core.quitInStep ? 'in_step' : 'out_of_step';
    if (core.quitSent || quitting) return 'in_step';
    // Idle, or closed after a failure (a 421, a timeout): in step unless more came than was asked for.
    if (channel.settle !== undefined) await channel.settle();
    if (channel.pending?.() !== true) return 'in_step';
    // A line no command asked for: one reply was shifted onto a later command, unless it repeats the last reply.
    core.outOfStep = true;
    const last = core.lastReply;
    try {
      const extra = await core.readReply('rcpt', core.limitOf({}, EXTRA_LINE_MS), {});
      if (channel.settle !== undefined) await channel.settle();
      const doubled = last !== undefined && sameReply(extra, last) && channel.pending?.() !== true;
      return doubled ? 'last_reply_doubled' : 'out_of_step';
    } catch {
      return 'out_of_step'; // readReply closed the session
    } finally {
      core.close();
    }
  }
}

/** How long the rest of a line no command asked for may take to come, in milliseconds. */
const EXTRA_LINE_MS = 100;

function sameReply(one: SmtpReply, other: SmtpReply): boolean {
  return one.code === other.code && one.lines.join('\n') === other.lines.join('\n');
}
