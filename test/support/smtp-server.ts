/**
 * A real SMTP server (the `smtp-server` package) on a loopback address, playing a mail host with a fixed set of
 * mailboxes. For behaviour tests and benchmarks; never listens outside 127.0.0.0/8.
 * @module
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { SMTPServer, type SMTPServerAddress, type SMTPServerSession } from 'smtp-server';

/**
 * A scripted reply: `message` starts with the enhanced status code, if any (`5.7.1 blocked using ...`).
 * (smtp-server's own ENHANCEDSTATUSCODES stays off: it would put its generic code before ours.)
 */
export interface HarnessReply {
  readonly code: number;
  readonly message: string;
}

/** What a mailbox answers to `RCPT TO`: a named state or a scripted reply. */
export type MailboxBehaviour = 'ok' | 'missing' | 'disabled' | 'full' | HarnessReply;

/** Options of {@link startSmtpServer}. */
export interface SmtpServerOptions {
  /** Loopback address to bind (`127.0.0.1`, `127.0.0.2`, ...). @default '127.0.0.1' */
  readonly host?: string;
  /**
   * Mailboxes by local part (`alice`) or full address (`alice@example.com`), case-insensitive; a full address
   * wins over a local part. @default {}
   */
  readonly mailboxes?: Readonly<Record<string, MailboxBehaviour>>;
  /** Accept every recipient not listed in `mailboxes` (a catch-all domain). @default false */
  readonly catchAll?: boolean;
  /**
   * Greylisting: the first `RCPT TO` of each address (across connections) gets `450 4.2.0 ... Greylisted`,
   * later ones get the mailbox's normal answer. @default false
   */
  readonly greylist?: boolean;
  /**
   * Greylisting keyed on the client address, as real servers do: the first `RCPT TO` of an address from a client
   * address gets `450 4.2.0`, and so does every one from that client until this many milliseconds have passed;
   * another client address starts over. @default off
   */
  readonly greylistClientMs?: number;
  /**
   * Fixed delay, in milliseconds, before every reply (greeting included), as a slow server on a real network.
   * Implemented by a loopback relay in front of the server. @default 0
   */
  readonly delayMs?: number;
  /** Advertise SMTPUTF8; without it, `MAIL FROM ... SMTPUTF8` gets `555 5.5.4`. @default true */
  readonly smtpUtf8?: boolean;
  /** Advertise and accept STARTTLS (with smtp-server's built-in self-signed certificate). @default false */
  readonly startTls?: boolean;
  /** After this many `RCPT TO` on one connection, the next one gets `421 4.7.0` and the connection closes. */
  readonly closeAfterRcpts?: number;
  /** Refuse every connection with this greeting instead of `220` (e.g. `{ code: 554, message: '5.7.1 ...' }`). */
  readonly greeting?: HarnessReply;
  /** Answer `MAIL FROM` with this reply instead of `250`. */
  readonly mailFromReply?: HarnessReply;
  /** Port to listen on (several MX hosts on their own loopback addresses share one port number). @default 0 */
  readonly port?: number;
}

/** A running harness server. */
export interface SmtpServerHarness {
  /** The address it listens on. */
  readonly host: string;
  /** The port it listens on. */
  readonly port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Connections open right now. */
  activeConnections(): number;
  /** Most connections that were open at the same time. */
  peakConnections(): number;
  /** Every `RCPT TO` address received, in order (rejected ones included). */
  rcpts(): string[];
  /** Every `RCPT TO`, in order, with the client address it came from (`127.0.0.10`). */
  rcptClients(): { recipient: string; client: string }[];
  /** Every `MAIL FROM` received, in order, with whether it asked for SMTPUTF8. */
  senders(): { address: string; smtpUtf8: boolean }[];
  /** Stops listening and drops open connections. */
  close(): Promise<void>;
}

const STATE_REPLIES: Readonly<Record<'missing' | 'disabled' | 'full', HarnessReply>> = {
  missing: { code: 550, message: '5.1.1 user unknown' },
  disabled: { code: 550, message: '5.2.1 mailbox disabled' },
  full: { code: 552, message: '5.2.2 mailbox full, over quota' },
};

function replyError(reply: HarnessReply): Error {
  return Object.assign(new Error(reply.message), { responseCode: reply.code });
}

function lookup(
  mailboxes: ReadonlyMap<string, MailboxBehaviour>,
  address: string,
): MailboxBehaviour | undefined {
  const lower = address.toLowerCase();
  const at = lower.lastIndexOf('@');
  return mailboxes.get(lower) ?? (at > 0 ? mailboxes.get(lower.slice(0, at)) : undefined);
}

function listen(
  server: { listen(port: number, host: string, cb: () => void): unknown },
  host: string,
  port = 0,
) {
  return new Promise<void>((resolve) => server.listen(port, host, resolve));
}

/** A relay that passes client bytes straight through and holds each server chunk back `delayMs`. */
function delayingRelay(host: string, backendPort: number, delayMs: number, sockets: Set<Socket>): Server {
  return createServer((client) => {
    sockets.add(client);
    const backend = connect(backendPort, host);
    sockets.add(backend);
    const later = (action: () => void) => setTimeout(action, delayMs);
    client.on('data', (chunk) => backend.write(chunk));
    backend.on('data', (chunk) => later(() => client.writable && client.write(chunk)));
    backend.on('close', () => later(() => client.end()));
    client.on('close', () => {
      backend.destroy();
      sockets.delete(client);
      sockets.delete(backend);
    });
    client.on('error', () => backend.destroy());
    backend.on('error', () => client.destroy());
  });
}

/**
 * Starts an SMTP server on `host` (default `127.0.0.1`), port 0. Unknown recipients get `550 5.1.1 user unknown`
 * unless `catchAll` is set.
 * @example
 * const smtp = await startSmtpServer({ mailboxes: { alice: 'ok', bob: 'full' } });
 * // ... connect to smtp.host:smtp.port ...
 * await smtp.close();
 */
export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<SmtpServerHarness> {
  const host = options.host ?? '127.0.0.1';
  if (!host.startsWith('127.')) throw new Error(`harness hosts must be loopback addresses, got ${host}`);
  const mailboxes = new Map(
    Object.entries(options.mailboxes ?? {}).map(([key, value]) => [key.toLowerCase(), value] as const),
  );
  const greylisted = new Set<string>();
  const rcptCount = new Map<string, number>();
  const rcpts: string[] = [];
  const rcptClients: { recipient: string; client: string }[] = [];
  const firstSeen = new Map<string, number>();
  const senders: { address: string; smtpUtf8: boolean }[] = [];
  const open = new Set<string>();
  let connections = 0;
  let peak = 0;
  const smtpUtf8 = options.smtpUtf8 ?? true;

  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: options.startTls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    hideSTARTTLS: !options.startTls,
    hideSMTPUTF8: !smtpUtf8,
    closeTimeout: 50,
    onConnect(session: SMTPServerSession, callback: (err?: Error | null) => void) {
      connections += 1;
      open.add(session.id);
      peak = Math.max(peak, open.size);
      callback(options.greeting === undefined ? null : replyError(options.greeting));
    },
    onClose(session: SMTPServerSession) {
      open.delete(session.id);
    },
    onMailFrom(
      address: SMTPServerAddress,
      session: SMTPServerSession,
      callback: (err?: Error | null) => void,
    ) {
      const utf8 = session.envelope.smtpUtf8 === true;
      senders.push({ address: address.address, smtpUtf8: utf8 });
      if (utf8 && !smtpUtf8)
        return callback(replyError({ code: 555, message: '5.5.4 SMTPUTF8 not supported' }));
      callback(options.mailFromReply === undefined ? null : replyError(options.mailFromReply));
    },
    onRcptTo(address: SMTPServerAddress, session: SMTPServerSession, callback: (err?: Error | null) => void) {
      const recipient = address.address;
      rcpts.push(recipient);
      const client = session.remoteAddress.replace(/^::ffff:/, '');
      rcptClients.push({ recipient, client });
      const count = (rcptCount.get(session.id) ?? 0) + 1;
      rcptCount.set(session.id, count);
      if (options.closeAfterRcpts !== undefined && count > options.closeAfterRcpts) {
        return callback(replyError({ code: 421, message: '4.7.0 too many recipients, closing connection' }));
      }
      if (/[^\x00-\x7f]/.test(recipient) && session.envelope.smtpUtf8 !== true) {
        return callback(replyError({ code: 553, message: '5.6.7 SMTPUTF8 required for this address' }));
      }
      const key = recipient.toLowerCase();
      if (options.greylist && !greylisted.has(key)) {
        greylisted.add(key);
        return callback(
          replyError({ code: 450, message: '4.2.0 Recipient address rejected: Greylisted, try again later' }),
        );
      }
      if (options.greylistClientMs !== undefined) {
        const seenKey = `${client} ${key}`;
        const seen = firstSeen.get(seenKey);
        if (seen === undefined) firstSeen.set(seenKey, Date.now());
        if (seen === undefined || Date.now() - seen < options.greylistClientMs) {
          return callback(
            replyError({
              code: 450,
              message: '4.2.0 Recipient address rejected: Greylisted, try again later',
            }),
          );
        }
      }
      const behaviour = lookup(mailboxes, recipient) ?? (options.catchAll ? 'ok' : 'missing');
      if (behaviour === 'ok') return callback(null);
      callback(replyError(typeof behaviour === 'string' ? STATE_REPLIES[behaviour] : behaviour));
    },
  });
  server.on('error', () => {
    // A client that resets its connection is a normal event in these tests.
  });
  await listen(server, host, options.delayMs ? 0 : options.port);
  const smtpPort = (server.server.address() as { port: number }).port;

  const relaySockets = new Set<Socket>();
  const relay = options.delayMs ? delayingRelay(host, smtpPort, options.delayMs, relaySockets) : undefined;
  if (relay) await listen(relay, host, options.port);
  const port = relay ? (relay.address() as { port: number }).port : smtpPort;

  return {
    host,
    port,
    connections: () => connections,
    activeConnections: () => open.size,
    peakConnections: () => peak,
    rcpts: () => [...rcpts],
    rcptClients: () => rcptClients.map((entry) => ({ ...entry })),
    senders: () => senders.map((sender) => ({ ...sender })),
    async close() {
      for (const socket of relaySockets) socket.destroy();
      await Promise.all([
        new Promise<void>((resolve) => server.close(() => resolve())),
        relay ? new Promise<void>((resolve) => relay.close(() => resolve())) : undefined,
      ]);
    },
  };
}
