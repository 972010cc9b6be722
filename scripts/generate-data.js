#!/usr/bin/env node
/**
 * Generates the data lists in src/data/generated/ from their sources:
 *
 * - disposable: mailchecker (npm), minus scripts/sources/disposable-exceptions.txt
 * - free:       email-providers all.json (npm) and scripts/sources/popular-domains.txt, minus disposable,
 *               minus scripts/sources/typo-squats.txt and entries without a real (ICANN) suffix
 * - role:       scripts/sources/role.txt
 * - typo:       scripts/sources/{popular-domains,second-level,tlds,typo-protected}.txt and
 *               email-providers common.json (the free list is protected from corrections too); the
 *               regional names are derived from the second-level names and the free and protected lists;
 *               the built-in suggester's targets and slip lookups from all of them (src/typo/prebuilt.ts)
 *
 * The output is deterministic: the same sources give byte-identical files (sorted entries, no clock).
 * Dates come from the sources (npm release dates in scripts/sources/upstream.json, `# Date:` headers).
 *
 * Usage: `npm run data` writes the files; `node scripts/generate-data.js --check` exits 1 when they are
 * out of date.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { domainToASCII, fileURLToPath } from 'node:url';
import { parse } from 'tldts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const sourcesDir = join(root, 'scripts', 'sources');
const outDir = join(root, 'src', 'data', 'generated');
const require = createRequire(import.meta.url);

/** Lower-case ASCII host names with at least two labels; no empty, leading- or trailing-hyphen labels. */
const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/;
/** RFC 2606 and RFC 6761 names: reserved for documentation and testing, nobody's mail provider. */
const RESERVED = /(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost|local|onion|arpa)$/;
/** Real ccTLDs one edit from `com` where typo-squatters register (gmail.co, hotmail.cm, yahoo.om). */
const SQUATTED_SUFFIXES = new Set(['co', 'cm', 'om']);

function fail(message) {
  console.error(`generate-data: ${message}`);
  process.exit(1);
}

/** Reads a curated list: entries one per line, `#` starts a comment, `# Key: value` lines form the header. */
function readCurated(name) {
  const path = join(sourcesDir, name);
  const text = readFileSync(path, 'utf8');
  const header = {};
  const entries = [];
  for (const raw of text.split('\n')) {
    const headerLine = /^#\s*([A-Z][A-Za-z ]*):\s*(.+)$/.exec(raw);
    if (headerLine) header[headerLine[1].toLowerCase()] ??= headerLine[2].trim();
    const entry = raw.replace(/#.*$/, '').trim();
    if (entry !== '') entries.push(entry);
  }
  if (!header.source || !/^\d{4}-\d{2}-\d{2}$/.test(header.date ?? '')) {
    fail(`${name} needs "# Source:" and "# Date: YYYY-MM-DD" header lines`);
  }
  const version = `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 12)}`;
  return {
    entries,
    source: { name: `scripts/sources/${name}`, version, license: 'MIT', date: header.date },
  };
}

/** The installed version of an npm source, checked against the release date recorded for it. */
function npmSource(name) {
  const upstream = JSON.parse(readFileSync(join(sourcesDir, 'upstream.json'), 'utf8'))[name];
  const installed = require(`${name}/package.json`).version;
  if (!upstream) fail(`scripts/sources/upstream.json has no entry for ${name}`);
  if (upstream.version !== installed) {
    fail(
      `${name} ${installed} is installed but upstream.json records ${upstream.version}: set its version ` +
        `and its release date (npm view ${name} time) in scripts/sources/upstream.json`,
    );
  }
  return { name, version: installed, url: upstream.url, license: upstream.license, date: upstream.released };
}

function checkDomains(list, entries) {
  const bad = entries.filter((entry) => !DOMAIN.test(entry) || RESERVED.test(entry));
  if (bad.length > 0) fail(`${list}: not a lower-case public domain: ${bad.slice(0, 5).join(', ')}`);
  return entries;
}

/**
 * Reads an upstream domain list: Unicode names become their ASCII (punycode) form, and entries that are
 * not domains at all (upstream lists hold a stray address or two) or are reserved names (example.com)
 * are dropped and reported.
 */
function upstreamDomains(list, entries) {
  const kept = [];
  const dropped = [];
  for (const entry of entries) {
    const ascii = domainToASCII(String(entry).trim().toLowerCase());
    if (DOMAIN.test(ascii) && !RESERVED.test(ascii)) kept.push(ascii);
    else dropped.push(entry);
  }
  if (dropped.length > 0) console.warn(`generate-data: ${list}: dropped ${dropped.join(', ')}`);
  return kept;
}

const sorted = (values) => [...new Set(values)].sort();

/** The role normalisation of src/data/role.ts: lower case, `+tag` dropped, `-`, `_` and `.` removed. */
const normalizeRole = (name) => name.toLowerCase().replace(/\+.*$/, '').replace(/[-_.]/g, '');

// ---- disposable -------------------------------------------------------------------------------------
const mailchecker = npmSource('mailchecker');
const upstreamDisposable = upstreamDomains('mailchecker', [...require('mailchecker').blacklist()]);
const exceptions = readCurated('disposable-exceptions.txt');
checkDomains('disposable-exceptions.txt', exceptions.entries);
const upstreamSet = new Set(upstreamDisposable);
for (const entry of exceptions.entries) {
  if (!upstreamSet.has(entry)) console.warn(`generate-data: exception ${entry} is no longer in mailchecker`);
}
const excepted = new Set(exceptions.entries);
const disposable = sorted(upstreamDisposable.filter((domain) => !excepted.has(domain)));
/** Entries that are public suffixes (PSL, private section included) match only exactly. */
const isSuffix = (domain) => parse(domain, { allowPrivateDomains: true }).publicSuffix === domain;
const disposableExact = disposable.filter(isSuffix);
const disposableTree = disposable.filter((domain) => !isSuffix(domain));
const disposableTreeSet = new Set(disposableTree);
const disposableExactSet = new Set(disposableExact);

/** True when the domain, or (through a non-suffix entry) one of its parents, is disposable. */
function isDisposable(domain) {
  if (disposableExactSet.has(domain)) return true;
  for (let name = domain; ; ) {
    if (disposableTreeSet.has(name)) return true;
    const dot = name.indexOf('.');
    if (dot < 0) return false;
    name = name.slice(dot + 1);
  }
}

// ---- typo and free ----------------------------------------------------------------------------------
const popular = readCurated('popular-domains.txt');
checkDomains('popular-domains.txt', popular.entries);
if (new Set(popular.entries).size !== popular.entries.length) fail('popular-domains.txt has duplicates');
const mainstreamDisposable = popular.entries.filter(isDisposable);
if (mainstreamDisposable.length > 0) {
  fail(
    `popular domains in the disposable list: ${mainstreamDisposable.join(', ')}; ` +
      'add them to scripts/sources/disposable-exceptions.txt with a reason',
  );
}
const secondLevel = readCurated('second-level.txt');
const topLevel = readCurated('tlds.txt');
const protectedList = readCurated('typo-protected.txt');
checkDomains('typo-protected.txt', protectedList.entries);
for (const suffix of topLevel.entries) {
  const probe = parse(`example.${suffix}`);
  if (!probe.isIcann || probe.publicSuffix !== suffix) {
    fail(`tlds.txt: ${suffix} is not an ICANN public suffix`);
  }
}

const providers = npmSource('email-providers');
const allProviders = upstreamDomains('email-providers all.json', require('email-providers/all.json'));
const commonProviders = upstreamDomains(
  'email-providers common.json',
  require('email-providers/common.json'),
);
const squats = readCurated('typo-squats.txt');
checkDomains('typo-squats.txt', squats.entries);
const squatSet = new Set(squats.entries);
/** An ending that is no ICANN public suffix (a retired or mistyped TLD) cannot receive mail. */
const unroutable = allProviders.filter((domain) => parse(domain).isIcann !== true);
const unroutableSet = new Set(unroutable);
const freeCandidates = [...allProviders, ...popular.entries].filter(
  (domain) => !squatSet.has(domain) && !unroutableSet.has(domain),
);
const free = sorted(freeCandidates.filter((domain) => !isDisposable(domain)));
const freeSet = new Set(free);

const secondLevelSet = new Set(secondLevel.entries);
/** Regional domains of the multi-country providers (outlook.cl, yahoo.ca) are real, not typos. */
const regional = allProviders.filter((domain) => {
  const info = parse(domain);
  return (
    info.isIcann === true &&
    info.domain === domain &&
    secondLevelSet.has(info.domainWithoutSuffix ?? '') &&
    !squatSet.has(domain) &&
    !SQUATTED_SUFFIXES.has(info.publicSuffix ?? '')
  );
});
const popularSet = new Set(popular.entries);
/** Protected besides the free list (which src/data/typo.ts adds): ranked sites, regional domains, curated. */
const protectedDomains = sorted([...commonProviders, ...regional, ...protectedList.entries]).filter(
  (domain) => !popularSet.has(domain) && !freeSet.has(domain) && !squatSet.has(domain),
);

/** Suffixes that name no country: a provider's domain under one of them says nothing of its regions. */
const GENERIC_SUFFIXES = new Set(['com', 'net', 'org']);
/** A popular name the lists hold under this many country suffixes or more is taken as a regional one. */
const REGIONAL_SPREAD = 3;
const countrySuffixes = new Map();
for (const domain of new Set([...popular.entries, ...free, ...protectedDomains])) {
  const info = parse(domain);
  if (info.isIcann !== true || info.domain !== domain || GENERIC_SUFFIXES.has(info.publicSuffix)) continue;
  const name = info.domainWithoutSuffix;
  if (!countrySuffixes.has(name)) countrySuffixes.set(name, new Set());
  countrySuffixes.get(name).add(info.publicSuffix);
}
const popularNames = new Set(popular.entries.map((domain) => parse(domain).domainWithoutSuffix));
/**
 * Names whose domain under a country suffix is never moved to another country's: the second-level names,
 * and the popular names the lists hold under several country suffixes (home.nl, home.ro, home.se belong to
 * three providers; mail.ru, mail.ee, mail.nu to more), where a swapped suffix likely lands on a real domain.
 */
const regionalNames = sorted([
  ...secondLevel.entries,
  ...[...countrySuffixes]
    .filter(([name, suffixes]) => suffixes.size >= REGIONAL_SPREAD && popularNames.has(name))
    .map(([name]) => name),
]);

/** Names this long or longer are corrected within one edit (`editsFor` in src/typo/targets.ts). */
const SECONDARY_NAME_LENGTH = 4;
/**
 * The free list's providers under a country suffix, with names of four letters or more (gazeta.pl, sapo.pt,
 * walla.co.il): secondary suggestion targets, within one edit. Those under com, net or org are left out: that
 * part of the list is mostly vanity and look-alike names (11mail.com, 4email.com), one edit from real domains.
 */
const secondaryDomains = free.filter((domain) => {
  const info = parse(domain);
  return (
    info.isIcann === true &&
    info.domain === domain &&
    !GENERIC_SUFFIXES.has(info.publicSuffix) &&
    (info.domainWithoutSuffix ?? '').length >= SECONDARY_NAME_LENGTH &&
    !popularSet.has(domain)
  );
});

/**
 * The built-in suggester's targets and slip lookups, computed by src/typo/prebuilt.ts (bundled with esbuild, so
 * that the code that writes them is the code that reads them) from the lists exactly as src/data/typo.ts gives
 * them: a process then reads them instead of computing them at start (issue 30, cold start).
 */
async function prebuiltTypoIndex(lists) {
  const { build } = await import('esbuild');
  const bundle = await build({
    entryPoints: [join(root, 'src', 'typo', 'prebuilt.ts')],
    absWorkingDir: root,
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    conditions: ['module-sync'],
    logLevel: 'warning',
  });
  const code = Buffer.from(bundle.outputFiles[0].contents).toString('base64');
  const { prebuild } = await import(`data:text/javascript;base64,${code}`);
  return prebuild(lists);
}
const typoIndex = await prebuiltTypoIndex({
  domains: popular.entries,
  secondaryDomains,
  protected: [...free, ...protectedDomains],
  topLevel: topLevel.entries,
});
const lines = (text) => (text === '' ? [] : text.split('\n'));

// ---- role -------------------------------------------------------------------------------------------
const role = readCurated('role.txt');
const roleNames = sorted(role.entries.map(normalizeRole));
const badRole = roleNames.filter((name) => !/^[a-z0-9]+$/.test(name));
if (badRole.length > 0) fail(`role.txt: unexpected characters in ${badRole.join(', ')}`);

// ---- output -----------------------------------------------------------------------------------------
const BANNER =
  '// Generated by scripts/generate-data.js from the sources named in `meta`. Do not edit: run `npm run data`.';

function block(values) {
  return values.length === 0 ? "''" : `\`${values.join('\n')}\``;
}

function file(meta, doc, exports) {
  const lines = [BANNER, "import type { ListMeta } from '../types.js';", '', `/** ${doc} */`];
  lines.push(`export const meta: ListMeta = ${JSON.stringify(meta, null, 2)};`);
  for (const [name, comment, values] of exports) {
    lines.push('', `/** ${comment} */`, `export const ${name} = ${block(values)};`);
  }
  return `${lines.join('\n')}\n`;
}

const exceptionSource = exceptions.source;
const outputs = {
  'disposable.ts': file(
    {
      list: 'disposable',
      count: disposable.length,
      sources: [mailchecker, exceptionSource],
      note:
        `mailchecker's list minus ${exceptions.entries.length} documented exceptions; ` +
        `${disposableExact.length} entries that are public suffixes match only exactly`,
    },
    'Where the disposable list comes from.',
    [
      [
        'domains',
        'Disposable domains, one per line, sorted. Subdomains of a listed domain match too.',
        disposableTree,
      ],
      [
        'exactDomains',
        'Disposable domains that are public suffixes (dynamic-DNS and free-subdomain services): only the domain itself matches, since each subdomain belongs to someone else.',
        disposableExact,
      ],
    ],
  ),
  'free.ts': file(
    {
      list: 'free',
      count: free.length,
      sources: [providers, popular.source, squats.source],
      note:
        `email-providers all.json and the popular domains, minus every disposable domain, ` +
        `${squats.entries.length} typo-squats and ${unroutable.length} entries without a real suffix`,
    },
    'Where the free-provider list comes from.',
    [['domains', 'Free consumer mail domains, one per line, sorted. Only the domain itself matches.', free]],
  ),
  'role.ts': file(
    {
      list: 'role',
      count: roleNames.length,
      sources: [role.source],
      note: 'normalised: lower case, separators (- _ .) removed',
    },
    'Where the role list comes from.',
    [['names', 'Role local parts, normalised, one per line, sorted.', roleNames]],
  ),
  'typo.ts': file(
    {
      list: 'typo',
      count: popular.entries.length,
      sources: [popular.source, secondLevel.source, topLevel.source, protectedList.source, providers],
      note:
        `${popular.entries.length} suggestion targets, ${secondLevel.entries.length} second-level names, ` +
        `${topLevel.entries.length} suffixes, ${regionalNames.length} regional names, ` +
        `${secondaryDomains.length} secondary targets; protected from corrections: the free list and ` +
        `${protectedDomains.length} more (email-providers common.json, regional provider domains, typo-protected.txt)`,
    },
    'Where the typo-suggestion lists come from.',
    [
      ['popularDomains', 'Suggestion targets, most popular first (the order breaks ties).', popular.entries],
      [
        'secondaryDomains',
        'Secondary suggestion targets, within one edit: the free providers under a country suffix with names of four letters or more, sorted.',
        secondaryDomains,
      ],
      [
        'secondLevelNames',
        'Names of providers present under many suffixes (yahoo, hotmail, ...).',
        secondLevel.entries,
      ],
      [
        'regionalNames',
        `Names whose domains under a country suffix are never moved to another country's: the second-level names and the popular names the lists hold under ${REGIONAL_SPREAD} or more country suffixes, sorted.`,
        regionalNames,
      ],
      [
        'topLevelSuffixes',
        'Suffixes an unknown ending may be corrected to, most used first.',
        topLevel.entries,
      ],
      [
        'protectedDomains',
        'Real domains never corrected into another, besides the free list and the targets, sorted.',
        protectedDomains,
      ],
      [
        'typoTargets',
        'The suggestion targets by rank, split at their public suffix: `domain suffix maxEdits` (src/typo/prebuilt.ts).',
        lines(typoIndex.targets),
      ],
      ['slipJoined', 'Slip lookup `joined`: `key domain` (src/typo/slips.ts).', lines(typoIndex.joined)],
      ['slipSquashed', 'Slip lookup `squashed`: `key domain`.', lines(typoIndex.squashed)],
      ['slipBare', 'Slip lookup `bare`: `key domain`.', lines(typoIndex.bare)],
      ['slipTruncated', 'Slip lookup `truncated`: `key domain`.', lines(typoIndex.truncated)],
      ['slipDoubled', 'Slip lookup `doubled`: `key domain`.', lines(typoIndex.doubled)],
    ],
  ),
};

const check = process.argv.includes('--check');
let stale = 0;
for (const [name, content] of Object.entries(outputs)) {
  const path = join(outDir, name);
  if (check) {
    let current = '';
    try {
      current = readFileSync(path, 'utf8');
    } catch {}
    if (current !== content) {
      console.error(`generate-data: src/data/generated/${name} is out of date; run npm run data`);
      stale += 1;
    }
  } else {
    writeFileSync(path, content);
  }
}
if (stale > 0) process.exit(1);
console.log(
  `generate-data: disposable ${disposable.length} (${disposableExact.length} exact-only), free ${free.length}, ` +
    `role ${roleNames.length}, popular ${popular.entries.length}, protected ${protectedDomains.length}` +
    (check ? ' (up to date)' : ''),
);
