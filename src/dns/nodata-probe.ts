/**
 * A second look at a "no records" answer. node:dns (c-ares) reports a reply that was truncated even over TCP, and
 * an answer made only of CNAME records that loop, as "no data", the same as a name that really has no records.
 * This asks the name server once more over TCP itself and reads the reply's header and CNAME records.
 * @module
 */
import { connect } from 'node:net';

/** What the second look found. */
export type NoDataVerdict = 'nodata' | 'truncated' | 'cname_loop';

/** A name server as node:dns lists it (`ip`, `ip:port`, `[ipv6]:port`). */
export interface NameServer {
  readonly host: string;
  readonly port: number;
}

/** Most CNAME hops before a chain counts as a loop (as the test zone and common resolvers). */
const MAX_HOPS = 8;
const TYPE_CNAME = 5;
/** Largest DNS message over TCP. */
const MAX_MESSAGE = 65_535;

/** Reads `ip`, `ip:port` or `[ipv6]:port` as node:dns `getServers()` lists them. */
export function parseNameServer(text: string): NameServer | undefined {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracketed !== null) return { host: bracketed[1]!, port: Number(bracketed[2] ?? 53) };
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?$/.exec(text);
  if (v4 !== null) return { host: v4[1]!, port: Number(v4[2] ?? 53) };
  if (text.includes(':')) return { host: text, port: 53 }; // a bare IPv6 address
  return undefined;
}

/** The query message (no length prefix): recursion desired, one question of `type`, class IN. */
function query(id: number, name: string, type: number): Buffer {
  const labels = name
    .replace(/\.$/, '')
    .split('.')
    .filter((label) => label !== '');
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2); // RD
  header.writeUInt16BE(1, 4);
  const question = Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'latin1')])),
    Buffer.from([0, type >> 8, type & 0xff, 0, 1]),
  ]);
  return Buffer.concat([header, question]);
}

/** Reads a (possibly compressed) name at `offset`; returns it lower-cased and the offset after it. */
function readName(message: Buffer, offset: number): { name: string; next: number } {
  const labels: string[] = [];
  let at = offset;
  let next = -1;
  for (let jumps = 0; ; ) {
    if (at >= message.length) throw new RangeError('name past the end');
    const length = message[at]!;
    if (length === 0) {
      if (next < 0) next = at + 1;
      break;
    }
    if ((length & 0xc0) === 0xc0) {
      if (at + 1 >= message.length || ++jumps > 64) throw new RangeError('bad compression pointer');
      if (next < 0) next = at + 2;
      at = ((length & 0x3f) << 8) | message[at + 1]!;
      continue;
    }
    if (at + 1 + length > message.length) throw new RangeError('label past the end');
    labels.push(message.toString('latin1', at + 1, at + 1 + length).toLowerCase());
    at += 1 + length;
  }
  return { name: labels.join('.'), next };
}

/** Judges a reply to the query for `name`: truncated, a CNAME loop among its answers, or plain no data. */
export function judgeReply(message: Buffer, name: string): NoDataVerdict {
  if (message.length < 12) return 'nodata';
  if ((message.readUInt16BE(2) & 0x0200) !== 0) return 'truncated';
  const questions = message.readUInt16BE(4);
  const answers = message.readUInt16BE(6);
  const aliases = new Map<string, string>();
  try {
    let at = 12;
    for (let i = 0; i < questions; i++) at = readName(message, at).next + 4;
    for (let i = 0; i < answers; i++) {
      const owner = readName(message, at);
      at = owner.next;
      if (at + 10 > message.length) break;
      const type = message.readUInt16BE(at);
      const length = message.readUInt16BE(at + 8);
      if (type === TYPE_CNAME) aliases.set(owner.name, readName(message, at + 10).name);
      at += 10 + length;
    }
  } catch {
    // A reply we cannot read to the end: judge by the aliases read so far.
  }
  let current = name.replace(/\.$/, '').toLowerCase();
  for (let hops = 0; aliases.has(current); hops++) {
    if (hops >= MAX_HOPS) return 'cname_loop';
    current = aliases.get(current)!;
  }
  return 'nodata';
}

/**
 * Asks `server` over TCP for `type` records of `name` and judges the reply (see {@link judgeReply}). Resolves
 * `nodata` when the server cannot be asked or answers nothing readable in time: the first answer stands.
 */
export function probeNoData(
  server: NameServer,
  name: string,
  type: number,
  timeoutMs: number,
): Promise<NoDataVerdict> {
  return new Promise((resolve) => {
    // Web Crypto, not node:crypto: that module would load at every start for a probe that most runs never send.
    const id = globalThis.crypto.getRandomValues(new Uint16Array(1))[0] ?? 0;
    const body = query(id, name, type);
    const prefix = Buffer.alloc(2);
    prefix.writeUInt16BE(body.length);
    const socket = connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    const finish = (verdict: NoDataVerdict) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(verdict);
    };
    const timer = setTimeout(() => finish('nodata'), timeoutMs);
    socket.on('error', () => finish('nodata'));
    socket.on('close', () => finish('nodata'));
    socket.on('connect', () => socket.write(Buffer.concat([prefix, body])));
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > MAX_MESSAGE + 2) return finish('nodata');
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) return;
      const message = received.subarray(2, 2 + received.readUInt16BE(0));
      finish(message.length >= 2 && message.readUInt16BE(0) === id ? judgeReply(message, name) : 'nodata');
    });
  });
}
