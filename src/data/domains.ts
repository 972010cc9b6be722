/**
 * Domain matching shared by the lists: entries normalised one way, parents walked label by label.
 * @module
 */
import type { AddressParts } from '../checks/types.js';
import type { Lookup } from './lookup.js';

/**
 * Normalises a domain entry as given by a caller: trimmed, lower case, without a leading `@` or `.` and
 * without a trailing dot.
 * @example
 * normalizeDomainEntry(' @Mailinator.COM. '); // 'mailinator.com'
 */
export function normalizeDomainEntry(entry: string): string {
  return entry.trim().toLowerCase().replace(/^[@.]/, '').replace(/\.$/, '');
}

/**
 * True when `domain` or one of its parent domains is on the list: `a.b.example.com` is checked as
 * `a.b.example.com`, `b.example.com`, `example.com` and `com`. At most one lookup per label.
 */
export function domainOrParentIn(list: Lookup, domain: string): boolean {
  let name = domain;
  for (;;) {
    if (list.has(name)) return true;
    const dot = name.indexOf('.');
    if (dot < 0) return false;
    name = name.slice(dot + 1);
  }
}

/**
 * True when an address is on a caller's blocklist or allowlist: its whole address (case-insensitive) or
 * its domain or a parent of its domain, in ASCII or Unicode form. A domain literal matches only exactly.
 */
export function addressListed(entries: ReadonlySet<string>, address: AddressParts): boolean {
  if (entries.size === 0) return false;
  const local = address.local.toLowerCase();
  const { domain, unicodeDomain } = address;
  if (entries.has(`${local}@${domain}`)) return true;
  if (address.literalAddress !== null) return entries.has(domain) || entries.has(address.literalAddress);
  if (domainOrParentIn(entries, domain)) return true;
  return (
    unicodeDomain !== domain &&
    (entries.has(`${local}@${unicodeDomain}`) || domainOrParentIn(entries, unicodeDomain))
  );
}
