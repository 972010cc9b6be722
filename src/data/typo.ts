/**
 * The domain lists of typo suggestions (see docs/typo.md).
 * @module
 */
import { domains as freeDomains } from './generated/free.js';
import {
  popularDomains,
  protectedDomains,
  regionalNames,
  secondaryDomains,
  secondLevelNames,
  topLevelSuffixes,
} from './generated/typo.js';

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

const lines = (text: string): readonly string[] => Object.freeze(text === '' ? [] : text.split('\n'));

/** The built-in typo lists, split on first use. */
export function typoData(): TypoData {
  data ??= Object.freeze({
    domains: lines(popularDomains),
    secondaryDomains: lines(secondaryDomains),
    secondLevel: lines(secondLevelNames),
    regional: lines(regionalNames),
    topLevel: lines(topLevelSuffixes),
    protected: Object.freeze([...lines(freeDomains), ...lines(protectedDomains)]),
  });
  return data;
}
