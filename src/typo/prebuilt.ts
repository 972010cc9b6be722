/**
 * What a suggester derives from its lists before it can answer (targets split at their public suffix, the known
 * domains, the slip lookups), and the text form in which the built-in suggester's part of it is generated (issue
 * 30, cold start): scripts/generate-data.js computes it with {@link prebuild} from the built-in lists and writes
 * it into src/data/generated/typo.ts, and the built-in suggester reads it back with {@link targetsFrom} and
 * {@link slipsFrom} instead of computing it (a public-suffix lookup per target, a set of ~4,700 known domains,
 * ~14,000 ending comparisons) in every process that verifies an address.
 * @module
 */
import { type SlipIndex, slipIndex } from './slips.js';
import { charMask, normalize, type Target, targetDomainsOf, targetsOf } from './targets.js';

/** The lists a suggester's targets and slips come from (`SuggestLists` in ./suggest.ts). */
export interface TargetLists {
  /** Suggestion targets, most popular first. */
  readonly domains: readonly string[];
  /** Further targets, within one edit. @default [] */
  readonly secondaryDomains?: readonly string[];
  /** Real domains that are never corrected. @default [] */
  readonly protected?: readonly string[];
  /** Suffixes an unknown ending may be corrected to, most used first. @default [] */
  readonly topLevel?: readonly string[];
}

/** The lists, normalised, with the targets and the set of every known domain. */
export interface ListParts {
  /** Targets, ranked from 0 in list order. */
  readonly targets: readonly Target[];
  /** The secondary targets, normalised, malformed and repeated ones skipped. */
  readonly secondary: readonly string[];
  /** The targets, the secondary targets and the protected domains. */
  readonly known: ReadonlySet<string>;
  /** The suffixes, normalised, empty ones skipped. */
  readonly topLevel: readonly string[];
}

/**
 * Normalises the lists and splits the targets at their public suffix.
 * @example
 * listParts({ domains: ['gmail.com'], protected: ['web.de'] }).known.has('web.de'); // true
 */
export function listParts(lists: TargetLists): ListParts {
  const targets = targetsOf(lists.domains, 0);
  const secondary = targetDomainsOf(lists.secondaryDomains ?? []);
  const known = new Set([
    ...targets.map((target) => target.domain),
    ...secondary,
    ...(lists.protected ?? []).map(normalize),
  ]);
  const topLevel = (lists.topLevel ?? []).map(normalize).filter((suffix) => suffix !== '');
  return { targets, secondary, known, topLevel };
}

/**
 * The targets and slip lookups of a suggester as text: one entry per line, its fields separated by a space
 * (domain names hold none).
 */
export interface PrebuiltTypoIndex {
  /** The targets by rank: `domain suffix maxEdits` (the suffix as the public-suffix list splits the domain). */
  readonly targets: string;
  /** {@link SlipIndex.joined}: `key domain`, in insertion order, as every field below. */
  readonly joined: string;
  /** {@link SlipIndex.squashed}. */
  readonly squashed: string;
  /** {@link SlipIndex.bare}. */
  readonly bare: string;
  /** {@link SlipIndex.truncated}. */
  readonly truncated: string;
  /** {@link SlipIndex.doubled}. */
  readonly doubled: string;
}

const pairs = (map: ReadonlyMap<string, string>): string =>
  [...map].map(([key, domain]) => `${key} ${domain}`).join('\n');

/**
 * Computes the targets and slip lookups of `lists` as a suggester does, as text (what scripts/generate-data.js
 * writes for the built-in lists).
 * @example
 * prebuild({ domains: ['gmail.com'], topLevel: ['com'] }).targets; // 'gmail.com com 1'
 */
export function prebuild(lists: TargetLists): PrebuiltTypoIndex {
  const { targets, known, topLevel } = listParts(lists);
  const slips = slipIndex(targets, topLevel, (domain) => known.has(domain));
  return {
    targets: targets.map(({ domain, suffix, maxEdits }) => `${domain} ${suffix} ${maxEdits}`).join('\n'),
    joined: pairs(slips.joined),
    squashed: pairs(slips.squashed),
    bare: pairs(slips.bare),
    truncated: pairs(slips.truncated),
    doubled: pairs(slips.doubled),
  };
}

/** The non-empty lines of `text`, each split at its spaces. */
function rows(text: string): string[][] {
  return text === '' ? [] : text.split('\n').map((line) => line.split(' '));
}

/**
 * The targets of {@link PrebuiltTypoIndex.targets}, as `targetsOf` gives them.
 * @example
 * targetsFrom('gmail.com com 1')[0]?.name; // 'gmail'
 */
export function targetsFrom(text: string): Target[] {
  return rows(text).map(([domain = '', suffix = '', maxEdits = '0'], rank) => ({
    domain,
    rank,
    maxEdits: Number(maxEdits),
    mask: charMask(domain),
    name: domain.slice(0, Math.max(0, domain.length - suffix.length - 1)),
    suffix,
  }));
}

const lookup = (text: string): ReadonlyMap<string, string> =>
  new Map(rows(text).map(([key = '', domain = '']) => [key, domain]));

/**
 * The slip lookups of a {@link PrebuiltTypoIndex}, as `slipIndex` gives them.
 * @example
 * slipsFrom({ targets: '', joined: 'gmailcom gmail.com', squashed: '', bare: '', truncated: '', doubled: '' })
 *   .joined.get('gmailcom'); // 'gmail.com'
 */
export function slipsFrom(index: PrebuiltTypoIndex): SlipIndex {
  return {
    joined: lookup(index.joined),
    squashed: lookup(index.squashed),
    bare: lookup(index.bare),
    truncated: lookup(index.truncated),
    doubled: lookup(index.doubled),
  };
}
