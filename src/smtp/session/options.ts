/**
 * Options of an SMTP session ({@link SessionOptions}), shared by the stages of `openSmtpSession`.
 * @module
 */

import type { ReplyLimits } from '../reply.js';
import type { TlsPolicy, TranscriptHook } from '../types.js';

/** Options of `openSmtpSession`. */
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

/** Longest wait for the greeting and for each reply, unless the options say otherwise, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** Longest wait for the reply to QUIT, unless the options say otherwise, in milliseconds. */
export const DEFAULT_QUIT_TIMEOUT_MS = 1_000;
