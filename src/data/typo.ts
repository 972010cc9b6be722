/**
 * The domain lists of typo suggestions (see docs/typo.md).
 * @module
 */
import type { PrebuiltTypoIndex } from '../typo/prebuilt.js';
import { freeDomains as freeLookup } from './free.js';
import { domains as freeDomains } from './generated/free.js';
import {
  popularDomains,
  protectedDomains,
  regionalNames,
  secondaryDomains,
  secondLevelNames,
  slipBare,
  slipDoubled,
  slipJoined,
  slipSquashed,
  slipTruncated,
  topLevelSuffixes,
  typoTargets,
} from './generated/typo.js';
import { sortedList } from './lookup.js';

/** The built-in lists of typo suggestions. */
export interface TypoData {
  /** Suggestion targets, most popular first. */
  readonly domains: readonly string[];
  /** Secondary targets, within one edit: the free providers under a country suffix (gazeta.pl, sapo.pt). */
  readonly secondaryDomains: readonly string[];
  /** Names of providers present under many suffixes (yahoo, hotmail, ...). */
  readonly secondLevel: readonly string[];
  /** Names whose domains under a country suffix are never moved to another country's (home, mail, yahoo). */
  readonly regional: readonly string[];
  /** Suffixes an unknown ending may be corrected to, most used first. */
  readonly topLevel: readonly string[];
  /** Real domains never corrected into another: the free list and a few more. */
  readonly protected: readonly string[];
}

let data: TypoData | undefined;
let protectedList: readonly string[] | undefined;

const lines = (text: string): readonly string[] => Object.freeze(text === '' ? [] : text.split('\n'));

/**
 * The built-in typo lists, split on first use; `protected` (the ~4,100 domains of the free and protected lists) on
 * its first read, which the built-in suggester leaves to its rare second-level corrections.
 */
export function typoData(): TypoData {
  data ??= Object.freeze({
    domains: lines(popularDomains),
    secondaryDomains: lines(secondaryDomains),
    secondLevel: lines(secondLevelNames),
    regional: lines(regionalNames),
    topLevel: lines(topLevelSuffixes),
    get protected() {
      protectedList ??= Object.freeze([...lines(freeDomains), ...lines(protectedDomains)]);
      return protectedList;
    },
  });
  return data;
}

/**
 * The built-in suggester's targets and slip lookups, computed from the lists above by scripts/generate-data.js
 * (src/typo/prebuilt.ts), so that no process computes them at start.
 */
export const PREBUILT_TYPO_INDEX: PrebuiltTypoIndex = Object.freeze({
  targets: typoTargets,
  joined: slipJoined,
  squashed: slipSquashed,
  bare: slipBare,
  truncated: slipTruncated,
  doubled: slipDoubled,
});

let known: ((domain: string) => boolean) | undefined;

/**
 * The known domains of the built-in lists (targets, secondary targets, the free list, the protected list), which
 * typo suggestions never correct: the generated sorted lists searched (./lookup.ts; the free list's lookup is the
 * one of ./free.ts), so that a process that verifies one address builds no set of ~4,700 domains. `domain` is
 * normalised (lower case, no trailing dot).
 * @example
 * builtInKnown()('gmail.com'); // true
 */
export function builtInKnown(): (domain: string) => boolean {
  if (known === undefined) {
    const popular = new Set(typoData().domains);
    const lists = [sortedList(secondaryDomains), freeLookup(), sortedList(protectedDomains)];
    known = (domain) => popular.has(domain) || lists.some((list) => list.has(domain));
  }
  return known;
}
