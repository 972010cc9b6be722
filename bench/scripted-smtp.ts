/**
 * Scripted mail hosts for the network benchmark: each answers its greeting `delayMs` after the connection,
 * and every round of commands (one command, or an RFC 2920 pipelined group that arrived together) `delayMs`
 * after it arrived, all replies of a round in one send, in a child process of its own so that
 * the servers' work does not slow the verifier's event loop (real mail servers run elsewhere, too).
 * @module
 */
import { type ChildProcess, fork } from 'node:child_process';
import { startRawServer } from '../test/support/raw-server.js';

/** Local parts are `user<N>`; 7 in 10 exist. */
export function mailboxExists(index: number): boolean {
  return index % 10 < 7;
}

/** The answer of a mail host to `RCPT TO:<userN@...>`. */
function rcptReply(line: string, catchAll: boolean): string {
  const index = /^RCPT TO:<user(\d+)@/i.exec(line)?.[1];
  return catchAll || (index !== undefined && mailboxExists(Number(index)))
    ? '250 2.1.5 ok'
    : '550 5.1.1 user unknown';
}

/** What one scripted host is. */
export interface ScriptedHostSpec {
  /** Loopback address to listen on. */
  readonly host: string;
  /** Accept every recipient. */
  readonly catchAll: boolean;
}

/** Counters of a scripted host. */
export interface ScriptedHostCounters {
  readonly connections: number;
  readonly rcpts: number;
}

/** A scripted host running in this process. */
export interface ScriptedHost {
  readonly host: string;
  readonly port: number;
  counters(): ScriptedHostCounters;
  close(): Promise<void>;
}

/**
 * Starts one scripted host in this process. Like a real server's command loop, it takes every command that has
 * arrived (one, or a whole RFC 2920 pipelined group), works `delayMs`, then writes all their replies in order
 * in one send; commands that arrive while it works wait for the next round.
 */
export async function startScriptedHost(spec: ScriptedHostSpec, delayMs: number): Promise<ScriptedHost> {
  let rcpts = 0;
  const answer = (line: string): string => {
    const verb = line.slice(0, 4).toUpperCase();
    if (verb === 'EHLO') return '250-mx.bench.test\r\n250-PIPELINING\r\n250 ENHANCEDSTATUSCODES';
    if (verb === 'RCPT') {
      rcpts += 1;
      return rcptReply(line, spec.catchAll);
    }
    if (verb === 'QUIT') return '221 2.0.0 bye';
    if (verb === 'MAIL' || verb === 'RSET' || verb === 'NOOP') return '250 2.0.0 ok';
    return '502 5.5.1 command not recognized';
  };
  const server = await startRawServer({
    host: spec.host,
    async script(peer) {
      await peer.sleep(delayMs);
      await peer.write('220 mx.bench.test ESMTP\r\n');
      for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
        const group = [line];
        while (peer.buffered() > 0) group.push((await peer.readLine())!);
        const replies = group.map(answer);
        await peer.sleep(delayMs);
        await peer.write(replies.map((reply) => `${reply}\r\n`).join(''));
        if (group.some((command) => /^QUIT/i.test(command))) return;
      }
    },
  });
  return {
    host: spec.host,
    port: server.port,
    counters: () => ({ connections: server.connections(), rcpts }),
    close: () => server.close(),
  };
}

/** Scripted hosts running in a child process. */
export interface ScriptedHostsProcess {
  /** Port of each host, by address. */
  readonly ports: Readonly<Record<string, number>>;
  /** Counters of each host, in the order of the specs. */
  counters(): Promise<ScriptedHostCounters[]>;
  close(): Promise<void>;
}

type ChildMessage =
  | { readonly kind: 'ready'; readonly ports: Record<string, number> }
  | { readonly kind: 'counters'; readonly counters: ScriptedHostCounters[] };

function next(child: ChildProcess, kind: ChildMessage['kind']): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: ChildMessage) => {
      if (message.kind !== kind) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null) => reject(new Error(`scripted SMTP hosts exited (${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Starts scripted hosts in a child process (bench/scripted-smtp-child.ts). */
export async function startScriptedHosts(
  specs: readonly ScriptedHostSpec[],
  delayMs: number,
): Promise<ScriptedHostsProcess> {
  const child = fork(
    new URL('./scripted-smtp-child.ts', import.meta.url),
    [JSON.stringify({ specs, delayMs })],
    {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const ready = await next(child, 'ready');
  if (ready.kind !== 'ready') throw new Error('unexpected message');
  return {
    ports: ready.ports,
    async counters() {
      const answer = next(child, 'counters');
      child.send('counters');
      const message = await answer;
      return message.kind === 'counters' ? message.counters : [];
    },
    async close() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send('close');
      await exited;
    },
  };
}
