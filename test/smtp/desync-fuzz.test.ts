/**
 * Desync fuzz (issue 28): scripted mail hosts that add lines no command asked for (in the reply's write, in a write
 * of their own right after it, or a few milliseconds later) or leave a command without a reply, against several
 * verifications in flight through the verifier's pool. Whatever the host does, no definitive verdict (valid or
 * invalid) may differ from what the host said for that address. Seeded, a fixed number of runs.
 *
 * One host connection either adds lines or drops replies, never both: a host that sends one line too many and later
 * one too few has, to any client, simply answered (see docs/smtp.md, "Replies in step").
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { staticResolver } from '../../src/testing/static-resolver.js';
import { createVerifier } from '../../src/verifier.js';
import { type RawPeer, type RawServerHarness, startRawServer } from '../support/raw-server.js';

type Extra = 'none' | 'same-write' | 'next-write' | 'late';

/** What one host connection does to its replies (to MAIL FROM, RCPT TO and RSET, counted in order). */
interface ConnectionPlan {
  readonly mode: 'adds' | 'drops';
  /** Per reply (cycled): the line added after it, and how. */
  readonly extras: readonly { readonly how: Extra; readonly line: string }[];
  /** Per RCPT TO reply (cycled): left out. */
  readonly drops: readonly boolean[];
}

/** One run: the host's behaviour and the addresses verified at once. */
interface Scenario {
  readonly pipelining: boolean;
  readonly perMx: 1 | 2;
  readonly connections: readonly ConnectionPlan[];
  /** Local parts: `okN` is accepted, `noN` refused with 550 5.1.1. */
  readonly locals: readonly string[];
}

const STRAY_LINES = ['250 2.1.5 ok', '550 5.1.1 no such user', '451 4.3.0 try again later'];

const extra = fc.record({
  how: fc.constantFrom<Extra>('none', 'none', 'same-write', 'next-write', 'late'),
  line: fc.constantFrom(...STRAY_LINES),
});
const connectionPlan: fc.Arbitrary<ConnectionPlan> = fc.record({
  mode: fc.constantFrom('adds', 'drops'),
  extras: fc.array(extra, { minLength: 1, maxLength: 6 }),
  drops: fc.array(fc.boolean(), { minLength: 1, maxLength: 6 }),
});
const scenario: fc.Arbitrary<Scenario> = fc.record({
  pipelining: fc.boolean(),
  perMx: fc.constantFrom(1 as const, 2 as const),
  connections: fc.array(connectionPlan, { minLength: 1, maxLength: 4 }),
  locals: fc
    .array(fc.boolean(), { minLength: 3, maxLength: 7 })
    .map((accepts) => accepts.map((ok, index) => `${ok ? 'ok' : 'no'}${index}`)),
});

/** The host of the current run: connections take the run's plans in turn, and answer plainly once they run out. */
let current: Scenario | undefined;
let connectionIndex = 0;

async function host(peer: RawPeer): Promise<void> {
  const run = current!;
  const plan = run.connections[connectionIndex++];
  await peer.write('220 mx.fuzz.test ESMTP\r\n');
  let replies = 0;
  for (let line = await peer.readLine(); line !== null; line = await peer.readLine()) {
    const verb = line.split(/[ :]/, 1)[0]!.toUpperCase();
    if (verb === 'EHLO') {
      await peer.write(run.pipelining ? '250-mx.fuzz.test\r\n250 PIPELINING\r\n' : '250 mx.fuzz.test\r\n');
      continue;
    }
    if (verb === 'QUIT') {
      await peer.write('221 2.0.0 bye\r\n');
      return;
    }
    if (verb !== 'MAIL' && verb !== 'RCPT' && verb !== 'RSET') {
      await peer.write('502 5.5.1 what\r\n');
      continue;
    }
    const reply =
      verb !== 'RCPT' ? '250 2.0.0 ok' : line.includes('<no') ? '550 5.1.1 no such user' : '250 2.1.5 ok';
    const index = replies++;
    if (plan?.mode === 'drops' && verb === 'RCPT' && plan.drops[index % plan.drops.length]) continue;
    const added = plan?.mode === 'adds' ? plan.extras[index % plan.extras.length]! : undefined;
    if (added?.how === 'same-write') {
      await peer.write(`${reply}\r\n${added.line}\r\n`);
      continue;
    }
    await peer.write(`${reply}\r\n`);
    if (added?.how === 'next-write') await peer.write(`${added.line}\r\n`);
    if (added?.how === 'late') setTimeout(() => void peer.write(`${added.line}\r\n`), 3);
  }
}

let server: RawServerHarness;
beforeAll(async () => {
  server = await startRawServer({ host: '127.0.0.7', script: host });
});
afterAll(async () => {
  await server.close();
});

describe('SMTP desync fuzz', () => {
  it('no definitive verdict ever differs from what the host said for that address', async () => {
    let verdicts = 0;
    let definitive = 0;
    await fc.assert(
      fc.asyncProperty(scenario, async (run) => {
        current = run;
        connectionIndex = 0;
        const verifier = createVerifier({
          resolver: staticResolver({ 'fuzz.test': { a: ['127.0.0.7'] } }),
          smtpPort: server.port,
          allowAddresses: ['127.0.0.0/8'],
          allowTlds: ['test'],
          heloHost: 'fuzz.mailvet-test.net',
          catchAll: false,
          perMxConcurrency: run.perMx,
          mxBackoffMs: 0,
          replyTimeoutMs: 300,
          timeoutMs: 4_000,
        });
        try {
          const results = await Promise.all(run.locals.map((local) => verifier.verify(`${local}@fuzz.test`)));
          verdicts += results.length;
          definitive += results.filter((result) => result.status !== 'unknown').length;
          for (const [index, local] of run.locals.entries()) {
            const said = local.startsWith('ok') ? 'valid' : 'invalid';
            expect([said, 'unknown'], `${local} (${JSON.stringify(run)})`).toContain(results[index]!.status);
          }
        } finally {
          await verifier.dispose();
        }
      }),
      { seed: 28, numRuns: 20, endOnFailure: true },
    );
    // Not vacuous: most addresses still get the host's answer (asked again alone when their session fell out of step).
    expect(definitive).toBeGreaterThan(verdicts / 2);
  }, 60_000);
});
