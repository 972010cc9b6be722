/**
 * The disposable and free answers for a domain, memoised: real lists repeat their domains, and an answer costs a
 * look-up of the domain and of each of its parents in the disposable list (`a.b.example.com`, `b.example.com`,
 * `example.com`, `com`) and one in the free list; a memo hit is one `Map` look-up.
 * @module
 */
import { GenerationalMemo } from '../typo/memo.js';
import { weakMemo } from '../weak-memo.js';
import type { DomainMatcher } from './disposable.js';
import type { Lookup } from './lookup.js';

/** The answers for one domain. */
export interface DomainAnswers {
  /** The domain, or a parent of it, is on the disposable list. */
  readonly disposable: boolean;
  /** The domain is on the free-provider list. */
  readonly free: boolean;
}

/** Most domains whose answers are kept per pair of lists (at most a few MB, as the typo memo). */
export const DOMAIN_ANSWERS_CACHE_SIZE = 65_536;

/** The four possible answers, shared: a memo entry holds a reference, not an object of its own. */
const ANSWERS: readonly DomainAnswers[] = [
  { disposable: false, free: false },
  { disposable: true, free: false },
  { disposable: false, free: true },
  { disposable: true, free: true },
];

/** A memo per pair of lists (the built-in lists are one pair; each patched list is kept once per patch). */
const memoOf = weakMemo((_disposable: DomainMatcher) =>
  weakMemo((_free: Lookup) => new GenerationalMemo<DomainAnswers>(DOMAIN_ANSWERS_CACHE_SIZE)),
);

/**
 * Whether `domain` (ASCII form) or, for an IDN, its Unicode form `unicodeDomain` is disposable (itself or a parent
 * on `disposable`) and free (on `free`). Answers are memoised per pair of list objects, which must not change
 * once in use (the built-in lists, and patched lists made once per patch, do not).
 * @example
 * domainAnswers(disposableDomains(), freeDomains(), 'gmail.com', 'gmail.com'); // { disposable: false, free: true }
 */
export function domainAnswers(
  disposable: DomainMatcher,
  free: Lookup,
  domain: string,
  unicodeDomain: string,
): DomainAnswers {
  const memo = memoOf(disposable)(free);
  const idn = unicodeDomain !== domain;
  const key = idn ? `${domain} ${unicodeDomain}` : domain;
  const known = memo.get(key);
  if (known !== undefined) return known;
  const isDisposable = disposable.matches(domain) || (idn && disposable.matches(unicodeDomain));
  const isFree = free.has(domain) || (idn && free.has(unicodeDomain));
  const answers = ANSWERS[(isDisposable ? 1 : 0) + (isFree ? 2 : 0)]!;
  memo.set(key, answers);
  return answers;
}
