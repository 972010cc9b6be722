/**
 * The cost of mailvet's OpenTelemetry spans on offline `verify` (issue 29: "no-op unless the application registers
 * an SDK"): this checkout against another commit (`--against=<ref>`, default `main`), both compiled with tsc
 * (bench/compile.ts), the same addresses, in interleaved rounds (alternating which goes first) after a warm-up,
 * medians with min-max spreads. Three phases: no SDK registered (the goal: the same speed as before); an SDK whose
 * sampler drops every trace (one unrecorded span per verification); an SDK recording every span (to a processor
 * that drops them: the cost of the spans themselves, not of an exporter).
 *
 *   npx tsx bench/trace-cost.ts [rounds, default 9] [--against=<ref>]
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { trace } from '@opentelemetry/api';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  NoopSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { buildCheckout, buildRef, type Code } from './compile.js';
import { addressMix } from './mix.js';

interface VerifierLike {
  verify(email: string): Promise<unknown>;
  dispose(): Promise<void>;
}

type Pass = (emails: readonly string[]) => Promise<void>;

async function passOf(code: Code): Promise<Pass> {
  const module = (await import(pathToFileURL(join(code.dir, 'verifier.js')).href)) as {
    createVerifier(options: object): VerifierLike;
  };
  const verifier = module.createVerifier({ dns: false, smtp: false });
  return async (emails) => {
    for (const email of emails) await verifier.verify(email);
  };
}

async function seconds(pass: Pass, emails: readonly string[]): Promise<number> {
  const start = process.hrtime.bigint();
  await pass(emails);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const rate = (n: number) => Math.round(n).toLocaleString('en-US').padStart(9);
const range = (values: readonly number[], digits: number) =>
  `[${Math.min(...values).toFixed(digits)} - ${Math.max(...values).toFixed(digits)}]`;

async function phase(
  name: string,
  before: Pass,
  after: Pass,
  emails: readonly string[],
  rounds: number,
  label: string,
) {
  await before(emails);
  await after(emails);
  const a: number[] = [];
  const b: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let old: number;
    let now: number;
    if (round % 2 === 0) {
      old = await seconds(before, emails);
      now = await seconds(after, emails);
    } else {
      now = await seconds(after, emails);
      old = await seconds(before, emails);
    }
    a.push(emails.length / old);
    b.push(emails.length / now);
    ratios.push(old / now);
  }
  console.log(`\n${name}`);
  console.log(
    `  ${label.padEnd(26)} ${rate(median(a))} addresses/s  [${rate(Math.min(...a))} - ${rate(Math.max(...a))}]`,
  );
  console.log(
    `  ${'this checkout'.padEnd(26)} ${rate(median(b))} addresses/s  [${rate(Math.min(...b))} - ${rate(Math.max(...b))}]`,
  );
  console.log(
    `  this checkout / ${label}: median ${median(ratios).toFixed(3)}x ${range(ratios, 3)} over ${rounds} rounds`,
  );
}

const positional = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const rounds = Number(positional[0] ?? 9);
if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('rounds must be a positive integer');
const against =
  process.argv.find((arg) => arg.startsWith('--against='))?.slice('--against='.length) ?? 'main';
const made: string[] = [];
try {
  const before = await passOf(buildRef(against, made));
  const after = await passOf(buildCheckout(made));
  const emails = addressMix(20_000, 42, 50);
  console.log(
    `offline verify, ${emails.length.toLocaleString('en-US')} addresses, node ${process.version}: this checkout against ${against}`,
  );
  await phase('no SDK registered', before, after, emails, rounds, against);
  const dropping = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
  trace.setGlobalTracerProvider(dropping);
  await phase('an SDK registered, its sampler dropping every trace', before, after, emails, rounds, against);
  trace.disable();
  const recording = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    spanProcessors: [new NoopSpanProcessor()],
  });
  trace.setGlobalTracerProvider(recording);
  await phase('an SDK recording every span (no exporter)', before, after, emails, rounds, against);
  trace.disable();
} finally {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
}
console.log(`reproduce: npx tsx bench/trace-cost.ts ${rounds} --against=${against}`);
