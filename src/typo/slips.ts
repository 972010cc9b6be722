/**
 * Slips of punctuation and ending that an edit distance scores too high or cannot see: a doubled ending
 * (`gmail.com.com`), a left-out dot (`gmailcom.com`, `gmailcom`), no ending at all (`gmail`), an ending cut
 * short (`hotmail.c`), a comma or space for a dot (`gmail,com`, `gmail com`), and a doubled letter of a
 * three-letter name (`aoll.com`). Each repair gives a suggestion target only.
 * @module
 */
import type { Target } from './targets.js';

/** Lookups of the slips, built once from the targets; where two targets share a key, the earlier wins. */
export interface SlipIndex {
  /**
   * Targets by their text with the dot before a listed ending left out (`gmailcom` for `gmail.com`), for the
   * left-out-dot slip; an ending earlier in `topLevel` wins.
   */
  readonly joined: ReadonlyMap<string, string>;
  /** Targets by their text with every dot left out (`yahoocouk` for `yahoo.co.uk`). */
  readonly squashed: ReadonlyMap<string, string>;
  /** Targets by their name alone (`gmail` for `gmail.com`, `yahoo` for `yahoo.com`). */
  readonly bare: ReadonlyMap<string, string>;
  /** Targets by each shorter start of their last label (`hotmail.c` and `hotmail.co` for `hotmail.com`). */
  readonly truncated: ReadonlyMap<string, string>;
  /**
   * The doubled-letter variants of three-letter provider names (`aoll.com`, `msnn.com`, `gmxx.de`), which the
   * edit distance may not touch (every other one-edit variant of `aol` is somebody's real domain).
   */
  readonly doubled: ReadonlyMap<string, string>;
}

/** Length of the provider names whose only correction is a doubled letter (`aol`, `msn`, `gmx`, `web`). */
const SHORT_NAME = 3;
/** Characters typed for a dot: a comma (its neighbour on most keyboards) and white space. */
const SEPARATOR_SLIP = /[\s,]/;

function setFirst(map: Map<string, string>, key: string, domain: string): void {
  if (!map.has(key)) map.set(key, domain);
}

/**
 * Builds the slip lookups. `targets` come most popular first; `topLevel` lists the endings most used first;
 * `isKnown` tells real domains, which a doubled-letter variant must not be.
 */
export function slipIndex(
  targets: readonly Target[],
  topLevel: readonly string[],
  isKnown: (domain: string) => boolean,
): SlipIndex {
  const joined = new Map<string, string>();
  for (const ending of topLevel) {
    for (const { domain } of targets) {
      const head = domain.length - ending.length - 1;
      // At least two characters before the ending, as a typed name that merely is the ending is no slip.
      if (head < 2 || domain[head] !== '.' || !domain.endsWith(ending)) continue;
      setFirst(joined, `${domain.slice(0, head)}${ending}`, domain);
    }
  }
  const squashed = new Map<string, string>();
  const bare = new Map<string, string>();
  const truncated = new Map<string, string>();
  const doubled = new Map<string, string>();
  for (const { domain, name, suffix } of targets) {
    setFirst(squashed, domain.replaceAll('.', ''), domain);
    if (!name.includes('.')) setFirst(bare, name, domain);
    for (let end = domain.lastIndexOf('.') + 2; end < domain.length; end += 1) {
      setFirst(truncated, domain.slice(0, end), domain);
    }
    if (name.length !== SHORT_NAME || !/^[a-z]+$/.test(name)) continue;
    for (let i = 0; i < name.length; i++) {
      const variant = `${name.slice(0, i + 1)}${name.slice(i)}.${suffix}`;
      if (!isKnown(variant)) setFirst(doubled, variant, domain);
    }
  }
  return { joined, squashed, bare, truncated, doubled };
}

/**
 * The domain with commas and white space read as dots (runs of dots collapsed, none left at either end), or
 * `null` when it has neither.
 * @example
 * repairSeparators('gmail,com'); // 'gmail.com'
 * repairSeparators('gmail. com'); // 'gmail.com'
 * repairSeparators('gmail.com'); // null
 */
export function repairSeparators(domain: string): string | null {
  if (!SEPARATOR_SLIP.test(domain)) return null;
  return domain
    .replace(/[\s,]+/g, '.')
    .replace(/\.{2,}/g, '.')
    .replace(/^\.|\.$/g, '');
}

/**
 * A doubled ending (`gmail.com.com`) or a left-out dot before the ending (`gmailcom.com`), for a domain that
 * is exactly `name.suffix`; `targetSet` holds the targets.
 */
export function dottedSlip(
  slips: SlipIndex,
  targetSet: ReadonlySet<string>,
  domain: string,
  name: string,
  suffix: string,
): string | null {
  const last = domain.lastIndexOf('.');
  const ending = domain.slice(last); // '.com'
  if (domain.endsWith(ending, last)) {
    const rest = domain.slice(0, last);
    if (targetSet.has(rest)) return rest;
  }
  // `domain` is exactly `name.suffix` (no subdomain): the left-out dot is in `name`.
  const whole = domain.length === name.length + 1 + suffix.length && domain.charCodeAt(name.length) === 46;
  return whole ? (slips.joined.get(name) ?? null) : null;
}

/**
 * The target a domain without any dot was meant to be: a provider's name alone (`gmail`, `hotmail`) gives its
 * most popular domain, a domain with its dots left out (`gmailcom`, `yahoocouk`) that domain. Nothing else
 * is guessed: `gmai` may be a name still being typed (mailcheck's corpus expects no answer for it).
 */
export function dotlessSlip(slips: SlipIndex, text: string): string | null {
  return slips.bare.get(text) ?? slips.squashed.get(text) ?? null;
}
