/**
 * Typo-suggestion accuracy, mailvet beside mailcheck, on these sets (test/support/typo-sets.ts):
 * - generated 1-edit typos of the top providers (deletion, adjacent transposition, QWERTY-neighbour
 *   substitution, doubled letter, TLD slip), minus variants that are real domains: exact fixes, wrong fixes;
 * - real free-mail domains held out of mailvet's protection (email-providers all.json, which mailvet's lists
 *   protect; the suggester here is built without that protection, so it sees them as it would see real
 *   domains its data never used): every suggestion there is a false correction;
 * - slips of punctuation and ending over 40 providers (`user@gmail.com.`, `user@gmail`, `user@gmailcom`,
 *   `user@gmail,com`, `user@gmail com`, `user@hotmail.c`), and suffix slips onto another real suffix over 40
 *   providers of one country (`user@shaw.cz`): whole addresses through `verify()`, as a user gets them;
 * - the secondary targets (the free list's providers under a country suffix) held out in two folds, and
 *   one-edit typos of 40 of them (`user@gazeta.pk`);
 * - every real domain of the built-in lists (the free list, the protected domains, the targets, email-providers
 *   common.json) through `verify()`: every suggestion there is a false correction.
 *
 *   npx tsx bench/typo.ts
 */
import { createRequire } from 'node:module';
import { domains as freeText } from '../src/data/generated/free.js';
import { typoData } from '../src/data/typo.js';
import { createDomainSuggester } from '../src/typo/suggest.js';
import { verify } from '../src/verifier.js';
import {
  FREE_TARGET_PROVIDERS,
  ONE_EDIT_PROVIDERS,
  oneEditTyposOf,
  SINGLE_COUNTRY_PROVIDERS,
  SLIP_KINDS,
  SLIP_PROVIDERS,
  splitDomain,
  suffixSlipsOf,
} from '../test/support/typo-sets.js';

const require = createRequire(import.meta.url);
const Mailcheck = require('mailcheck') as {
  suggest(email: string, domains: string[], sld: string[], tld: string[]): { domain: string } | false;
  defaultDomains: string[];
  defaultSecondLevelDomains: string[];
  defaultTopLevelDomains: string[];
};
const realDomains = new Set<string>(require('email-providers/all.json') as string[]);
const commonDomains = require('email-providers/common.json') as string[];
const PROVIDERS = ONE_EDIT_PROVIDERS;

const data = typoData();
const unprotected = data.protected.filter((domain) => !realDomains.has(domain));
/** The held-out suggester: neither the free list's protection nor the secondary targets drawn from it. */
const withoutFreeProtection = createDomainSuggester({
  ...data,
  secondaryDomains: [],
  protected: unprotected,
});
const mailcheck = (domain: string): string | null => {
  const answer = Mailcheck.suggest(
    `x@${domain}`,
    Mailcheck.defaultDomains,
    Mailcheck.defaultSecondLevelDomains,
    Mailcheck.defaultTopLevelDomains,
  );
  return answer === false ? null : answer.domain;
};
const engines: [string, (domain: string) => string | null][] = [
  ['mailvet', (domain) => withoutFreeProtection.suggest(domain)],
  ['mailcheck', mailcheck],
];

const generated = new Map<string, [string, string]>();
for (const provider of PROVIDERS) {
  for (const [typo, kind] of oneEditTyposOf(provider)) {
    if (typo === provider || realDomains.has(typo) || PROVIDERS.includes(typo) || generated.has(typo))
      continue;
    generated.set(typo, [provider, kind]);
  }
}
const held = [...realDomains].filter(
  (domain) => !PROVIDERS.includes(domain) && !data.domains.includes(domain),
);

console.log(
  `typo suggestions, ${generated.size} generated typos of ${PROVIDERS.length} providers, ${held.length} held-out real domains`,
);
console.log('engine     exact fixes  wrong fixes  no answer   | false corrections of real domains');
for (const [name, suggest] of engines) {
  let exact = 0;
  let wrong = 0;
  let none = 0;
  const byKind = new Map<string, [number, number]>();
  for (const [typo, [intended, kind]] of generated) {
    const answer = suggest(typo);
    const tally = byKind.get(kind) ?? [0, 0];
    tally[1]++;
    if (answer === intended) {
      exact++;
      tally[0]++;
    } else if (answer === null) none++;
    else wrong++;
    byKind.set(kind, tally);
  }
  const falses = held.filter((domain) => suggest(domain) !== null);
  console.log(
    `${name.padEnd(10)} ${String(exact).padStart(11)}  ${String(wrong).padStart(11)}  ${String(none).padStart(9)}   | ${falses.length} (e.g. ${falses
      .slice(0, 4)
      .map((domain) => `${domain} -> ${suggest(domain)}`)
      .join(', ')})`,
  );
  console.log(
    `           exact by kind: ${[...byKind].map(([kind, [hit, all]]) => `${kind} ${hit}/${all}`).join(', ')}`,
  );
}

/** What each engine suggests for a whole address, or `null`. */
const addressEngines: [string, (address: string) => Promise<string | null>][] = [
  ['mailvet', async (address) => (await verify(address, { dns: false, smtp: false })).did_you_mean],
  [
    'mailcheck',
    async (address) => {
      const answer = Mailcheck.suggest(
        address,
        Mailcheck.defaultDomains,
        Mailcheck.defaultSecondLevelDomains,
        Mailcheck.defaultTopLevelDomains,
      ) as { full: string } | false;
      return answer === false ? null : answer.full;
    },
  ],
];

/**
 * The secondary targets (the free list's country providers) held out in two folds: a suggester with half of
 * them meets the other half, and every other held-out domain, as real domains it never saw.
 */
function secondaryHeldOut(withSecondary: boolean): { tested: number; corrected: string[] } {
  const corrected: string[] = [];
  let tested = 0;
  for (const fold of [0, 1]) {
    const inUse = data.secondaryDomains.filter((_, i) => i % 2 !== fold);
    const inUseSet = new Set(inUse);
    const suggester = createDomainSuggester({
      ...data,
      secondaryDomains: withSecondary ? inUse : [],
      protected: unprotected,
    });
    for (const domain of held) {
      if (inUseSet.has(domain)) continue;
      tested++;
      const answer = suggester.suggest(domain);
      if (answer !== null) corrected.push(`${domain} -> ${answer}`);
    }
  }
  return { tested, corrected };
}
const heldWith = secondaryHeldOut(true);
const heldWithout = secondaryHeldOut(false);
const added = heldWith.corrected.filter((line) => !heldWithout.corrected.includes(line));
console.log(
  `\nsecondary targets (${data.secondaryDomains.length} free providers under a country suffix) held out in 2 folds, ` +
    `${heldWith.tested} domain tests: false corrections ${heldWithout.corrected.length} without them, ` +
    `${heldWith.corrected.length} with them${added.length > 0 ? ` (new: ${added.slice(0, 6).join(', ')})` : ''}`,
);

const freeTyposByProvider = FREE_TARGET_PROVIDERS.map((provider) => ({
  provider,
  typos: oneEditTyposOf(provider)
    .map(([typo]) => typo)
    .filter((typo, i, all) => all.indexOf(typo) === i && !realDomains.has(typo) && typo !== provider),
}));
const freeTypoCount = freeTyposByProvider.reduce((sum, { typos }) => sum + typos.length, 0);
console.log(
  `\none-edit typos of ${FREE_TARGET_PROVIDERS.length} free providers under a country suffix (user@gazeta.pk), ${freeTypoCount} typos`,
);
for (const [engine, suggest] of addressEngines) {
  let fixed = 0;
  for (const { provider, typos } of freeTyposByProvider) {
    for (const typo of typos) if ((await suggest(`user@${typo}`)) === `user@${provider}`) fixed++;
  }
  console.log(`${engine.padEnd(10)} ${fixed}/${freeTypoCount} fixed`);
}

const known = new Set([...freeText.split('\n'), ...data.protected, ...data.domains]);
const isReal = (domain: string): boolean => known.has(domain) || realDomains.has(domain);
const suffixSlips = SINGLE_COUNTRY_PROVIDERS.map((provider) => ({
  provider,
  slips: suffixSlipsOf(provider, isReal),
}));
const slipCount = suffixSlips.reduce((sum, { slips }) => sum + slips.length, 0);
console.log(
  `\nslips over ${SLIP_PROVIDERS.length} providers (user@<slip>, through verify() for mailvet): providers fixed`,
);
console.log(`kind               ${addressEngines.map(([name]) => name.padStart(10)).join('')}`);
const rows = Object.entries(SLIP_KINDS).map(([kind, slip]) => ({ kind, slip, cells: [] as string[] }));
for (const [, suggest] of addressEngines) {
  for (const { slip, cells } of rows) {
    let fixed = 0;
    for (const provider of SLIP_PROVIDERS) {
      const { name, suffix } = splitDomain(provider);
      if ((await suggest(`user@${slip(name, suffix)}`)) === `user@${provider}`) fixed++;
    }
    cells.push(`${fixed}/${SLIP_PROVIDERS.length}`);
  }
}
for (const { kind, cells } of rows)
  console.log(`${kind.padEnd(18)} ${cells.map((c) => c.padStart(10)).join('')}`);

console.log(
  `\nsuffix slips onto another real suffix, ${slipCount} slips of ${SINGLE_COUNTRY_PROVIDERS.length} providers of one country (user@shaw.cz)`,
);
for (const [engine, suggest] of addressEngines) {
  let fixedSlips = 0;
  let fixedProviders = 0;
  const missed: string[] = [];
  for (const { provider, slips } of suffixSlips) {
    let all = true;
    for (const slip of slips) {
      if ((await suggest(`user@${slip}`)) === `user@${provider}`) fixedSlips++;
      else {
        all = false;
        missed.push(slip);
      }
    }
    if (all) fixedProviders++;
  }
  console.log(
    `${engine.padEnd(10)} ${fixedSlips}/${slipCount} slips, every slip fixed for ${fixedProviders}/${SINGLE_COUNTRY_PROVIDERS.length} providers${
      missed.length > 0 ? ` (missed e.g. ${missed.slice(0, 5).join(', ')})` : ''
    }`,
  );
}

const realSet = [...new Set([...known, ...commonDomains])];
let corrected = 0;
const examples: string[] = [];
for (const domain of realSet) {
  const suggestion = (await verify(`user@${domain}`, { dns: false, smtp: false })).did_you_mean;
  if (suggestion === null) continue;
  corrected++;
  if (examples.length < 4) examples.push(`${domain} -> ${suggestion}`);
}
console.log(
  `\nreal domains of the built-in lists (free, protected, targets, email-providers common.json: ${realSet.length}) ` +
    `corrected by verify() with the built-in lists: ${corrected}${examples.length > 0 ? ` (${examples.join(', ')})` : ''}`,
);
console.log('reproduce: npm run bench -- typo');
