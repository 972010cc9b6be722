/**
 * A {@link LineChannel} over a connected node socket, with STARTTLS through `node:tls`, which is loaded on the
 * first STARTTLS so that a process that never upgrades a connection (`mailvet verify --no-dns`) does not load it.
 *
 * Memory stays bounded whatever the peer sends: a line longer than `maxLineLength` fails the channel as soon as
 * the limit is passed, and the socket is paused while unread lines pile up.
 *
 * TLS certificates are not verified by default (`verifyTls: false`): the probe sends no secret and no message,
 * only an envelope, and mail servers commonly present self-signed or mismatched certificates; refusing them
 * would turn many verifications into `unknown` for no gain in privacy. Set `verifyTls: true` to require a
 * certificate valid for the MX host name.
 * @module
 */
import type { Socket } from 'node:net';
import { watchOptionalAbort } from '../abort-watch.js';
import { isSmtpError, SmtpError, type SmtpFailure } from '../errors.js';
import { createLineSplitter } from './line-splitter.js';
import type { LineChannel } from './types.js';

/** Options of {@link socketChannel}. */
export interface SocketChannelOptions {
  /** Longest line accepted from the peer, in bytes (CRLF not counted). */
  readonly maxLineLength: number;
  /** Closes the channel when aborted; pending and later reads reject with kind `aborted`. */
  readonly signal?: AbortSignal;
  /** Verify the server's certificate on STARTTLS (against the `servername`). @default false */
  readonly verifyTls?: boolean;
  /** Unread lines held before the socket is paused. @default 64 */
  readonly maxQueuedLines?: number;
}

const LINE_BREAKS = /[\r\n\0]/;

/** Why a channel closed, before anything asked for the error. */
interface Ending {
  readonly kind: SmtpFailure;
  readonly message: string;
  readonly cause?: unknown;
}

const CLOSED: Ending = { kind: 'disconnect', message: 'the channel is closed' };
const PEER_CLOSED: Ending = { kind: 'disconnect', message: 'the server closed the connection' };
const ABORTED: Ending = { kind: 'aborted', message: 'the SMTP connection was aborted' };

/**
 * Wraps a connected socket in a {@link LineChannel}. The channel owns the socket from then on.
 * @example
 * const channel = socketChannel(socket, { maxLineLength: 2048 });
 * const greeting = await channel.readLine(5000);
 */
export function socketChannel(initial: Socket, options: SocketChannelOptions): LineChannel {
  const maxQueuedLines = options.maxQueuedLines ?? 64;
  let socket: Socket = initial;
  let splitter = createLineSplitter(options.maxLineLength);
  const queue: string[] = [];
  /**
   * Why the channel is closed, or null while open. Kept as a description until a read or write asks for the
   * error: a normal teardown (our close, the peer's FIN after QUIT, an abort by the pool) builds no Error and
   * captures no stack trace.
   */
  let ending: SmtpError | Ending | null = null;
  let closed = false;
  let unwatch = (): void => {};
  let waiter: { resolve: (line: string) => void; reject: (error: SmtpError) => void } | null = null;

  /** The error the channel failed with, built on first use. */
  const failure = (): SmtpError => {
    const why = ending ?? CLOSED;
    if (why instanceof SmtpError) return why;
    const error = new SmtpError(why.kind, why.message, why.cause === undefined ? {} : { cause: why.cause });
    ending = error;
    return error;
  };

  const fail = (why: SmtpError | Ending) => {
    ending ??= why;
    closed = true;
    socket.destroy();
    unwatch();
    const pending = waiter;
    waiter = null;
    if (pending && queue.length === 0) pending.reject(failure());
  };

  function onAbort() {
    fail(ABORTED);
  }

  const onData = (chunk: Buffer) => {
    if (closed) return;
    let lines: string[];
    try {
      lines = splitter.push(chunk);
    } catch (error) {
      fail(isSmtpError(error) ? error : { kind: 'protocol', message: 'unreadable data', cause: error });
      return;
    }
    queue.push(...lines);
    if (waiter && queue.length > 0) {
      const pending = waiter;
      waiter = null;
      pending.resolve(queue.shift()!);
    }
    if (queue.length >= maxQueuedLines) socket.pause();
  };
  const onClose = () => fail(PEER_CLOSED);
  const onError = (error: Error) =>
    fail({ kind: 'disconnect', message: `connection error: ${error.message}`, cause: error });

  const attach = (target: Socket) => {
    target.on('data', onData);
    target.on('close', onClose);
    target.on('error', onError);
  };
  const detach = (target: Socket) => {
    target.off('data', onData);
    target.off('close', onClose);
    target.off('error', onError);
  };

  const writeLines = (lines: readonly string[]): Promise<void> => {
    if (ending !== null) return Promise.reject(failure());
    if (lines.some((line) => LINE_BREAKS.test(line))) {
      return Promise.reject(
        new SmtpError('unsafe_argument', 'a command line contains CR, LF or NUL; nothing was sent'),
      );
    }
    return new Promise<void>((resolve, reject) => {
      socket.write(lines.map((line) => `${line}\r\n`).join(''), (error) => {
        if (error)
          reject(
            ending === null
              ? new SmtpError('disconnect', `write failed: ${error.message}`, { cause: error })
              : failure(),
          );
        else resolve();
      });
    });
  };

  attach(socket);
  if (options.signal?.aborted) onAbort();
  else unwatch = watchOptionalAbort(options.signal, onAbort);

  return {
    get closed() {
      return closed;
    },
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    readLine(timeoutMs) {
      const line = queue.shift();
      if (line !== undefined) {
        if (queue.length < maxQueuedLines && !closed) socket.resume();
        return Promise.resolve(line);
      }
      if (ending !== null) return Promise.reject(failure());
      if (waiter)
        return Promise.reject(new SmtpError('protocol', 'readLine called while another read is pending'));
      socket.resume();
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiter = null;
          reject(new SmtpError('timeout', `no complete line within ${timeoutMs} ms`));
        }, timeoutMs);
        waiter = {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
      });
    },
    writeLines,
    writeLine(line) {
      return writeLines([line]);
    },
    pending() {
      return queue.length > 0 || splitter.pendingBytes > 0;
    },
    settle() {
      // The first turn may run before this loop iteration's poll for I/O is over; after the second, the socket has
      // been polled again, and what the peer's kernel had sent before the call is in the queue.
      return new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));
    },
    async startTls({ servername, timeoutMs }) {
      // Loaded before anything is checked or detached: lines that arrive meanwhile are still queued and seen below.
      const { connect: tlsConnect } = await import('node:tls');
      if (ending !== null) return Promise.reject(failure());
      if (queue.length > 0 || splitter.pendingBytes > 0) {
        const error = new SmtpError('protocol', 'the server sent data after its STARTTLS reply');
        fail(error);
        return Promise.reject(error);
      }
      const plain = socket;
      detach(plain);
      return new Promise<void>((resolve, reject) => {
        const secure = tlsConnect({
          socket: plain,
          ...(servername === undefined ? {} : { servername }),
          rejectUnauthorized: options.verifyTls === true,
        });
        socket = secure;
        const done = (error?: SmtpError) => {
          clearTimeout(timer);
          secure.off('secureConnect', onSecure);
          secure.off('error', onHandshakeError);
          secure.off('close', onHandshakeClose);
          if (error) {
            fail(error);
            reject(error);
            return;
          }
          splitter = createLineSplitter(options.maxLineLength);
          attach(secure);
          resolve();
        };
        const onSecure = () => done();
        const onHandshakeError = (error: Error) =>
          done(new SmtpError('tls', `TLS handshake failed: ${error.message}`, { cause: error }));
        const onHandshakeClose = () =>
          done(
            ending === null
              ? new SmtpError('tls', 'the connection closed during the TLS handshake')
              : failure(),
          );
        const timer = setTimeout(
          () => done(new SmtpError('tls', `TLS handshake not done within ${timeoutMs} ms`)),
          timeoutMs,
        );
        secure.once('secureConnect', onSecure);
        secure.once('error', onHandshakeError);
        secure.once('close', onHandshakeClose);
        if (options.signal?.aborted) done(new SmtpError('aborted', 'the SMTP connection was aborted'));
      });
    },
    close() {
      if (closed) return;
      fail(CLOSED);
    },
  };
}
