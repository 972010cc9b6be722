/**
 * Targets found within one edit through their deletion neighbourhoods (the SymSpell idea): two strings one
 * insertion, deletion, substitution or adjacent swap apart share a string made by deleting at most one
 * character from each. A lookup costs one `Map` probe per character of the input, whatever the number of
 * targets, where a scan costs a comparison per target. The neighbourhood is kept as 32-bit polynomial hashes,
 * computed without building a string, behind a bit set that answers most probes of a miss without touching the
 * `Map`; a hash shared by chance is weeded out by the distance check.
 * @module
 */
import { osaDistance } from './distance.js';

/** Finds the targets one edit from a domain. */
export interface OneEditIndex {
  /** The earliest target (in list order) within one edit of `text` that `accept` takes, or `null`. */
  closest(text: string, accept: (domain: string) => boolean): string | null;
}

const BASE = 0x01000193;
/** Longer inputs are never looked up (no domain is longer than 253 characters). */
const MAX_TEXT = 256;
const powers = new Int32Array(MAX_TEXT + 1);
powers[0] = 1;
for (let k = 1; k <= MAX_TEXT; k += 1) powers[k] = Math.imul(powers[k - 1]!, BASE);
/** Prefix and suffix hashes of the text being hashed: one text at a time, as JavaScript runs one call at a time. */
const prefix = new Int32Array(MAX_TEXT + 1);
const suffix = new Int32Array(MAX_TEXT + 2);
/** Bits of the hash that select a bit of the filter: 2^18 bits (32 KB), about 2% set by 500 targets. */
const FILTER_BITS = 18;

/** Fills `prefix` and `suffix` for `text` (at most {@link MAX_TEXT} characters). */
function hashParts(text: string): void {
  const n = text.length;
  prefix[0] = 0;
  for (let i = 0; i < n; i += 1) prefix[i + 1] = (Math.imul(prefix[i]!, BASE) + text.charCodeAt(i)) | 0;
  suffix[n] = 0;
  for (let i = n - 1; i >= 0; i -= 1) {
    suffix[i] = (Math.imul(text.charCodeAt(i), powers[n - 1 - i]!) + suffix[i + 1]!) | 0;
  }
}

/**
 * The hash of the text last given to {@link hashParts}, of length `n`, with the character at `deleted`
 * left out, or of the whole text for `deleted === n`. Equal strings hash equally whichever way they were made.
 */
function neighbourHash(n: number, deleted: number): number {
  if (deleted === n) return prefix[n]!;
  return (Math.imul(prefix[deleted]!, powers[n - 1 - deleted]!) + suffix[deleted + 1]!) | 0;
}

/** The bit of the filter for `hash`. */
const filterBit = (hash: number): number => Math.imul(hash, 0x9e3779b1) >>> (32 - FILTER_BITS);

/**
 * Indexes `domains` (in the order that breaks ties) for {@link OneEditIndex.closest}; entries longer than 256
 * characters are left out.
 * @example
 * oneEditIndex(['gazeta.pl', 'sapo.pt']).closest('gazeta.pk', () => true); // 'gazeta.pl'
 */
export function oneEditIndex(domains: readonly string[]): OneEditIndex {
  const positions = new Map<number, number[]>();
  const filter = new Uint32Array((1 << FILTER_BITS) / 32);
  domains.forEach((domain, position) => {
    const n = domain.length;
    if (n > MAX_TEXT) return;
    hashParts(domain);
    for (let deleted = 0; deleted <= n; deleted += 1) {
      const hash = neighbourHash(n, deleted);
      const bit = filterBit(hash);
      filter[bit >>> 5]! |= 1 << (bit & 31);
      const list = positions.get(hash);
      if (list === undefined) positions.set(hash, [position]);
      else if (list[list.length - 1] !== position) list.push(position);
    }
  });
  return {
    closest(text, accept) {
      const n = text.length;
      if (n > MAX_TEXT || positions.size === 0) return null;
      hashParts(text);
      let best = Number.POSITIVE_INFINITY;
      for (let deleted = 0; deleted <= n; deleted += 1) {
        // A deletion that repeats the previous one (`ll`: either `l`) gives the same string.
        if (deleted > 0 && deleted < n && text.charCodeAt(deleted) === text.charCodeAt(deleted - 1)) continue;
        const hash = neighbourHash(n, deleted);
        const bit = filterBit(hash);
        if ((filter[bit >>> 5]! & (1 << (bit & 31))) === 0) continue;
        const list = positions.get(hash);
        if (list === undefined) continue;
        for (const position of list) {
          if (position >= best) break;
          const domain = domains[position]!;
          if (osaDistance(text, domain, 1) <= 1 && accept(domain)) best = position;
        }
      }
      return best === Number.POSITIVE_INFINITY ? null : domains[best]!;
    },
  };
}
