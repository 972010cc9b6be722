/**
 * A loopback server that speaks just enough of the PostgreSQL wire protocol (version 3) to refuse a password:
 * it answers the startup message with a request for a cleartext password, and the password with the
 * ErrorResponse a real server sends when the password is wrong (SQLSTATE 28P01). This machine's PostgreSQL
 * trusts every local connection, so it cannot refuse a password itself.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** The server, its port, the passwords it was sent, and `close()`. */
export interface RefusingPostgres {
  readonly port: number;
  readonly passwords: string[];
  close(): Promise<void>;
}

function message(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
}

function passwordRefused(user: string): Buffer {
  const fields = [
    ['S', 'FATAL'],
    ['V', 'FATAL'],
    ['C', '28P01'],
    ['M', `password authentication failed for user "${user}"`],
  ];
  const body = Buffer.concat([
    ...fields.map(([code, text]) => Buffer.from(`${code}${text}\0`, 'utf8')),
    Buffer.from([0]),
  ]);
  return message('E', body);
}

function serve(socket: Socket, passwords: string[]): void {
  let buffered = Buffer.alloc(0);
  let user = '';
  let started = false;
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!started) {
        if (buffered.length < 4) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        // StartupMessage: length, protocol 3.0, then name\0value\0 pairs.
        const pairs = buffered.subarray(8, length).toString('utf8').split('\0');
        user = pairs[pairs.indexOf('user') + 1] ?? '';
        buffered = buffered.subarray(length);
        started = true;
        const ask = Buffer.alloc(4);
        ask.writeInt32BE(3, 0); // AuthenticationCleartextPassword
        socket.write(message('R', ask));
        continue;
      }
      if (buffered.length < 5) return;
      const length = buffered.readInt32BE(1);
      if (buffered.length < length + 1) return;
      if (buffered.toString('latin1', 0, 1) === 'p') {
        passwords.push(buffered.subarray(5, length).toString('utf8').replace(/\0$/, ''));
        socket.end(passwordRefused(user));
      }
      buffered = buffered.subarray(length + 1);
    }
  });
}

/** Starts the refusing server on 127.0.0.1 and a random port. */
export async function startRefusingPostgres(): Promise<RefusingPostgres> {
  const passwords: string[] = [];
  const server: Server = createServer((socket) => serve(socket, passwords));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    passwords,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
