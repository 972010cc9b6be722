/**
 * Suggestion targets: a domain split at its public suffix, with the edits it tolerates.
 * @module
 */
import { parse } from '#tldts';

/** A suggestion target with the edits it tolerates. */
export interface Target {
  readonly domain: string;
  readonly rank: number;
  readonly maxEdits: number;
  /** {@link charMask} of the domain. */
  readonly mask: number;
  /** The domain without its public suffix (`yahoo` in `yahoo.com.br`). */
  readonly name: string;
  /** The public suffix (`com.br`). */
  readonly suffix: string;
}

/** tldts options: the input is a bare domain, never a URL or an IP address. */
export const PARSE = {
  extractHostname: false,
  validateHostname: false,
  detectIp: false,
  mixedInputs: false,
} as const;

/** The longest domain name (RFC 1035). */
export const MAX_DOMAIN = 253;

/**
 * Edits tolerated by a target, from the length of its name label (`gmail` in `gmail.com`): none for
 * names of up to 3 characters (`aol`, `gmx`, `qq`: every one-edit variant is somebody's real domain),
 * 1 up to 8 (`gmail`, `hotmail`, `fastmail`), 2 beyond (`protonmail`, `btinternet`).
 * @example
 * editsFor('aol'.length); // 0
 * editsFor('gmail'.length); // 1
 */
export function editsFor(nameLength: number): number {
  return nameLength <= 3 ? 0 : nameLength <= 8 ? 1 : 2;
}

/** The last label before the public suffix (`gmail` in `gmail.com`, `yahoo` in `mail.yahoo.co.uk`). */
export function nameLabel(domain: string): string {
  return nameLabelOf(domain, parse(domain, PARSE));
}

/** {@link nameLabel} from the domain's public-suffix split, for callers that have it already. */
function nameLabelOf(domain: string, info: ReturnType<typeof parse>): string {
  const name = info.domainWithoutSuffix ?? '';
  const label = name.slice(name.lastIndexOf('.') + 1);
  return label === '' ? domain.slice(0, Math.max(0, domain.indexOf('.'))) : label;
}

/**
 * One bit per character present (by code unit, modulo 32). One edit changes at most two bits, so two
 * strings whose masks differ in more than `2k` bits are more than `k` edits apart: a cheap filter that
 * spares most distance computations.
 */
export function charMask(text: string): number {
  let mask = 0;
  for (let i = 0; i < text.length; i += 1) mask |= 1 << (text.charCodeAt(i) & 31);
  return mask;
}

/** The number of set bits of a 32-bit integer. */
export function bitCount(value: number): number {
  let v = value - ((value >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/** Lower case, surrounding space and one trailing dot (the root) removed. */
export function normalize(domain: string): string {
  const lower = domain.trim().toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * The domains of a list that can be targets, normalised, in list order; malformed and repeated ones skipped.
 * @example
 * targetDomainsOf(['Gmail.com.', 'gmail.com', 'localhost']); // ['gmail.com']
 */
export function targetDomainsOf(domains: readonly string[]): string[] {
  const found = new Set<string>();
  for (const entry of domains) {
    const domain = normalize(entry);
    if (domain === '' || !domain.includes('.') || domain.length > MAX_DOMAIN) continue;
    found.add(domain);
  }
  return [...found];
}

/** Targets from a list of domains, ranked from `firstRank` in list order; malformed and repeated ones skipped. */
export function targetsOf(domains: readonly string[], firstRank: number): Target[] {
  return targetDomainsOf(domains).map((domain, index) => {
    const info = parse(domain, PARSE);
    const suffix = info.publicSuffix ?? domain.slice(domain.lastIndexOf('.') + 1);
    const name = domain.slice(0, Math.max(0, domain.length - suffix.length - 1));
    const maxEdits = editsFor(nameLabelOf(domain, info).length);
    return { domain, rank: firstRank + index, maxEdits, mask: charMask(domain), name, suffix };
  });
}
