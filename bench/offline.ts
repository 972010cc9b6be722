/**
 * Offline throughput of `verify` (syntax, typo, lists; no DNS, no SMTP) against what a team would hand-roll:
 * validator's isEmail + mailcheck + a disposable-list lookup. Same addresses, same process, one core.
 *
 *   npx tsx bench/offline.ts [count]
 */
import { createRequire } from 'node:module';
import validator from 'validator';
import { createVerifier, verify } from '../src/verifier.js';
import { addressMix } from './mix.js';

const require = createRequire(import.meta.url);
const Mailcheck = require('mailcheck') as {
  suggest(email: string, domains: string[], sld: string[], tld: string[]): { full: string } | false;
  defaultDomains: string[];
  defaultSecondLevelDomains: string[];
  defaultTopLevelDomains: string[];
};
const disposable = (require('mailchecker') as { blacklist(): Set<string> }).blacklist();

const count = Number(process.argv[2] ?? 100_000);
const emails = addressMix(count);
const verifier = createVerifier({ dns: false, smtp: false });

async function mailvetPass(): Promise<number> {
  let unknown = 0;
  for (const email of emails) {
    const result = await verifier.verify(email);
    if (result.status === 'unknown') unknown++;
  }
  return unknown;
}

async function handRolledPass(): Promise<number> {
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
}

async function measure(name: string, pass: () => Promise<number>, size = count): Promise<number> {
  await pass(); // warm-up: JIT, lazy list loading, caches
  const rounds = 3;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < rounds; i++) {
    const start = process.hrtime.bigint();
    await pass();
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
  }
  const rate = size / best;
  console.log(
    `${name.padEnd(44)} ${Math.round(rate).toLocaleString('en-US').padStart(10)} addresses/s  (best of ${rounds}, ${best.toFixed(3)} s)`,
  );
  return rate;
}

console.log(
  `offline verify, ${count.toLocaleString('en-US')} generated addresses, one core (node ${process.version})`,
);
const ours = await measure('mailvet verify({ dns: false, smtp: false })', mailvetPass);
const theirs = await measure('validator.isEmail + mailcheck + disposable Set', handRolledPass);
console.log(
  `ratio mailvet / hand-rolled: ${(ours / theirs).toFixed(2)}x   (target: >= 200,000 addresses/s and > 1x)`,
);
// One-shot calls with options make (and dispose of) a verifier each: what a caller of the top-level
// verify(email, options) pays per address. Measured on a tenth of the list.
const oneShot = emails.slice(0, Math.max(1, Math.floor(count / 10)));
await measure(
  `verify(email, { dns: false }), one-shot x${oneShot.length}`,
  async () => {
    let unknown = 0;
    for (const email of oneShot)
      if ((await verify(email, { dns: false, smtp: false })).status === 'unknown') unknown++;
    return unknown;
  },
  oneShot.length,
);
console.log('reproduce: npx tsx bench/offline.ts 100000');
await verifier.dispose();
