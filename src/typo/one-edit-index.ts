/**
 * Targets within one edit of a domain, for a list of a few hundred, cheap enough to ask on every memo miss.
 * One edit (an insertion, deletion, substitution or swap of two neighbours) leaves intact either the domain's
 * last two characters (the edit is in the name or the rest of the suffix: `gazzeta.pl`, `walla.cp.il`) or its
 * first label (the edit is in the ending: `gazeta.pk`, `walla.co.jl`). So the targets are grouped by their last
 * two characters and length, and by the first two characters and length of their first label; both keys are
 * small integers read off the text, so a lookup builds no string and hashes none. It scans the few targets of
 * the groups one edit can reach that their {@link charMask} leaves possible, and confirms with the distance. Only
 * a swap of the last dot with the letter after it (`sapop.t`) is not found.
 * @module
 */
import { osaDistance } from './distance.js';
import { bitCount, charMask } from './targets.js';

/** Finds the targets one edit from a domain. */
export interface OneEditIndex {
  /** The earliest target (in list order) within one edit of `text` that `accept` takes, or `null`. */
  closest(text: string, accept: (domain: string) => boolean): string | null;
}

/** Targets that share a key: parallel arrays, in list order. */
interface Group {
  readonly lengths: number[];
  readonly masks: number[];
  readonly positions: number[];
}

/** The key of the last two characters of `text` (at least two characters long) and of `length`. */
function endKey(text: string, length: number): number {
  const n = text.length;
  return (
    ((Math.min(length, 255) << 16) |
      ((text.charCodeAt(n - 2) & 0xff) << 8) |
      (text.charCodeAt(n - 1) & 0xff)) >>>
    0
  );
}

/** The key of the first label of `text` (up to its first dot, at `dot`): its first two characters and length. */
function startKey(text: string, dot: number): number {
  const second = dot > 1 ? text.charCodeAt(1) & 0xff : 0;
  return ((Math.min(dot, 255) << 16) | ((text.charCodeAt(0) & 0xff) << 8) | second) >>> 0;
}

function add(groups: Map<number, Group>, key: number, domain: string, position: number): void {
  let group = groups.get(key);
  if (group === undefined) {
    group = { lengths: [], masks: [], positions: [] };
    groups.set(key, group);
  }
  group.lengths.push(domain.length);
  group.masks.push(charMask(domain));
  group.positions.push(position);
}

/**
 * Indexes `domains` (in the order that breaks ties) for {@link OneEditIndex.closest}; entries without a dot
 * after their first character are left out.
 * @example
 * oneEditIndex(['gazeta.pl', 'sapo.pt']).closest('gazeta.pk', () => true); // 'gazeta.pl'
 */
export function oneEditIndex(domains: readonly string[]): OneEditIndex {
  const byEnd = new Map<number, Group>();
  const byStart = new Map<number, Group>();
  domains.forEach((domain, position) => {
    const dot = domain.indexOf('.');
    if (dot < 1 || domain.length < dot + 2) return;
    add(byEnd, endKey(domain, domain.length), domain, position);
    add(byStart, startKey(domain, dot), domain, position);
  });
  return {
    closest(text, accept) {
      const dot = text.indexOf('.');
      if (dot < 1 || text.length < 3) return null;
      const n = text.length;
      const groups = [
        byEnd.get(endKey(text, n - 1)),
        byEnd.get(endKey(text, n)),
        byEnd.get(endKey(text, n + 1)),
        byStart.get(startKey(text, dot)),
      ];
      let mask = 0;
      let best = -1;
      for (const group of groups) {
        if (group === undefined) continue;
        if (mask === 0) mask = charMask(text);
        const { lengths, masks, positions } = group;
        for (let i = 0; i < positions.length; i += 1) {
          const position = positions[i]!;
          if (best >= 0 && position >= best) break;
          if (Math.abs(lengths[i]! - text.length) > 1 || bitCount(mask ^ masks[i]!) > 2) continue;
          const domain = domains[position]!;
          if (osaDistance(text, domain, 1) <= 1 && accept(domain)) best = position;
        }
      }
      return best < 0 ? null : domains[best]!;
    },
  };
}
