/**
 * A deterministic, realistic mix of addresses for the offline benchmarks: mostly big free providers and
 * company domains, with typos, disposables, role addresses, malformed input and some unicode.
 */

const FREE = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'gmx.de',
  'web.de',
];
const TYPOS = ['gmial.com', 'gmai.com', 'hotmial.com', 'yaho.com', 'outlok.com', 'gmail.con', 'iclod.com'];
const DISPOSABLE = ['mailinator.com', '10minutemail.com', 'guerrillamail.com', 'yopmail.com'];
const ROLES = ['info', 'sales', 'support', 'admin', 'no-reply', 'postmaster'];
const FIRST = [
  'anna',
  'ben',
  'chloé',
  'david',
  'emma',
  'felix',
  'grace',
  'hugo',
  'ines',
  'jamal',
  'kim',
  'li',
];
const LAST = ['smith', 'jones', 'müller', 'garcia', 'chen', 'kowalski', 'nguyen', 'okafor', 'rossi', 'silva'];
const WORDS = [
  'acme',
  'globex',
  'initech',
  'umbrella',
  'stark',
  'wayne',
  'tyrell',
  'hooli',
  'vandelay',
  'wonka',
];
const TLDS = ['com', 'io', 'co.uk', 'de', 'fr', 'net', 'org', 'com.au'];
const BROKEN = [
  'plainaddress',
  'two@@at.com',
  'dots..in@local.com',
  'space in@local.com',
  '@nolocal.com',
  'x@-dash.com',
  'x@nodot',
];

/** Mulberry32: a tiny seeded PRNG, so every run measures the same addresses. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * `count` addresses: 55% free providers, 25% company domains, 5% typos, 4% disposable, 4% role, 5% malformed, 2% IDN.
 * Company domains are `<word><n>.<tld>` with `n` below `companyNumbers` (500 by default: about 2,000 distinct
 * domains in 10,000 addresses, 20,000 in 100,000).
 */
export function addressMix(count: number, seed = 42, companyNumbers = 500): string[] {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const person = () => {
    const first = pick(FIRST).normalize('NFD').replace(/\p{M}/gu, '');
    const last = pick(LAST).normalize('NFD').replace(/\p{M}/gu, '');
    const n = Math.floor(random() * 1000);
    return random() < 0.5 ? `${first}.${last}` : `${first}${last}${n}`;
  };
  const company = () => `${pick(WORDS)}${Math.floor(random() * companyNumbers)}.${pick(TLDS)}`;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    if (r < 0.55) out.push(`${person()}@${pick(FREE)}`);
    else if (r < 0.8) out.push(`${person()}@${company()}`);
    else if (r < 0.85) out.push(`${person()}@${pick(TYPOS)}`);
    else if (r < 0.89) out.push(`${person()}@${pick(DISPOSABLE)}`);
    else if (r < 0.93) out.push(`${pick(ROLES)}@${company()}`);
    else if (r < 0.98) out.push(pick(BROKEN));
    else out.push(`${pick(FIRST)}@bücher-${Math.floor(random() * 50)}.de`);
  }
  return out;
}

/** `count` addresses of people spread over `distinct` company domains (each used about `count / distinct` times). */
export function spreadMix(count: number, distinct: number, seed = 7): string[] {
  const random = prng(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = Math.floor(random() * distinct);
    const first = pick(FIRST).normalize('NFD').replace(/\p{M}/gu, '');
    out.push(`${first}${i}@${WORDS[n % WORDS.length]}${n}.${TLDS[n % TLDS.length]}`);
  }
  return out;
}
