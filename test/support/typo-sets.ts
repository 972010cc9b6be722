/**
 * The typo sets of `npm run bench -- typo` (bench/typo.ts) and of the slip table tests
 * (test/typo/slips.test.ts): generated one-edit typos of top providers, slips of punctuation and ending over
 * 40 providers, and suffix slips of 40 providers of one country.
 * @module
 */
import { parse } from 'tldts';

/** The providers of the one-edit set. */
export const ONE_EDIT_PROVIDERS = [
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

/**
 * 40 providers with 40 different names, each at its most popular domain (so the name alone means it): the
 * global webmails and the big ISPs of North America, Europe, Asia and Brazil.
 */
export const SLIP_PROVIDERS = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'live.com',
  'msn.com',
  'googlemail.com',
  'protonmail.com',
  'proton.me',
  'zoho.com',
  'yandex.com',
  'mail.com',
  'gmx.com',
  'web.de',
  'comcast.net',
  'att.net',
  'verizon.net',
  'sbcglobal.net',
  'shaw.ca',
  'rogers.com',
  'btinternet.com',
  'sky.com',
  'orange.fr',
  'free.fr',
  't-online.de',
  'libero.it',
  'virgilio.it',
  'bigpond.com',
  'seznam.cz',
  'wp.pl',
  'interia.pl',
  'naver.com',
  'qq.com',
  '163.com',
  'uol.com.br',
  'ziggo.nl',
  'rambler.ru',
  'fastmail.com',
];

/**
 * 40 providers of one country each, under a country suffix, with names of four letters or more (a shorter
 * name is corrected by no edit at all): their suffix slips onto another real suffix are slips.
 */
export const SINGLE_COUNTRY_PROVIDERS = [
  'proton.me',
  'tuta.io',
  'shaw.ca',
  'sympatico.ca',
  'videotron.ca',
  'blueyonder.co.uk',
  'xtra.co.nz',
  'optusnet.com.au',
  'iinet.net.au',
  'bigpond.net.au',
  't-online.de',
  'freenet.de',
  'arcor.de',
  'bluewin.ch',
  'orange.fr',
  'free.fr',
  'neuf.fr',
  'libero.it',
  'virgilio.it',
  'alice.it',
  'ziggo.nl',
  'kpnmail.nl',
  'planet.nl',
  'hetnet.nl',
  'telenet.be',
  'skynet.be',
  'onet.pl',
  'interia.pl',
  'seznam.cz',
  'centrum.cz',
  'rambler.ru',
  'list.ru',
  'inbox.ru',
  'naver.com',
  'optonline.net',
  'prodigy.net.mx',
  'bell.net',
  'laposte.net',
  'telefonica.net',
  'eircom.net',
];

/**
 * 40 providers of the free list under a country suffix, with names of four letters or more: secondary
 * suggestion targets (the six the issue named first).
 */
export const FREE_TARGET_PROVIDERS = [
  'gazeta.pl',
  'email.it',
  'sapo.pt',
  'freemail.hu',
  'walla.co.il',
  'inbox.lv',
  'aeiou.pt',
  'centrum.sk',
  'chello.nl',
  'cogeco.ca',
  'club-internet.fr',
  'forthnet.gr',
  'inwind.it',
  'interfree.it',
  'luso.pt',
  'netvision.net.il',
  'ozemail.com.au',
  'poste.it',
  'pochta.ru',
  'poczta.fm',
  'spray.se',
  'supereva.it',
  'teletu.it',
  'voila.fr',
  'zahav.net.il',
  'zonnet.nl',
  'zipmail.com.br',
  'bluemail.ch',
  'bellnet.ca',
  'fibertel.com.ar',
  'singnet.com.sg',
  'westnet.com.au',
  'iprimus.com.au',
  'netspace.net.au',
  'jubiimail.dk',
  'eposta.hu',
  'online.de',
  'epost.de',
  'pobox.sk',
  'oninet.pt',
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
export function oneEditTyposOf(domain: string): [string, string][] {
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

/** The kinds of punctuation and ending slips, each a rewrite of `name` + `suffix` (`gmail`, `com`). */
export const SLIP_KINDS: Readonly<Record<string, (name: string, suffix: string) => string>> = {
  'trailing dot': (name, suffix) => `${name}.${suffix}.`,
  'no suffix': (name) => name,
  'no dot': (name, suffix) => `${name}${suffix.replaceAll('.', '')}`,
  'comma for dot': (name, suffix) => `${name},${suffix}`,
  'space for dot': (name, suffix) => `${name} ${suffix}`,
  'ending cut short': (name, suffix) => `${name}.${suffix.slice(0, suffix.lastIndexOf('.') + 2)}`,
};

/** A provider's domain split at its public suffix (`uol`, `com.br`). */
export function splitDomain(domain: string): { name: string; suffix: string } {
  const suffix = parse(domain).publicSuffix ?? '';
  return { name: domain.slice(0, domain.length - suffix.length - 1), suffix };
}

/** Whether `suffix` is a real (ICANN) public suffix. */
function isRealSuffix(suffix: string): boolean {
  const info = parse(`example.${suffix}`);
  return info.isIcann === true && info.publicSuffix === suffix;
}

/** Every string one edit (deletion, swap, substitution, insertion of a-z or a dot) from `text`. */
function oneEditVariants(text: string): Set<string> {
  const letters = 'abcdefghijklmnopqrstuvwxyz.';
  const out = new Set<string>();
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length) out.add(text.slice(0, i) + text.slice(i + 1));
    if (i + 1 < text.length) out.add(text.slice(0, i) + text[i + 1] + text[i] + text.slice(i + 2));
    for (const letter of letters) {
      if (i < text.length) out.add(text.slice(0, i) + letter + text.slice(i + 1));
      out.add(text.slice(0, i) + letter + text.slice(i));
    }
  }
  out.delete(text);
  return out;
}

/**
 * The slips of a provider's suffix onto another real country suffix (`shaw.cz`, `orange.gr`), leaving out
 * `.com`, `.net` and `.org` (corrected for every provider) and the domains `isReal` knows.
 */
export function suffixSlipsOf(domain: string, isReal: (domain: string) => boolean): string[] {
  const { name, suffix } = splitDomain(domain);
  return [...oneEditVariants(suffix)]
    .filter((variant) => !['com', 'net', 'org'].includes(variant) && isRealSuffix(variant))
    .map((variant) => `${name}.${variant}`)
    .filter((slip) => !isReal(slip))
    .sort();
}
