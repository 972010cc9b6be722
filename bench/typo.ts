/**
 * Typo-suggestion accuracy, mailvet beside mailcheck, on two sets:
 * - generated 1-edit typos of the top providers (deletion, adjacent transposition, QWERTY-neighbour
 *   substitution, doubled letter, TLD slip), minus variants that are real domains: exact fixes, wrong fixes;
 * - real free-mail domains held out of mailvet's protection (email-providers all.json, which mailvet's lists
 *   protect; the suggester here is built without that protection, so it sees them as it would see real
 *   domains its data never used): every suggestion there is a false correction.
 *
 *   npx tsx bench/typo.ts
 */
import { createRequire } from 'node:module';
import { typoData } from '../src/data/typo.js';
import { createDomainSuggester } from '../src/typo/suggest.js';

const require = createRequire(import.meta.url);
const Mailcheck = require('mailcheck') as {
  suggest(email: string, domains: string[], sld: string[], tld: string[]): { domain: string } | false;
  defaultDomains: string[];
  defaultSecondLevelDomains: string[];
  defaultTopLevelDomains: string[];
};
const realDomains = new Set<string>(require('email-providers/all.json') as string[]);

const PROVIDERS = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'aol.com',
  'icloud.com',
  'msn.com',
  'live.com',
  'gmx.de',
  'web.de',
  'gmx.net',
  'yahoo.co.uk',
  'hotmail.co.uk',
  'comcast.net',
  'mail.ru',
  'yandex.ru',
  'protonmail.com',
  'me.com',
  'mac.com',
  'orange.fr',
  'free.fr',
  'libero.it',
  'att.net',
  'verizon.net',
];
const NEIGHBOURS: Record<string, string> = {
  q: 'wa',
  w: 'qes',
  e: 'wrd',
  r: 'etf',
  t: 'ryg',
  y: 'tuh',
  u: 'yij',
  i: 'uok',
  o: 'ipl',
  p: 'ol',
  a: 'qsz',
  s: 'awdz',
  d: 'sefx',
  f: 'drgc',
  g: 'fthv',
  h: 'gyjb',
  j: 'hukn',
  k: 'jilm',
  l: 'kop',
  z: 'asx',
  x: 'zsdc',
  c: 'xdfv',
  v: 'cfgb',
  b: 'vghn',
  n: 'bhjm',
  m: 'njk',
};
const TLD_SLIPS: Record<string, string[]> = {
  com: ['con', 'cmo', 'co', 'cm', 'om', 'comm', 'vom', 'xom'],
  net: ['ne', 'nte', 'nt', 'ent', 'met'],
  de: ['d', 'ed', 'dee'],
  fr: ['f', 'rf'],
  ru: ['r', 'ur'],
  it: ['i', 'ti'],
  'co.uk': ['co.u', 'co.k', 'couk', 'co.ul'],
};

/** 1-edit variants of a provider's name, and TLD slips, each with its kind. */
function typosOf(domain: string): [string, string][] {
  const dot = domain.indexOf('.');
  const name = domain.slice(0, dot);
  const suffix = domain.slice(dot + 1);
  const out: [string, string][] = [];
  for (let i = 0; i < name.length; i++) {
    out.push([`${name.slice(0, i)}${name.slice(i + 1)}.${suffix}`, 'deletion']);
    if (i + 1 < name.length && name[i] !== name[i + 1])
      out.push([
        `${name.slice(0, i)}${name[i + 1]}${name[i]}${name.slice(i + 2)}.${suffix}`,
        'transposition',
      ]);
    for (const near of NEIGHBOURS[name[i]!] ?? '')
      out.push([`${name.slice(0, i)}${near}${name.slice(i + 1)}.${suffix}`, 'keyboard']);
    out.push([`${name.slice(0, i + 1)}${name[i]}${name.slice(i + 1)}.${suffix}`, 'doubled']);
  }
  for (const slip of TLD_SLIPS[suffix] ?? []) out.push([`${name}.${slip}`, 'tld']);
  return out;
}

const data = typoData();
const withoutFreeProtection = createDomainSuggester({
  ...data,
  protected: data.protected.filter((domain) => !realDomains.has(domain)),
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
  for (const [typo, kind] of typosOf(provider)) {
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
console.log('reproduce: npx tsx bench/typo.ts');
