/**
 * The deduplication index of a job: each distinct address → its first position. `Map`s of the strings for jobs
 * held in memory; for jobs of a durable store, hash tables of 64-bit keyed hashes in typed arrays (16-32
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

/** Maps of the exact index, and tables of the hashed one (16: {@link hashedSeenIndex} picks by the top 4 bits). */
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
/** Slots of a new table of the hashed index (each of its {@link SHARDS} tables). */
const FIRST_SLOTS = 64;

/**
 * One open-addressing table of the hashed index: 64-bit keys as two `Uint32Array`s and positions in an
 * `Int32Array` (12 bytes a slot), linear probing, at most three quarters full; a deletion shifts the entries after
 * it back (no tombstones).
 */
class HashTable {
  capacity = FIRST_SLOTS;
  highs = new Uint32Array(FIRST_SLOTS);
  lows = new Uint32Array(FIRST_SLOTS);
  positions = new Int32Array(FIRST_SLOTS).fill(EMPTY);
  size = 0;

  home(h: number, l: number): number {
    return (h ^ Math.imul(l, 0x27d4eb2d)) & (this.capacity - 1);
  }

  slotOf(h: number, l: number): number {
    const { highs, lows, positions } = this;
    const mask = this.capacity - 1;
    let slot = this.home(h, l);
    while (positions[slot] !== EMPTY && (highs[slot] !== h || lows[slot] !== l)) slot = (slot + 1) & mask;
    return slot;
  }

  /** Makes room for one more entry (doubles the table past three quarters full). */
  reserve(): void {
    if ((this.size + 1) * 4 <= this.capacity * 3) return;
    const old = { highs: this.highs, lows: this.lows, positions: this.positions };
    this.capacity *= 2;
    this.highs = new Uint32Array(this.capacity);
    this.lows = new Uint32Array(this.capacity);
    this.positions = new Int32Array(this.capacity).fill(EMPTY);
    for (let i = 0; i < old.positions.length; i++) {
      if (old.positions[i] === EMPTY) continue;
      const slot = this.slotOf(old.highs[i]!, old.lows[i]!);
      this.highs[slot] = old.highs[i]!;
      this.lows[slot] = old.lows[i]!;
      this.positions[slot] = old.positions[i]!;
    }
  }

  put(slot: number, h: number, l: number, position: number): void {
    if (this.positions[slot] === EMPTY) this.size++;
    this.highs[slot] = h;
    this.lows[slot] = l;
    this.positions[slot] = position;
  }

  remove(h: number, l: number): void {
    const { highs, lows, positions } = this;
    const mask = this.capacity - 1;
    let hole = this.slotOf(h, l);
    if (positions[hole] === EMPTY) return;
    positions[hole] = EMPTY;
    this.size--;
    // Backward shift: an entry after the hole that could live at or before it moves into it.
    let slot = (hole + 1) & mask;
    while (positions[slot] !== EMPTY) {
      const wanted = this.home(highs[slot]!, lows[slot]!);
      if (((slot - wanted) & mask) >= ((slot - hole) & mask)) {
        highs[hole] = highs[slot]!;
        lows[hole] = lows[slot]!;
        positions[hole] = positions[slot]!;
        positions[slot] = EMPTY;
        hole = slot;
      }
      slot = (slot + 1) & mask;
    }
  }
}

/**
 * An index on a keyed 64-bit hash of each address (two independent 32-bit halves, each seeded at random per
 * index, so that nobody can craft two addresses that share a slot), both halves computed in one pass over the
 * text. Two different addresses are taken for one with a chance of about n² / 2⁶⁵ (one in a million for five
 * million distinct addresses of one job). The keys are spread over {@link SHARDS} tables by their top bits, each
 * at most three quarters full: 16-32 bytes per distinct address, and a table that doubles copies a sixteenth of
 * the index (one table of a million addresses took about 35 ms, and held the old and new arrays at once).
 */
export function hashedSeenIndex(): SeenIndex {
  // Web Crypto (a global in Node, browsers and workers): the bulk layer imports no node:* module.
  const [seedA, seedB] = Array.from(
    globalThis.crypto.getRandomValues(new Uint32Array(2)),
    (seed) => seed & 0x7fffffff,
  ) as [number, number];
  let tables = Array.from({ length: SHARDS }, () => new HashTable());
  // The two halves of the last text hashed (one pass gives both), and the table they belong to.
  let high = 0;
  let low = 0;
  let table = tables[0]!;

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
    table = tables[high >>> 28]!;
  }

  return {
    get(email) {
      hash(email);
      const position = table.positions[table.slotOf(high, low)]!;
      return position === EMPTY ? undefined : position;
    },
    set(email, position) {
      hash(email);
      table.reserve();
      table.put(table.slotOf(high, low), high, low, position);
    },
    claim(email, position) {
      hash(email);
      table.reserve();
      const slot = table.slotOf(high, low);
      const seen = table.positions[slot]!;
      if (seen !== EMPTY) return seen;
      table.put(slot, high, low, position);
      return undefined;
    },
    delete(email) {
      hash(email);
      table.remove(high, low);
    },
    clear() {
      tables = Array.from({ length: SHARDS }, () => new HashTable());
    },
  };
}
