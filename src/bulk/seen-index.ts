/**
 * The deduplication index of a job: each distinct address → its first position. `Map`s of the strings for jobs
 * held in memory; for jobs of a durable store, a hash table of 64-bit keyed hashes in typed arrays (about 24
 * bytes per distinct address, and no address strings kept), so that a job read from the store in windows keeps
 * flat memory.
 * @module
 */

/** Address → first position. */
export interface SeenIndex {
  get(email: string): number | undefined;
  set(email: string, position: number): void;
  /**
   * The position `email` was first seen at; when it was not seen yet, records it at `position` and returns
   * `undefined`. One lookup where `get` then `set` would take two.
   */
  claim(email: string, position: number): number | undefined;
  /** Forgets `email` (an add that was undone). */
  delete(email: string): void;
  clear(): void;
}

/** Maps of the exact index (a power of two). */
const SHARDS = 16;

/**
 * The shard of `email`: a cheap mix of its length and three of its characters (not a keyed hash: a crafted list
 * that puts every address into one shard only makes the index the single `Map` it would otherwise be).
 */
function shardOf(email: string): number {
  const n = email.length;
  let h = Math.imul(n, 0x9e3779b1);
  h = Math.imul(h ^ email.charCodeAt(n >> 1), 0x85ebca6b);
  h = Math.imul(h ^ email.charCodeAt(n >> 2), 0xc2b2ae35);
  h = Math.imul(h ^ email.charCodeAt((n * 3) >> 2), 0x27d4eb2d);
  return (h ^ (h >>> 15)) & (SHARDS - 1);
}

/**
 * The exact index: the address strings themselves, in {@link SHARDS} `Map`s chosen by a mix of a few characters.
 * One `Map` of a million addresses rehashes all of them at once when it grows (about 30 ms without an event-loop
 * turn, inside one slice of an add); each shard grows on its own, a sixteenth of that.
 */
export function exactSeenIndex(): SeenIndex {
  const maps = Array.from({ length: SHARDS }, () => new Map<string, number>());
  const mapOf = (email: string) => maps[shardOf(email)]!;
  return {
    get: (email) => mapOf(email).get(email),
    set(email, position) {
      mapOf(email).set(email, position);
    },
    claim(email, position) {
      const map = mapOf(email);
      const seen = map.get(email);
      if (seen === undefined) map.set(email, position);
      return seen;
    },
    delete(email) {
      mapOf(email).delete(email);
    },
    clear() {
      for (const map of maps) map.clear();
    },
  };
}

const EMPTY = -1;

/**
 * An index on a keyed 64-bit hash of each address (two independent 32-bit halves, each seeded at random per
 * index, so that nobody can craft two addresses that share a slot), both halves computed in one pass over the
 * text. Two different addresses are taken for one with a chance of about n² / 2⁶⁵ (one in a million for five
 * million distinct addresses of one job). Open addressing with linear probing, at most half full; a deletion
 * shifts the entries after it back (no tombstones).
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
  // The two halves of the last text hashed (one pass gives both).
  let high = 0;
  let low = 0;

  function hash(text: string): void {
    let a = seedA ^ 0x9e3779b9;
    let b = seedB ^ 0x9e3779b9;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      a = Math.imul(a ^ code, 0x85ebca6b);
      a ^= a >>> 13;
      b = Math.imul(b ^ code, 0x85ebca6b);
      b ^= b >>> 13;
    }
    a = Math.imul(a ^ (a >>> 16), 0xc2b2ae35);
    b = Math.imul(b ^ (b >>> 16), 0xc2b2ae35);
    high = (a ^ (a >>> 16)) >>> 0;
    low = (b ^ (b >>> 16)) >>> 0;
  }

  function home(h: number, l: number): number {
    return (h ^ Math.imul(l, 0x27d4eb2d)) & (capacity - 1);
  }

  function slotOf(h: number, l: number): number {
    let slot = home(h, l);
    while (positions[slot] !== EMPTY && (highs[slot] !== h || lows[slot] !== l)) {
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

  function put(slot: number, position: number): void {
    if (positions[slot] === EMPTY) size++;
    highs[slot] = high;
    lows[slot] = low;
    positions[slot] = position;
  }

  return {
    get(email) {
      hash(email);
      const position = positions[slotOf(high, low)]!;
      return position === EMPTY ? undefined : position;
    },
    set(email, position) {
      if ((size + 1) * 2 > capacity) grow();
      hash(email);
      put(slotOf(high, low), position);
    },
    claim(email, position) {
      if ((size + 1) * 2 > capacity) grow();
      hash(email);
      const slot = slotOf(high, low);
      const seen = positions[slot]!;
      if (seen !== EMPTY) return seen;
      put(slot, position);
      return undefined;
    },
    delete(email) {
      hash(email);
      let hole = slotOf(high, low);
      if (positions[hole] === EMPTY) return;
      positions[hole] = EMPTY;
      size--;
      // Backward shift: an entry after the hole that could live at or before it moves into it.
      let slot = (hole + 1) & (capacity - 1);
      while (positions[slot] !== EMPTY) {
        const wanted = home(highs[slot]!, lows[slot]!);
        if (((slot - wanted) & (capacity - 1)) >= ((slot - hole) & (capacity - 1))) {
          highs[hole] = highs[slot]!;
          lows[hole] = lows[slot]!;
          positions[hole] = positions[slot]!;
          positions[slot] = EMPTY;
          hole = slot;
        }
        slot = (slot + 1) & (capacity - 1);
      }
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
