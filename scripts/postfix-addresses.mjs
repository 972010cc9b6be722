#!/usr/bin/env node
/**
 * Writes the address list of the real-Postfix loopback run (fixtures/postfix/addresses.csv) to stdout:
 *
 *   node scripts/postfix-addresses.mjs > fixtures/postfix/addresses.csv
 *
 * 2,000 addresses over four `.test` domains, grouped by domain (as a list sorted by domain is), 500 each. Within
 * a domain, mailboxes that exist and ones that do not come in runs of 1 to 40 (as in a list that merges a live
 * segment with an old import), about half each. Deterministic: a seeded generator, no randomness at run time.
 * `exists` is the truth that scripts/postfix-loopback.sh gives Postfix as its local recipient table.
 */
const DOMAINS = ['alpha.mailvet.test', 'beta.mailvet.test', 'gamma.mailvet.test', 'delta.mailvet.test'];
const PER_DOMAIN = 500;
const FIRST = [
  'ada',
  'ben',
  'cleo',
  'dan',
  'eva',
  'finn',
  'gina',
  'hugo',
  'iris',
  'jon',
  'kim',
  'leo',
  'mia',
  'nils',
  'olga',
  'paul',
  'rosa',
  'sam',
  'tess',
  'ugo',
  'vera',
  'will',
  'yara',
  'zoe',
];
const LAST = [
  'adams',
  'baker',
  'chen',
  'diaz',
  'evans',
  'fox',
  'garcia',
  'hill',
  'ito',
  'jones',
  'khan',
  'lopez',
  'moore',
  'nagy',
  'ortiz',
  'patel',
  'quinn',
  'reed',
  'silva',
  'tanaka',
  'uddin',
  'vogel',
  'wong',
  'young',
];

/** mulberry32: a small seeded generator, so that the list is the same on every machine. */
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const random = generator(10);
const pick = (list) => list[Math.floor(random() * list.length)];
const lines = ['email,exists'];
for (const domain of DOMAINS) {
  const used = new Set();
  let exists = random() < 0.5;
  let left = 0;
  for (let index = 0; index < PER_DOMAIN; index++) {
    if (left === 0) {
      exists = !exists;
      left = 1 + Math.floor(random() * 40);
    }
    left -= 1;
    let local;
    do local = `${pick(FIRST)}.${pick(LAST)}${Math.floor(random() * 100)}`;
    while (used.has(local));
    used.add(local);
    lines.push(`${local}@${domain},${exists ? 'yes' : 'no'}`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
