/**
 * Opens a TCP socket with a connect timeout and an abort signal, turning every failure into an `SmtpError`.
 * Shared by the TCP and SOCKS transports.
 * @module
 */
import { connect, isIP, type Socket } from 'node:net';
import { watchOptionalAbort } from '../abort-watch.js';
import { SmtpError } from '../errors.js';

/** Where and how to connect. */
export interface SocketTarget {
  /** IP address to connect to. */
  readonly host: string;
  readonly port: number;
  /** Local address to bind, if any. */
  readonly localAddress?: string;
}

/**
 * Connects to `target`. Rejects with `SmtpError` kind `connection` (refused, unreachable, reset, timed out,
 * a host name where an IP address is expected) or `aborted`.
 */
export function connectSocket(
  target: SocketTarget,
  options: {
    readonly timeoutMs: number;
    readonly signal?: AbortSignal | undefined;
    /** Accept a host name (for a configured proxy; mail hosts must arrive as guarded IP addresses). */
    readonly allowHostname?: boolean;
  },
): Promise<Socket> {
  const where = `${target.host}:${target.port}`;
  if (isIP(target.host) === 0 && options.allowHostname !== true) {
    return Promise.reject(
      new SmtpError('connection', `${target.host} is not an IP address; resolve and guard it first`),
    );
  }
  if (options.signal?.aborted)
    return Promise.reject(new SmtpError('aborted', `connecting to ${where} was aborted`));
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: target.host,
      port: target.port,
      ...(target.localAddress === undefined ? {} : { localAddress: target.localAddress }),
    });
    let unwatch = (): void => {};
    const finish = (error?: SmtpError) => {
      clearTimeout(timer);
      unwatch();
      socket.off('connect', onConnect);
      socket.off('error', onError);
      if (error) {
        socket.destroy();
        reject(error);
      } else {
        resolve(socket);
      }
    };
    const onConnect = () => finish();
    const onError = (error: NodeJS.ErrnoException) =>
      finish(
        new SmtpError('connection', `cannot connect to ${where}: ${error.code ?? error.message}`, {
          cause: error,
        }),
      );
    const onAbort = () => finish(new SmtpError('aborted', `connecting to ${where} was aborted`));
    const timer = setTimeout(
      () =>
        finish(
          new SmtpError('connection', `cannot connect to ${where}: no answer within ${options.timeoutMs} ms`),
        ),
      options.timeoutMs,
    );
    socket.once('connect', onConnect);
    socket.once('error', onError);
    unwatch = watchOptionalAbort(options.signal, onAbort);
  });
}
