/**
 * One process per PGlite data directory: an exclusive lock held for the store's whole life, that the kernel
 * releases when the holding process dies (so a `kill -9` never leaves the directory locked).
 *
 * The lock is a listening local socket whose name is derived from the directory's identity (device and inode,
 * so every path to it, symlink or bind mount, names the same lock): on Linux an abstract Unix socket (no file;
 * the kernel frees the name with the process, and a second `listen` fails at once, race-free), on Windows a
 * named pipe (freed the same way), elsewhere a socket file in the temporary directory, removed when a connect
 * to it is refused (its holder died). The holder answers any connection with who it is (pid, host, since when),
 * so a second opener can name it.
 * @module
 */
import { createHash } from 'node:crypto';
import { unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { MailvetError } from '../errors.js';

/** Who holds a data directory, as the holder says. */
export interface DirectoryHolder {
  /** Process id of the holder. */
  readonly pid: number;
  /** Host name of the holder's machine. */
  readonly host: string;
  /** When the holder took the directory (ISO 8601). */
  readonly since: string;
}

/**
 * Thrown when a PGlite data directory is in use by another store, in this process or another (code
 * `store_locked`). `holder` names it, when it answered.
 */
export class StoreLockedError extends MailvetError {
  override name = 'StoreLockedError';
  /** The directory that is in use. */
  readonly dataDir: string;
  /** Who holds it; `undefined` when the holder did not say (it did not answer in time, or is not mailvet). */
  readonly holder: DirectoryHolder | undefined;

  constructor(dataDir: string, holder: DirectoryHolder | undefined) {
    const who =
      holder === undefined
        ? 'another process (it did not say which)'
        : `another mailvet (pid ${holder.pid} on ${holder.host}, since ${holder.since})`;
    super(
      'store_locked',
      `the data directory ${dataDir} is in use by ${who}: one process at a time may open it (stop the other first)`,
    );
    this.dataDir = dataDir;
    this.holder = holder;
  }
}

/** A held data directory lock. */
export interface DirectoryLock {
  /** Gives the lock up (the kernel also does when the process dies). */
  release(): Promise<void>;
}

/** How long a second opener waits for the holder to say who it is (it may be busy in a synchronous initdb). */
const HOLDER_ANSWER_MS = 3000;
/** Longest answer read from a holder. */
const MAX_ANSWER_BYTES = 1024;

/** The socket address of the lock of the directory with this device and inode, on this platform. */
export function lockAddress(
  device: number | bigint,
  inode: number | bigint,
  platform = process.platform,
): string {
  const key = createHash('sha256').update(`${device}:${inode}`).digest('hex').slice(0, 32);
  if (platform === 'linux') return `\0mailvet-store-${key}`;
  if (platform === 'win32') return `\\\\.\\pipe\\mailvet-store-${key}`;
  return join(tmpdir(), `mailvet-store-${key}.sock`);
}

/** `value` as a {@link DirectoryHolder}, or `undefined` when it is not one. */
export function parseHolder(text: string): DirectoryHolder | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { pid, host, since } = (value ?? {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(pid) || typeof host !== 'string' || typeof since !== 'string') return undefined;
  return { pid: pid as number, host: host.slice(0, 255), since: since.slice(0, 40) };
}

/** Listens on `address`; rejects with the listen error (EADDRINUSE when the lock is taken). */
function listen(address: string, holder: DirectoryHolder): Promise<Server> {
  const answer = `${JSON.stringify(holder)}\n`;
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.end(answer);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(address, () => {
      server.off('error', reject);
      server.unref(); // the lock never keeps the process alive
      resolve(server);
    });
  });
}

/**
 * Asks the holder at `address` who it is. Resolves `{ refused: true }` when nothing listens there (a socket file
 * left by a dead holder), else what it said (`holder` undefined when it said nothing usable in time).
 */
function askHolder(address: string): Promise<{ refused: boolean; holder?: DirectoryHolder }> {
  return new Promise((resolve) => {
    let text = '';
    let connected = false;
    const socket = createConnection(address);
    const done = (result: { refused: boolean; holder?: DirectoryHolder }) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ refused: false }), HOLDER_ANSWER_MS);
    socket.on('connect', () => {
      connected = true;
    });
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (text.length > MAX_ANSWER_BYTES) done({ refused: false });
    });
    socket.on('end', () => {
      const holder = parseHolder(text.trim());
      done(holder === undefined ? { refused: false } : { refused: false, holder });
    });
    socket.on('error', (error: NodeJS.ErrnoException) => {
      done({ refused: !connected && (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') });
    });
  });
}

/**
 * Takes the lock of the existing directory `dataDir` (whose device and inode are given), or throws
 * {@link StoreLockedError} naming the holder. Call it before anything reads or writes the directory. `platform`
 * picks the kind of socket ({@link lockAddress}); tests pass another one to run the socket-file kind on Linux.
 */
export async function lockDataDir(
  dataDir: string,
  identity: { readonly dev: number | bigint; readonly ino: number | bigint },
  platform: NodeJS.Platform = process.platform,
): Promise<DirectoryLock> {
  const address = lockAddress(identity.dev, identity.ino, platform);
  const holder: DirectoryHolder = { pid: process.pid, host: hostname(), since: new Date().toISOString() };
  const socketFile = !address.startsWith('\0') && !address.startsWith('\\\\');
  for (let attempt = 0; ; attempt++) {
    try {
      const server = await listen(address, holder);
      return {
        release: () => new Promise<void>((resolve) => server.close(() => resolve())),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
    const answer = await askHolder(address);
    if (answer.refused && socketFile && attempt === 0) {
      await unlink(address).catch(() => {}); // left by a holder that died; listen again, once
      continue;
    }
    throw new StoreLockedError(dataDir, answer.holder);
  }
}
