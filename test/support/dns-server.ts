/**
 * An authoritative DNS server for tests: dns2 on 127.0.0.1, UDP and TCP on the same random port (node:dns retries
 * over TCP when a big answer is truncated), serving a {@link Zone}. Reach it with
 * `nodeResolver({ servers: [server.address] })`.
 * @module
 */
import type { Socket } from 'node:net';
import dns2 from 'dns2';
import { compileZone, type Zone, type ZoneRecordType } from '../../src/testing/zone.js';

/** One question the server received. */
export interface DnsQuery {
  /** The queried name, as sent. */
  readonly name: string;
  /** `MX`, `A`, `AAAA`, `PTR`, `TXT`, or the numeric type for anything else. */
  readonly type: string;
  readonly transport: 'udp' | 'tcp';
}

/** A running test DNS server. */
export interface DnsTestServer {
  /** `127.0.0.1:PORT`, for `nodeResolver({ servers: [address] })`. */
  readonly address: string;
  readonly port: number;
  /** How many questions arrived so far (UDP and TCP). */
  queries(): number;
  /** Every question that arrived, in order. */
  readonly queryLog: readonly DnsQuery[];
  /** Stops both listeners. */
  close(): Promise<void>;
}

const TYPE = { A: 1, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28, OPT: 41 } as const;
const TYPE_NAMES = new Map<number, ZoneRecordType>([
  [TYPE.MX, 'MX'],
  [TYPE.A, 'A'],
  [TYPE.AAAA, 'AAAA'],
  [TYPE.PTR, 'PTR'],
  [TYPE.TXT, 'TXT'],
]);
const RCODE = { formerr: 1, servfail: 2, nxdomain: 3, refused: 5 } as const;
const UDP_MIN_PAYLOAD = 512;

/** A name in wire format (no compression); `''` is the root. */
function wireName(name: string): Buffer {
  const labels = name.split('.').filter((label) => label.length > 0);
  return Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'latin1')])),
    Buffer.from([0]),
  ]);
}

/** IPv6 text to 16 bytes, through the WHATWG URL parser (which also reads embedded dotted quads). */
function ipv6Bytes(address: string): Buffer {
  const canonical = new URL(`http://[${address}]/`).hostname.slice(1, -1);
  const [head = '', tail] = canonical.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = [
    ...headGroups,
    ...new Array(8 - headGroups.length - tailGroups.length).fill('0'),
    ...tailGroups,
  ];
  const bytes = Buffer.alloc(16);
  for (const [index, group] of groups.entries()) bytes.writeUInt16BE(Number.parseInt(group, 16), index * 2);
  return bytes;
}

/** TXT rdata: the text cut into character-strings of at most 255 bytes, each with its length byte. */
function txtData(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let start = 0; start < bytes.length || start === 0; start += 255) {
    const chunk = bytes.subarray(start, start + 255);
    parts.push(Buffer.from([chunk.length]), chunk);
    if (bytes.length === 0) break;
  }
  return Buffer.concat(parts);
}

function resourceRecord(name: string, type: number, ttl: number, rdata: Buffer): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2); // class IN
  fixed.writeUInt32BE(ttl, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([wireName(name), fixed, rdata]);
}

interface Question {
  readonly name: string;
  readonly type: number;
  readonly class: number;
}

/**
 * A response message. dns2's own encoder is quadratic in the message size (200 MX records take ~300 ms), so the
 * server writes its answers itself; dns2 only parses the questions and runs the sockets.
 */
function message(
  id: number,
  rd: number,
  rcode: number,
  question: Question | undefined,
  answers: Buffer[],
  tc = false,
) {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x8400 | (tc ? 0x0200 : 0) | ((rd & 1) << 8) | rcode, 2); // QR, AA
  header.writeUInt16BE(question === undefined ? 0 : 1, 4);
  header.writeUInt16BE(answers.length, 6);
  const parts: Buffer[] = [header];
  if (question !== undefined) {
    const tail = Buffer.alloc(4);
    tail.writeUInt16BE(question.type, 0);
    tail.writeUInt16BE(question.class, 2);
    parts.push(wireName(question.name), tail);
  }
  return Buffer.concat([...parts, ...answers]);
}

interface Request {
  readonly header: { readonly id: number; readonly rd: number };
  readonly questions: readonly Question[];
  readonly additionals: readonly { readonly type: number; readonly class: number }[];
}

type Handler = (request: Request, send: (response: Buffer) => unknown) => void;

/** Broken answers no sane server gives, for names outside the zone (see {@link startDnsServer}). */
export interface HostileAnswers {
  /** Names answered with the TC (truncated) bit and no records over UDP and over TCP alike. */
  readonly truncated?: readonly string[];
  /** CNAME records answered inline, with NOERROR and nothing else, for any type: `{ alias: target }` (loops allowed). */
  readonly inlineCnames?: Readonly<Record<string, string>>;
}

function hostileReply(
  hostile: HostileAnswers,
  request: Request,
  question: Question,
  send: (response: Buffer) => unknown,
): boolean {
  const name = question.name.toLowerCase().replace(/\.$/, '');
  if (hostile.truncated?.includes(name)) {
    send(message(request.header.id, request.header.rd, 0, question, [], true));
    return true;
  }
  const cnames = hostile.inlineCnames ?? {};
  if (cnames[name] === undefined) return false;
  const records: Buffer[] = [];
  const seen = new Set<string>();
  for (let alias = name; cnames[alias] !== undefined && !seen.has(alias); alias = cnames[alias]!) {
    seen.add(alias);
    records.push(resourceRecord(alias, TYPE.CNAME, 60, wireName(cnames[alias]!)));
  }
  send(message(request.header.id, request.header.rd, 0, question, records));
  return true;
}

function handlerFor(zone: Zone, log: DnsQuery[], transport: 'udp' | 'tcp', hostile: HostileAnswers): Handler {
  const compiled = compileZone(zone);
  return (request, send) => {
    const question = request.questions[0];
    if (question !== undefined && hostileReply(hostile, request, question, send)) {
      log.push({
        name: question.name,
        type: TYPE_NAMES.get(question.type) ?? String(question.type),
        transport,
      });
      return;
    }
    const reply = (rcode: number, answers: Buffer[] = []) => {
      const full = message(request.header.id, request.header.rd, rcode, question, answers);
      const opt = request.additionals.find((record) => record.type === TYPE.OPT);
      const limit = transport === 'tcp' ? 65_535 : Math.max(UDP_MIN_PAYLOAD, opt?.class ?? 0);
      send(
        full.length <= limit
          ? full
          : message(request.header.id, request.header.rd, rcode, question, [], true),
      );
    };
    if (question === undefined) {
      reply(RCODE.formerr);
      return;
    }
    const type = TYPE_NAMES.get(question.type);
    log.push({ name: question.name, type: type ?? String(question.type), transport });
    if (type === undefined) {
      reply(0); // a name we may know, a type we never hold: no data
      return;
    }
    const answer = compiled.answer(question.name, type);
    if (answer.kind === 'fail') {
      if (answer.failure !== 'timeout') reply(RCODE[answer.failure]);
      return;
    }
    const records = answer.aliases.map((alias) =>
      resourceRecord(alias.name, TYPE.CNAME, alias.ttl, wireName(alias.target)),
    );
    if (answer.kind === 'records') {
      for (const record of answer.mx) {
        const preference = Buffer.alloc(2);
        preference.writeUInt16BE(record.priority);
        records.push(
          resourceRecord(
            answer.owner,
            TYPE.MX,
            answer.ttl,
            Buffer.concat([preference, wireName(record.exchange)]),
          ),
        );
      }
      for (const target of answer.names) {
        records.push(resourceRecord(answer.owner, TYPE.PTR, answer.ttl, wireName(target)));
      }
      for (const text of answer.texts) {
        records.push(resourceRecord(answer.owner, TYPE.TXT, answer.ttl, txtData(text)));
      }
      for (const address of answer.addresses) {
        const rdata = type === 'A' ? Buffer.from(address.split('.').map(Number)) : ipv6Bytes(address);
        records.push(resourceRecord(answer.owner, type === 'A' ? TYPE.A : TYPE.AAAA, answer.ttl, rdata));
      }
    }
    reply(answer.kind === 'nxdomain' ? RCODE.nxdomain : 0, records);
  };
}

async function listenTogether(
  zone: Zone,
  log: DnsQuery[],
  hostile: HostileAnswers,
): Promise<{
  udp: ReturnType<typeof dns2.createUDPServer>;
  tcp: ReturnType<typeof dns2.createTCPServer>;
  sockets: Set<Socket>;
  port: number;
}> {
  for (let attempt = 0; ; attempt++) {
    const udp = dns2.createUDPServer(handlerFor(zone, log, 'udp', hostile) as never);
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve());
    });
    const port = udp.address().port;
    const tcp = dns2.createTCPServer(handlerFor(zone, log, 'tcp', hostile) as never);
    const sockets = new Set<Socket>();
    tcp.on('connection', (socket: Socket) => {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(port, '127.0.0.1', () => resolve());
      });
      return { udp, tcp, sockets, port };
    } catch (error) {
      udp.close();
      if (attempt >= 5) throw error;
    }
  }
}

/**
 * Starts a DNS server for `zone` on 127.0.0.1 (UDP and TCP, one random port). Names not in the zone answer
 * NXDOMAIN; an entry's `fail` answers SERVFAIL, REFUSED or NXDOMAIN, or never replies (`timeout`). `hostile`
 * names get broken answers (a truncated reply over TCP too, CNAME loops inline).
 * @example
 * const server = await startDnsServer({ 'example.com': { mx: [{ priority: 10, exchange: 'mx.example.com' }] } });
 * const resolver = nodeResolver({ servers: [server.address] });
 * await server.close();
 */
export async function startDnsServer(zone: Zone, hostile: HostileAnswers = {}): Promise<DnsTestServer> {
  const log: DnsQuery[] = [];
  const { udp, tcp, sockets, port } = await listenTogether(zone, log, hostile);
  let closed: Promise<void> | undefined;
  return {
    address: `127.0.0.1:${port}`,
    port,
    queries: () => log.length,
    queryLog: log,
    close() {
      closed ??= Promise.all([
        new Promise<void>((resolve) => udp.close(() => resolve())),
        new Promise<void>((resolve) => {
          tcp.close(() => resolve());
          // dns2 keeps idle TCP connections open for 10 s: end them so close() does not wait.
          for (const socket of sockets) socket.destroy();
        }),
      ]).then(() => undefined);
      return closed;
    },
  };
}
