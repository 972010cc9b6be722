/**
 * The deduplication index of a job: each distinct address → its first position. A `Map` of the strings for jobs
 * held in memory; for jobs of a durable store, a hash table of 64-bit keyed hashes in typed arrays (about 24
 * bytes per distinct address, and no address strings kept), so that a job read from the store in windows keeps
 * flat memory.
 * @module
 */

/** Address → first position. */
export interface SeenIndex {
  get(email: string): number | undefined;
  set(email: string, position: number): void;
  clear(): void;
}

/** The exact index: the address strings themselves. */
export function exactSeenIndex(): SeenIndex {
  return new Map<string, number>();
}

const EMPTY = -1;

/**
 * An index on a keyed 64-bit hash of each address (two independent 32-bit halves, each seeded at random per
 * index, so that nobody can craft two addresses that share a slot). Two different addresses are taken for one
 * with a chance of about n² / 2⁶⁵ (one in a million for five million distinct addresses of one job).
 */
export function hashedSeenIndex(): SeenIndex {
  // Web Crypto (a global in Node, browsers and workers): the bulk layer imports no node:* module.
  const [seedA, seedB] = Array.from(
    globalThis.crypto.getRandomValues(new Uint32Array(2)),
    (seed) => seed & 0x7fffffff,
  ) as [number, number];
  let capacity = 1024;
  let highs = new Uint32Array(capacity);
  let lows = new Uint32Array(capacity);
  let positions = new Int32Array(capacity).fill(EMPTY);
  let size = 0;

  function hash(text: string, seed: number): number {
    let h = seed ^ 0x9e3779b9;
    for (let i = 0; i < text.length; i++) {
      h = Math.imul(h ^ text.charCodeAt(i), 0x85ebca6b);
      h ^= h >>> 13;
    }
    h = Math.imul(h ^ (h >>> 16), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  function slotOf(high: number, low: number): number {
    let slot = (high ^ Math.imul(low, 0x27d4eb2d)) & (capacity - 1);
    while (positions[slot] !== EMPTY && (highs[slot] !== high || lows[slot] !== low)) {
      slot = (slot + 1) & (capacity - 1);
    }
    return slot;
  }

  function grow(): void {
    const old = { highs, lows, positions };
    capacity *= 2;
    highs = new Uint32Array(capacity);
    lows = new Uint32Array(capacity);
    positions = new Int32Array(capacity).fill(EMPTY);
    for (let i = 0; i < old.positions.length; i++) {
      if (old.positions[i] === EMPTY) continue;
      const slot = slotOf(old.highs[i]!, old.lows[i]!);
      highs[slot] = old.highs[i]!;
      lows[slot] = old.lows[i]!;
      positions[slot] = old.positions[i]!;
    }
  }

  return {
    get(email) {
      const position = positions[slotOf(hash(email, seedA), hash(email, seedB))]!;
      return position === EMPTY ? undefined : position;
    },
    set(email, position) {
      if ((size + 1) * 2 > capacity) grow();
      const high = hash(email, seedA);
      const low = hash(email, seedB);
      const slot = slotOf(high, low);
      if (positions[slot] === EMPTY) size++;
      highs[slot] = high;
      lows[slot] = low;
      positions[slot] = position;
    },
    clear() {
      capacity = 1024;
      highs = new Uint32Array(capacity);
      lows = new Uint32Array(capacity);
      positions = new Int32Array(capacity).fill(EMPTY);
      size = 0;
    },
  };
}
