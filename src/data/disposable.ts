/**
 * The disposable-domain list (mailchecker, see docs/lists.md) and its lookups.
 * @module
 */
import type { ListPatch } from '../options.js';
import { domainOrParentIn, normalizeDomainEntry } from './domains.js';
import { domains, exactDomains } from './generated/disposable.js';
import { EMPTY, isReplacement, type Lookup, memoByPatch, patched, sortedList } from './lookup.js';

/** Tells whether a domain is disposable. */
export interface DomainMatcher {
  /** True when `domain` (ASCII or Unicode form, lower case) is on the list, itself or through a parent. */
  matches(domain: string): boolean;
}

const treeLookup = sortedList(domains);
const exactLookup = sortedList(exactDomains);

function matcher(subtree: Lookup, exactOnly: Lookup): DomainMatcher {
  return { matches: (domain) => exactOnly.has(domain) || domainOrParentIn(subtree, domain) };
}

/** The built-in list (the hot path of every verification). */
const BUILT_IN = matcher(treeLookup, exactLookup);

const withPatch = memoByPatch((patch: ListPatch): DomainMatcher => {
  const subtree = patched(treeLookup, patch, normalizeDomainEntry);
  if (isReplacement(patch)) return matcher(subtree, EMPTY);
  return matcher(subtree, patched(exactLookup, { remove: patch.remove ?? [] }, normalizeDomainEntry));
});

/**
 * The disposable list with the caller's patch applied (`lists.disposable`). A listed domain matches its
 * subdomains, except the few built-in entries that are public suffixes (dynamic-DNS and free-subdomain
 * services such as `ddns.net`), where each subdomain has a different owner: those match only exactly.
 * Patches are cached by identity, so a lookup costs O(labels).
 * @example
 * disposableDomains().matches('mailinator.com'); // true
 * disposableDomains().matches('inbox.mailinator.com'); // true
 * disposableDomains({ remove: ['mailinator.com'] }).matches('mailinator.com'); // false
 */
export function disposableDomains(patch?: ListPatch): DomainMatcher {
  return patch === undefined ? BUILT_IN : withPatch(patch);
}

/**
 * True when `domain` (or a parent of it) is a disposable domain.
 * @example
 * isDisposableDomain('yopmail.com'); // true
 * isDisposableDomain('gmail.com'); // false
 */
export function isDisposableDomain(domain: string, patch?: ListPatch): boolean {
  return disposableDomains(patch).matches(normalizeDomainEntry(domain));
}
