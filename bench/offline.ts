/**
 * Offline throughput of `verify` (syntax, typo, lists; no DNS, no SMTP) against what a team would hand-roll:
 * validator's isEmail + mailcheck + a disposable-list lookup. Same addresses, same process, one core. Each
 * workload runs both sides in interleaved rounds (alternating which goes first) after a warm-up, and reports
 * medians with the min-max spread, so neither side profits from the other's JIT or cache state.
 *
 *   npx tsx bench/offline.ts [rounds]
 */
import { createRequire } from 'node:module';
import validator from 'validator';
import { createVerifier, verify } from '../src/verifier.js';
import { addressMix, spreadMix } from './mix.js';

const require = createRequire(import.meta.url);
const Mailcheck = require('mailcheck') as {
  suggest(email: string, domains: string[], sld: string[], tld: string[]): { full: string } | false;
  defaultDomains: string[];
  defaultSecondLevelDomains: string[];
  defaultTopLevelDomains: string[];
};
const disposable = (require('mailchecker') as { blacklist(): Set<string> }).blacklist();

const rounds = Math.max(5, Number(process.argv[2] ?? 5));

type Pass = (emails: readonly string[]) => Promise<number>;

/** A fresh verifier per workload, so that one workload's caches do not serve the next. */
function mailvetPass(): Pass {
  const verifier = createVerifier({ dns: false, smtp: false });
  return async (emails) => {
    let unknown = 0;
    for (const email of emails) {
      const result = await verifier.verify(email);
      if (result.status === 'unknown') unknown++;
    }
    return unknown;
  };
}

const handRolledPass: Pass = async (emails) => {
  let ok = 0;
  for (const email of emails) {
    // An async function per address, as a service would have: the same await cost as verify().
    const result = await (async () => {
      const valid = validator.isEmail(email);
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      const suggestion = valid
        ? Mailcheck.suggest(
            email,
            Mailcheck.defaultDomains,
            Mailcheck.defaultSecondLevelDomains,
            Mailcheck.defaultTopLevelDomains,
          )
        : false;
      return { valid, disposable: disposable.has(domain), suggestion: suggestion ? suggestion.full : null };
    })();
    if (result.valid && !result.disposable) ok++;
  }
  return ok;
};

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

async function workload(name: string, emails: readonly string[]): Promise<void> {
  const ours = mailvetPass();
  await ours(emails); // warm-up: JIT, lazy list loading
  await handRolledPass(emails);
  const mine: number[] = [];
  const theirs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let a: number;
    let b: number;
    if (round % 2 === 0) {
      a = await seconds(ours, emails);
      b = await seconds(handRolledPass, emails);
    } else {
      b = await seconds(handRolledPass, emails);
      a = await seconds(ours, emails);
    }
    mine.push(emails.length / a);
    theirs.push(emails.length / b);
    ratios.push(b / a);
  }
  const distinct = new Set(emails.map((email) => email.slice(email.lastIndexOf('@') + 1))).size;
  console.log(
    `\n${name}: ${emails.length.toLocaleString('en-US')} addresses, ${distinct.toLocaleString('en-US')} distinct domains`,
  );
  console.log(
    `  mailvet verify({ dns: false, smtp: false })      ${rate(median(mine))} addresses/s  [${rate(Math.min(...mine))} - ${rate(Math.max(...mine))}]`,
  );
  console.log(
    `  validator.isEmail + mailcheck + disposable Set   ${rate(median(theirs))} addresses/s  [${rate(Math.min(...theirs))} - ${rate(Math.max(...theirs))}]`,
  );
  console.log(
    `  ratio mailvet / hand-rolled: median ${median(ratios).toFixed(2)}x  [${Math.min(...ratios).toFixed(2)} - ${Math.max(...ratios).toFixed(2)}] over ${rounds} interleaved rounds (goal >= 5x)`,
  );
}

console.log(`offline verify against a hand-rolled stack, one core (node ${process.version})`);
await workload('mix, small domain list', addressMix(10_000, 42, 50));
await workload('mix, the 20k-domain list', addressMix(100_000));
await workload('spread', spreadMix(100_000, 50_000));

// One-shot calls with options make (and dispose of) a verifier each: what a caller of the top-level
// verify(email, options) pays per address.
const oneShot = addressMix(2_000);
const start = process.hrtime.bigint();
for (const email of oneShot) await verify(email, { dns: false, smtp: false });
const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
console.log(
  `\nverify(email, { dns: false }) one-shot x${oneShot.length}: ${rate(oneShot.length / elapsed)} addresses/s`,
);
console.log(`reproduce: npx tsx bench/offline.ts ${rounds}`);
