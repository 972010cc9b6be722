/**
 * The free consumer-provider list (email-providers and the popular domains, see docs/lists.md).
 * @module
 */
import type { ListPatch } from '../options.js';
import { normalizeDomainEntry } from './domains.js';
import { domains } from './generated/free.js';
import { type Lookup, memoByPatch, patched, sortedList } from './lookup.js';

const BUILT_IN: Lookup = sortedList(domains);

const withPatch = memoByPatch((patch: ListPatch) => patched(BUILT_IN, patch, normalizeDomainEntry));

/**
 * The free-provider list with the caller's patch applied (`lists.free`). Only the domain itself matches
 * (a subdomain of a provider is not a consumer mailbox domain). Patches are cached by identity.
 * @example
 * freeDomains().has('gmail.com'); // true
 * freeDomains({ add: ['corp-webmail.example'] }).has('corp-webmail.example'); // true
 */
export function freeDomains(patch?: ListPatch): Lookup {
  return patch === undefined ? BUILT_IN : withPatch(patch);
}

/**
 * True when `domain` is a free consumer mail provider.
 * @example
 * isFreeDomain('GMAIL.com'); // true
 */
export function isFreeDomain(domain: string, patch?: ListPatch): boolean {
  return freeDomains(patch).has(normalizeDomainEntry(domain));
}
