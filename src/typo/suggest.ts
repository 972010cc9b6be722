/**
 * Typo suggestions for the domain of an address (`did_you_mean`). See docs/typo.md for the rules.
 * @module
 */
import { parse } from '#tldts';
import { builtInKnown, PREBUILT_TYPO_INDEX, type TypoData, typoData } from '../data/typo.js';
import { osaDistance } from './distance.js';
import { GenerationalMemo } from './memo.js';
import { type OneEditIndex, oneEditIndex } from './one-edit-index.js';
import { listParts, slipsFrom, targetsFrom } from './prebuilt.js';
import { dotlessSlip, dottedSlip, repairSeparators, type SlipIndex, slipIndex } from './slips.js';
import {
  bitCount,
  charMask,
  MAX_DOMAIN,
  nameLabel,
  normalize,
  PARSE,
  type Target,
  targetDomainsOf,
  targetsOf,
} from './targets.js';

export { editsFor } from './targets.js';

/** Lists a suggester works from. */
export interface SuggestLists {
  /** Suggestion targets, most popular first: the order breaks ties. */
  readonly domains: readonly string[];
  /**
   * Further targets, ranked after `domains` and corrected within one edit only, where `domains` has none that
   * close, for an input whose suffix is not `com`, `net` or `org` (the built-in ones: the free list's
   * providers under a country suffix with names of four letters or more, `gazeta.pl`, `sapo.pt`). They are
   * known domains too. @default []
   */
  readonly secondaryDomains?: readonly string[];
  /** Names of providers present under many suffixes (`yahoo`, `hotmail`). @default [] */
  readonly secondLevel?: readonly string[];
  /**
   * Names whose domain under a country suffix is never moved to another country's (`home`: `home.pl` is not
   * `home.nl`), besides the `secondLevel` ones. The suffix slips of any other target's name are fixed
   * (`shaw.cz` -> `shaw.ca`). @default []
   */
  readonly regional?: readonly string[];
  /** Suffixes an unknown ending may be corrected to, most used first (`com`, `net`). @default [] */
  readonly topLevel?: readonly string[];
  /** Real domains that are never corrected (the targets never are either). @default [] */
  readonly protected?: readonly string[];
  /**
   * Most domains whose answer is memoised (real lists repeat domains; about 100 bytes each, so the default
   * holds at most ~6.5 MB). @default 65536
   */
  readonly cacheSize?: number;
}

/** Suggests corrections of mistyped domains. */
export interface DomainSuggester {
  /**
   * The likely intended domain, or `null` when `domain` looks right or nothing is close enough.
   * Case and a trailing dot are ignored; a comma or space for a dot (`gmail,com`) and a missing ending
   * (`gmail`, `gmailcom`) are repaired.
   */
  suggest(domain: string): string | null;
  /** A suggester with `domains` added as targets, ranked before the current ones; shares the rest. */
  extend(domains: readonly string[]): DomainSuggester;
}

/**
 * A domain split at its public suffix, when that suffix is a real (ICANN) one: the name of a provider of many
 * countries under a real suffix is that provider's regional domain, not a typo of another country's one.
 */
interface RegionalSplit {
  readonly name: string;
  readonly suffix: string;
}

/** Everything a suggester looks up, shared between a suggester and its extensions. */
interface Index {
  readonly targets: readonly Target[];
  /** Targets by length, for pruning: `byLength[n]` holds the targets of length n, by rank. */
  readonly byLength: readonly (readonly Target[] | undefined)[];
  readonly targetSet: ReadonlySet<string>;
  readonly slips: SlipIndex;
  /** The secondary targets, by their one-edit neighbourhoods (built on first use). */
  readonly secondary: () => OneEditIndex;
  readonly isKnown: (domain: string) => boolean;
  readonly secondLevel: readonly string[];
  readonly secondLevelSet: ReadonlySet<string>;
  /** The second-level and regional names. */
  readonly regionalSet: ReadonlySet<string>;
  readonly topLevel: readonly string[];
  readonly topLevelSet: ReadonlySet<string>;
  /**
   * Second-level names with a known domain: a correction of such a name must give a known domain. Built on first
   * use: most domains never need it, and building it is most of a suggester's start-up (a public-suffix lookup of
   * every known domain with a second-level label).
   */
  readonly knownNames: () => ReadonlySet<string>;
  readonly cacheSize: number;
}

/** {@link SuggestLists.cacheSize}'s default. */
const DEFAULT_CACHE_SIZE = 65_536;
/** The most edits any target tolerates, bonus included: bounds the lengths worth comparing. */
const MAX_EDITS = 3;
/**
 * Suffixes a real regional suffix may still be corrected to for any provider, because they are what a near
 * miss of them almost always meant (`gmail.co`, `gmail.cm`, `gmail.om` are slips of `.com`). For a provider of
 * many countries, any other change of suffix alone (`hotmail.com.tr` to `hotmail.com.br`, `live.in` to
 * `live.it`) would move the address to another country.
 */
const GENERIC_SUFFIXES: ReadonlySet<string> = new Set(['com', 'net', 'org']);

/**
 * Whether correcting a domain split as `from` to `target` only swaps one real suffix for another country's,
 * for a regional name (`hotmail.com.tr` is not `hotmail.com.br`, `home.pl` is not `home.nl`). A provider
 * of one country has no other country's domain, so there the swap is a slip (`shaw.cz` -> `shaw.ca`).
 */
function swapsRegion(index: Index, from: RegionalSplit | null, target: Target): boolean {
  return (
    from !== null &&
    from.name === target.name &&
    from.suffix !== target.suffix &&
    !GENERIC_SUFFIXES.has(target.suffix) &&
    index.regionalSet.has(target.name)
  );
}

/** `slips` defaults to the lookups computed from `targets` (the built-in suggester's are generated). */
function buildIndex(
  targets: readonly Target[],
  base: Omit<Index, 'targets' | 'byLength' | 'targetSet' | 'slips'>,
  slips: SlipIndex = slipIndex(targets, base.topLevel, base.isKnown),
): Index {
  const byLength: Target[][] = [];
  for (const target of targets) {
    const bucket = byLength[target.domain.length];
    if (bucket === undefined) byLength[target.domain.length] = [target];
    else bucket.push(target);
  }
  const targetSet = new Set(targets.map((target) => target.domain));
  return { ...base, targets, byLength, targetSet, slips };
}

/**
 * The closest of `candidates` to `input` by {@link osaDistance}, if within `maxEdits`; on a tie the
 * earlier candidate wins. This is mailcheck's `findClosestDomain`, with a transposition-aware distance.
 * @example
 * closestMatch('hotmial', ['yahoo', 'hotmail']); // 'hotmail'
 * closestMatch('cmo', ['com', 'org'], 1); // 'com'
 */
export function closestMatch(input: string, candidates: readonly string[], maxEdits = 2): string | null {
  let best: string | null = null;
  let bestDistance = maxEdits + 1;
  for (const candidate of candidates) {
    const distance = osaDistance(input, candidate, bestDistance - 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      if (distance === 0) break;
    }
  }
  return best;
}

/**
 * The best target within its tolerance (plus `bonus`) of `domain`, by distance then rank, never one that
 * only swaps the real suffix of `region` for another country's; failing one within one edit, the first
 * secondary target one edit away when `suffix` (the domain's) is a country's.
 */
function closestTarget(
  index: Index,
  domain: string,
  suffix: string,
  bonus: number,
  region: RegionalSplit | null,
): string | null {
  let best: Target | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const length = domain.length;
  const mask = charMask(domain);
  const from = Math.max(0, length - MAX_EDITS);
  const to = Math.min(index.byLength.length - 1, length + MAX_EDITS);
  for (let size = from; size <= to; size += 1) {
    const bucket = index.byLength[size];
    if (bucket === undefined) continue;
    const gap = Math.abs(size - length);
    for (const target of bucket) {
      const allowed = Math.min(target.maxEdits + bonus, bestDistance);
      if (gap > allowed || bitCount(mask ^ target.mask) > 2 * allowed || swapsRegion(index, region, target))
        continue;
      const distance = osaDistance(domain, target.domain, allowed);
      if (distance > allowed) continue;
      if (
        distance < bestDistance ||
        (distance === bestDistance && best !== undefined && target.rank < best.rank)
      ) {
        best = target;
        bestDistance = distance;
      }
    }
  }
  if (best !== undefined && bestDistance <= 1) return best.domain;
  const secondary = GENERIC_SUFFIXES.has(suffix) ? null : closestSecondary(index, domain, region);
  return secondary ?? best?.domain ?? null;
}

/** The first secondary target one edit from `domain` that does not swap the country of a regional name. */
function closestSecondary(index: Index, domain: string, region: RegionalSplit | null): string | null {
  const regional = region !== null && index.regionalSet.has(region.name) ? `${region.name}.` : null;
  return index.secondary().closest(domain, (target) => regional === null || !target.startsWith(regional));
}

/** Edits tolerated when correcting a second-level name: none for 3 letters or fewer, else one. */
function closestSecondLevel(index: Index, name: string): string | null {
  let best: string | null = null;
  let bestDistance = 2;
  for (const candidate of index.secondLevel) {
    const allowed = Math.min(candidate.length <= 3 ? 0 : 1, bestDistance - 1);
    const distance = osaDistance(name, candidate, allowed);
    if (distance <= allowed) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Second-level pass over `head.suffix`: a mistyped provider name keeps the suffix when the result is a
 * known domain (`yahooo.de` -> `yahoo.de`), or, for a provider the lists know no domain of, when the suffix
 * is a listed one (`yajoo.com` -> `yahoo.com`); an exact provider name followed by an unlisted suffix gets
 * the closest listed suffix (`hotmail.co` -> `hotmail.com`).
 */
function secondLevelFix(index: Index, head: string, suffix: string, realSuffix: boolean): string | null {
  const dot = head.lastIndexOf('.');
  const prefix = head.slice(0, dot + 1);
  const name = head.slice(dot + 1);
  if (index.secondLevelSet.has(name)) {
    if (index.topLevelSet.has(suffix)) return null;
    const closest = closestMatch(suffix, index.topLevel, 1);
    if (closest === null || (realSuffix && !GENERIC_SUFFIXES.has(closest))) return null;
    return `${prefix}${name}.${closest}`;
  }
  const provider = closestSecondLevel(index, name);
  if (provider === null) return null;
  const candidate = `${prefix}${provider}.${suffix}`;
  if (index.isKnown(candidate)) return candidate;
  return !index.knownNames().has(provider) && index.topLevelSet.has(suffix) ? candidate : null;
}

/** The suggestion for a normalised domain, uncached. */
function compute(index: Index, domain: string): string | null {
  if (domain.length === 0 || domain.length > MAX_DOMAIN) return null;
  const separated = repairSeparators(domain);
  if (separated !== null) {
    if (separated === '') return null;
    return index.isKnown(separated) ? separated : compute(index, separated);
  }
  if (!domain.includes('.')) return dotlessSlip(index.slips, domain);
  if (index.isKnown(domain)) return null;
  const doubled = index.slips.doubled.get(domain);
  if (doubled !== undefined) return doubled;
  const info = parse(domain, PARSE);
  const suffix = info.publicSuffix ?? domain.slice(domain.lastIndexOf('.') + 1);
  const slip = dottedSlip(index.slips, index.targetSet, domain, info.domainWithoutSuffix ?? '', suffix);
  if (slip !== null) return slip;
  // A subdomain of a real provider is not a typo of another one.
  if (info.domain !== null && info.domain !== domain && index.isKnown(info.domain)) return null;
  // An ending that is no public suffix cannot receive mail: one more edit is then worth suggesting.
  const realSuffix = info.isIcann === true;
  // An ending cut short goes to the most popular target it starts (`hotmail.c` -> `hotmail.com`, not `.ca`).
  const completed = realSuffix ? undefined : index.slips.truncated.get(domain);
  if (completed !== undefined) return completed;
  const region = realSuffix ? { name: info.domainWithoutSuffix ?? '', suffix } : null;
  const direct = closestTarget(index, domain, suffix, realSuffix ? 0 : 1, region);
  if (direct !== null) return direct;
  const head = domain.slice(0, Math.max(0, domain.length - suffix.length - 1));
  if (head === '' || head.endsWith('.')) return null;
  if (realSuffix) return secondLevelFix(index, head, suffix, true);
  const fixedSuffix = closestMatch(suffix, index.topLevel, 1);
  if (fixedSuffix === null) return null;
  const fixed = `${head}.${fixedSuffix}`;
  if (index.isKnown(fixed)) return fixed;
  return (
    closestTarget(index, fixed, fixedSuffix, 0, null) ??
    secondLevelFix(index, head, fixedSuffix, false) ??
    fixed
  );
}

function suggesterOf(index: Index): DomainSuggester {
  const memo = new GenerationalMemo<string>(index.cacheSize);
  const suggester: DomainSuggester = {
    suggest(domain) {
      if (typeof domain !== 'string' || domain.length > MAX_DOMAIN + 2) return null;
      const key = normalize(domain);
      const cached = memo.get(key);
      if (cached !== undefined) return cached === '' ? null : cached;
      const suggestion = compute(index, key);
      memo.set(key, suggestion ?? '');
      return suggestion;
    },
    extend(domains) {
      const extra = targetsOf(domains, 0).filter((target) => !index.isKnown(target.domain));
      if (extra.length === 0) return suggester;
      const extraSet = new Set(extra.map((target) => target.domain));
      const shifted = index.targets.map((target) => ({ ...target, rank: target.rank + extra.length }));
      return suggesterOf(
        buildIndex([...extra, ...shifted], {
          ...index,
          isKnown: (domain) => extraSet.has(domain) || index.isKnown(domain),
          knownNames: once(() => namesOf(extraSet, index.secondLevelSet, index.knownNames())),
        }),
      );
    },
  };
  return suggester;
}

/** `make()`, called on the first call only; later calls answer its value. */
function once<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => {
    value ??= make();
    return value;
  };
}

/** The second-level names among the name labels of `domains`, added to `names`. */
function namesOf(
  domains: Iterable<string>,
  secondLevel: ReadonlySet<string>,
  names: ReadonlySet<string> = new Set(),
): ReadonlySet<string> {
  const found = new Set(names);
  if (secondLevel.size === 0) return found;
  for (const domain of domains) {
    // The name label is one of the domain's labels: most of the ~4,000 known domains have no second-level name
    // among theirs, and skipping them spares their public-suffix lookup (a start-up cost of every process).
    if (!domain.split('.').some((label) => secondLevel.has(label))) continue;
    const name = nameLabel(domain);
    if (secondLevel.has(name)) found.add(name);
  }
  return found;
}

/**
 * Builds a suggester over custom lists (the built-in one is {@link defaultSuggester}).
 * @example
 * const suggester = createDomainSuggester({ domains: ['gmail.com'], topLevel: ['com'] });
 * suggester.suggest('gmial.com'); // 'gmail.com'
 * suggester.suggest('example.cmo'); // 'example.com'
 */
export function createDomainSuggester(lists: SuggestLists): DomainSuggester {
  const cacheSize = lists.cacheSize ?? DEFAULT_CACHE_SIZE;
  if (!Number.isInteger(cacheSize) || cacheSize < 1)
    throw new RangeError('cacheSize must be a positive integer');
  const { targets, secondary, known, topLevel } = listParts(lists);
  const secondLevel = (lists.secondLevel ?? []).map(normalize).filter((name) => name !== '');
  const secondLevelSet = new Set(secondLevel);
  return suggesterOf(
    buildIndex(targets, {
      isKnown: (domain) => known.has(domain),
      secondLevel,
      secondLevelSet,
      regionalSet: new Set([...secondLevel, ...(lists.regional ?? []).map(normalize)]),
      secondary: once(() => oneEditIndex(secondary)),
      topLevel,
      topLevelSet: new Set(topLevel),
      knownNames: once(() => namesOf(known, secondLevelSet)),
      cacheSize,
    }),
  );
}

/**
 * The suggester {@link createDomainSuggester} builds over the built-in lists, from what scripts/generate-data.js
 * computed of them (targets, slip lookups) and their sorted text (the known domains): a process that verifies one
 * address computes none of it (issue 30, cold start). test/typo/prebuilt.test.ts holds the two equal.
 */
function builtInSuggester(data: TypoData): DomainSuggester {
  const targets = targetsFrom(PREBUILT_TYPO_INDEX.targets);
  const isKnown = builtInKnown();
  const secondLevel = data.secondLevel.map(normalize).filter((name) => name !== '');
  const topLevel = data.topLevel.map(normalize).filter((suffix) => suffix !== '');
  const secondLevelSet = new Set(secondLevel);
  const secondary = once(() => targetDomainsOf(data.secondaryDomains));
  const known = (): Iterable<string> => [
    ...targets.map((target) => target.domain),
    ...secondary(),
    ...data.protected.map(normalize),
  ];
  const base = {
    isKnown,
    secondLevel,
    secondLevelSet,
    regionalSet: new Set([...secondLevel, ...data.regional.map(normalize)]),
    secondary: once(() => oneEditIndex(secondary())),
    topLevel,
    topLevelSet: new Set(topLevel),
    knownNames: once(() => namesOf(known(), secondLevelSet)),
    cacheSize: DEFAULT_CACHE_SIZE,
  };
  return suggesterOf(buildIndex(targets, base, slipsFrom(PREBUILT_TYPO_INDEX)));
}

let builtIn: DomainSuggester | undefined;

/** The suggester over the built-in lists (popular domains, second-level names, suffixes), built on first use. */
export function defaultSuggester(): DomainSuggester {
  builtIn ??= builtInSuggester(typoData());
  return builtIn;
}

/**
 * Suggests the domain a mistyped one was meant to be, from the built-in lists, or `null`.
 * Never suggests anything for a popular or otherwise known real domain.
 * @example
 * suggestDomain('gmial.com'); // 'gmail.com'
 * suggestDomain('hotmail.co'); // 'hotmail.com'
 * suggestDomain('web.com'); // null (a real domain, although mailcheck turns it into hey.com)
 */
export function suggestDomain(
  domain: string,
  suggester: DomainSuggester = defaultSuggester(),
): string | null {
  return suggester.suggest(domain);
}
