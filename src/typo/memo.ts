/**
 * A bounded memo for the suggester: two generations of plain `Map`s. Cheaper per call than an exact LRU (no
 * recency list to update on every hit), and as good for lists that repeat domains: an entry used in the last
 * half of the capacity stays.
 * @module
 */

/** A cache of at most `capacity` entries that keeps the recently used ones. */
export class GenerationalMemo<V> {
  readonly #half: number;
  #young = new Map<string, V>();
  #old = new Map<string, V>();

  /** `capacity`: the most entries held (a positive integer). */
  constructor(capacity: number) {
    this.#half = Math.max(1, Math.ceil(capacity / 2));
  }

  /** The value for `key`, or `undefined`; a hit in the older generation moves the entry to the younger. */
  get(key: string): V | undefined {
    const young = this.#young.get(key);
    if (young !== undefined) return young;
    const old = this.#old.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  /** Stores `value`; when the younger generation is full, it becomes the older one and the oldest is dropped. */
  set(key: string, value: V): void {
    this.#young.set(key, value);
    if (this.#young.size >= this.#half) {
      this.#old = this.#young;
      this.#young = new Map();
    }
  }

  /** Entries held (at most the capacity). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }
}
