/**
 * The transport seam: how the SMTP probe reaches a mail server. Declared in the core (which calls through it and
 * imports no seam module); `smtp/types.ts` re-exports it beside the implementations.
 * @module
 */

/** Where to connect. `host` is an IP address that has already passed the SSRF guard. */
export interface ConnectTarget {
  /** IP address (v4 or v6) to connect to. */
  readonly host: string;
  /** TCP port. */
  readonly port: number;
  /** The MX host name, for TLS SNI and certificate checks, and for logs. */
  readonly hostname?: string;
}

/** Options of one connection attempt. */
export interface ConnectOptions {
  /** Give up connecting after this many milliseconds. */
  readonly timeoutMs: number;
  /** Aborts the attempt, or the open channel. */
  readonly signal?: AbortSignal;
  /** Longest line accepted from the peer, in bytes, before the channel fails. */
  readonly maxLineLength: number;
}

/**
 * A connected, line-oriented channel to a mail server. Lines are read and written without their CRLF.
 */
export interface LineChannel {
  /**
   * The next line from the peer. Rejects with an `SmtpError` when the peer closes the connection
   * (`disconnect`), sends a line longer than the limit (`protocol`, and the channel closes), the whole line has
   * not arrived within `timeoutMs` (`timeout`; the channel stays open), or the channel is aborted (`aborted`).
   * At most one read may be pending at a time.
   */
  readLine(timeoutMs: number): Promise<string>;
  /** Writes one line (the CRLF is added). The caller has sanitized it. */
  writeLine(line: string): Promise<void>;
  /**
   * Writes several lines in one send (each gets its CRLF), for an RFC 2920 pipelined command group. The caller
   * has sanitized them. Optional: without it, the lines are written one `writeLine` after another.
   */
  writeLines?(lines: readonly string[]): Promise<void>;
  /**
   * Upgrades the connection to TLS (after a `220` reply to STARTTLS). Optional: without it, STARTTLS is
   * never attempted. Rejects with `SmtpError` kind `tls` when the handshake fails.
   */
  startTls?(options: { servername?: string; timeoutMs: number }): Promise<void>;
  /** Closes the connection; safe to call twice. */
  close(): void;
  /** True once the connection is closed, by either side. */
  readonly closed: boolean;
  /**
   * The abort signal this channel watches itself, if any: when it fires, the channel closes and a pending read
   * rejects with `aborted` (as `socketChannel` does with its `signal`). A session opened on the channel with the
   * same signal then does not race each read against it. Optional: without it, the session does.
   */
  readonly signal?: AbortSignal;
  /**
   * True when the peer has sent data that no read has taken yet (a whole line or part of one). The session
   * checks it before each command: such data would be read as the reply to the wrong command. Optional:
   * without it, that check is skipped.
   */
  pending?(): boolean;
  /**
   * Resolves once the data the peer sent before the call has been taken in, so that {@link LineChannel.pending}
   * tells whether more came than was asked for (a node socket: after the event loop has polled for I/O again). The
   * session waits for it before each command, so that a line the server sent after a reply is never read as the
   * reply to the next command. Optional: without it, `pending()` is checked at once.
   */
  settle?(): Promise<void>;
}

/** STARTTLS policy of the SMTP probe (the `tls` option). */
export type TlsPolicy = 'never' | 'opportunistic' | 'required';

/** The transport seam. Implementations: `tcpTransport()`, `socksTransport()`, or your own. */
export interface Transport {
  /** Opens a connection. Rejects with an `SmtpError` of kind `connection` when it cannot. */
  connect(target: ConnectTarget, options: ConnectOptions): Promise<LineChannel>;
}

/** One parsed SMTP reply (possibly multi-line). */
export interface SmtpReply {
  /** Three-digit reply code. */
  readonly code: number;
  /** RFC 3463 enhanced status code (`5.1.1`) taken from the first line, or `null`. */
  readonly enhanced: string | null;
  /** Text of each line, without code and separator. */
  readonly lines: readonly string[];
  /** The lines joined with a space, bounded in length. */
  readonly text: string;
}

/** The step of an SMTP dialogue that a reply answers (used to classify it). */
export type SmtpStage = 'connect' | 'greeting' | 'ehlo' | 'starttls' | 'mail' | 'rcpt' | 'rset' | 'quit';

/** Who wrote a transcript line: `client` (us) or `server`. */
export type TranscriptDirection = 'client' | 'server';

/** Receives every line of the dialogue, as written or read (without CRLF). Must not throw. */
export type TranscriptHook = (direction: TranscriptDirection, line: string) => void;

/** What the server said in its greeting and in answer to EHLO (or HELO). */
export interface ServerCapabilities {
  /** Upper-case EHLO keywords (`PIPELINING`, `SMTPUTF8`, `STARTTLS`, ...). Empty after a HELO fallback. */
  readonly extensions: ReadonlySet<string>;
  /** The connection was upgraded with STARTTLS. */
  readonly tls: boolean;
  /** False when EHLO was refused and the session fell back to HELO. */
  readonly esmtp: boolean;
  /** The `220` greeting. */
  readonly greeting: SmtpReply;
}

/** Per-command options of an {@link SmtpSession}. */
export interface CommandOptions {
  /**
   * Absolute time (by the session's clock) by which the reply must have arrived; tightens the session's
   * `commandTimeoutMs`. Use the verification's deadline here.
   */
  readonly deadline?: number;
  /** Aborts waiting for the reply (the session is then closed). */
  readonly signal?: AbortSignal;
  /** Receives this command's lines and its reply's lines, for a per-verification transcript. */
  readonly onLine?: TranscriptHook;
}

/** Options of {@link SmtpSession.mailFrom}. */
export interface MailFromOptions extends CommandOptions {
  /** Ask for SMTPUTF8 (sent only when the server advertises it). @default false */
  readonly smtpUtf8?: boolean;
}

/** One recipient of {@link SmtpSession.rcptToMany}. */
export interface PipelinedRcpt {
  /** The address for `RCPT TO`. */
  readonly recipient: string;
  /**
   * Absolute time (by the session's clock) by which this recipient's reply must have arrived; tightens the
   * session's `commandTimeoutMs`, which counts from the arrival of the previous reply.
   */
  readonly deadline?: number;
  /** Receives this command's line and its reply's lines. */
  readonly onLine?: TranscriptHook;
}

/** Options of {@link SmtpSession.rcptToMany}. */
export interface PipelineOptions {
  /** Open the envelope in the same group: `MAIL FROM` goes first (RFC 2920 §3.1 allows it anywhere in a group). */
  readonly mailFrom?: { readonly sender: string } & MailFromOptions;
  /** Aborts the whole group (the session is then closed). */
  readonly signal?: AbortSignal;
  /**
   * End the group with `QUIT` (RFC 2920 §3.1 allows it as a group's last command), for a session that takes
   * nothing after this group: one write and one round trip fewer than a `quit()` of its own. The session is
   * unusable from then on; `quit()` only waits for the `221` (a short wait, never an error) and closes.
   * Ignored by a server without PIPELINING, whose commands go one at a time. @default false
   */
  readonly quit?: boolean;
}

/** The replies of a pipelined group, one promise per command, settling in the order the commands were sent. */
export interface PipelinedReplies {
  /** The reply to `MAIL FROM`, when the group opened the envelope; else `null`. */
  readonly mail: Promise<SmtpReply> | null;
  /**
   * One reply per recipient, in order. A recipient whose command could not be built (`unsafe_argument`,
   * `smtputf8`) rejects alone and is not sent. When the reply to one command does not come (drop, garbage,
   * timeout, `421`), that command and every later one of the group reject with the same `SmtpError` and the
   * session is closed.
   */
  readonly rcpts: readonly Promise<SmtpReply>[];
  /**
   * Resolves once the group's replies are read: `true` when they are proven in step with its commands (every reply
   * came, and no line followed the last one but the `221` to a `QUIT` that ended the group), `false` when a reply is
   * missing or the server sent a line no command asked for (the session is then closed). Only the first reply of
   * a pipelined group went out on a session known to be quiet; the later ones are its commands' own replies only if
   * this resolves `true`. Without PIPELINING each command went out alone on a quiet session, and it resolves `true`.
   * Optional: sessions without it are trusted.
   */
  readonly inStep?: Promise<boolean>;
}

/**
 * Whether a session's replies were in step with its commands, as far as it can tell (see
 * {@link SmtpSession.checkStep}): `in_step`, `out_of_step` (a line came that no command asked for, a reply was
 * missing, a QUIT was not answered `221`, or the session failed before it could tell), or `last_reply_doubled` (the
 * one extra line is a copy of the last reply: that reply's value is right whichever of the two was the answer, but
 * earlier ones are not proven).
 */
export type StepCheck = 'in_step' | 'out_of_step' | 'last_reply_doubled';

/**
 * An open SMTP session, past greeting and EHLO (and STARTTLS when asked for), ready for envelopes.
 * Replies are returned as values whatever their code, except `421` (service closing), which throws an
 * `SmtpError` of kind `rejected` carrying the reply and leaves the session unusable. Failures to get a reply
 * throw `SmtpError` too (and close the session).
 */
export interface SmtpSession {
  /** What the server advertised. */
  readonly capabilities: ServerCapabilities;
  /**
   * `MAIL FROM:<sender>` (an empty sender gives `MAIL FROM:<>`), with ` SMTPUTF8` when `smtpUtf8` is set and
   * the server advertises it.
   */
  mailFrom(sender: string, options?: MailFromOptions): Promise<SmtpReply>;
  /**
   * `RCPT TO:<recipient>`. A recipient with non-ASCII characters needs an envelope opened with SMTPUTF8 on a
   * server that offers it; otherwise throws `SmtpError` kind `smtputf8` without writing anything (the session
   * stays usable).
   */
  rcptTo(recipient: string, options?: CommandOptions): Promise<SmtpReply>;
  /**
   * Several `RCPT TO` (after an optional `MAIL FROM`) as one RFC 2920 command group: every line is written in
   * one send, then the replies are read in order, each settling its own promise. Without the `PIPELINING`
   * keyword the commands go one at a time (each after the previous reply). A `MAIL FROM` in the group that is
   * refused does not stop the `RCPT TO` already sent; their replies (usually `503`) still come back. Optional:
   * sessions without it are driven one command at a time.
   */
  rcptToMany?(recipients: readonly PipelinedRcpt[], options?: PipelineOptions): PipelinedReplies;
  /** `RSET`: ends the envelope so that the session can be reused. A non-2xx reply makes the session unusable. */
  reset(options?: CommandOptions): Promise<SmtpReply>;
  /** `QUIT` (best effort, short wait for `221`) and close. Never throws; idempotent. */
  quit(options?: CommandOptions): Promise<void>;
  /** True while the session can take another command: false after `421`, a failure, `quit()` or a close. */
  readonly usable: boolean;
  /**
   * Tells whether every reply so far was the reply to its own command. A line that comes after the last reply
   * with no command outstanding means one reply was shifted onto a later command (a server that sent one line too
   * many, late); only the end of the stream can show it. Call it with no command outstanding: while the session is
   * idle (it waits for what the server already sent), or after `quit()` (in step when QUIT got `221` and nothing
   * followed). Out of step, the session is closed. Optional: sessions without it are trusted as they answer.
   */
  checkStep?(): Promise<StepCheck>;
}
