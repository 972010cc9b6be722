/**
 * The queue of requests waiting for a connection to one MX host: first come first served, with O(1) append,
 * removal of any member (a request that gives up, or boards another's command group) and removal at the front.
 * An array with a head index and holes, each member knowing its slot, compacted on append when the dead part
 * grows: tens of thousands of requests waiting on one MX cost the same per request as ten.
 * @module
 */

/** A member of a {@link WaiterQueue}: it carries its own membership flag. */
export interface Queued {
  /** True while in a queue (set and cleared by the queue). */
  queued: boolean;
  /** Where it sits in the queue's array (kept by the queue). */
  slot: number;
}

/** A first-in first-out queue with O(1) removal of any member. */
export class WaiterQueue<T extends Queued> {
  #items: (T | undefined)[] = [];
  #head = 0;
  #size = 0;

  /** Members in the queue. */
  get length(): number {
    return this.#size;
  }

  /** Appends `item` at the back. */
  push(item: T): void {
    this.#compact();
    item.slot = this.#items.length;
    this.#items.push(item);
    item.queued = true;
    this.#size++;
  }

  /** Puts `item` at the front (a request queued again after losing its session). */
  unshift(item: T): void {
    if (this.#head === 0) {
      this.#items.unshift(undefined);
      for (let index = 1; index < this.#items.length; index++) {
        const moved = this.#items[index];
        if (moved !== undefined) moved.slot = index;
      }
      this.#head = 1;
    }
    this.#head--;
    this.#items[this.#head] = item;
    item.slot = this.#head;
    item.queued = true;
    this.#size++;
  }

  /** Takes `item` out wherever it is; returns false when it was not in the queue. */
  remove(item: T): boolean {
    if (!item.queued || this.#items[item.slot] !== item) return false;
    item.queued = false;
    this.#size--;
    this.#items[item.slot] = undefined;
    if (item.slot === this.#head) this.#advance();
    return true;
  }

  /** The members in order, from the front; members removed meanwhile are skipped. */
  *[Symbol.iterator](): IterableIterator<T> {
    // The array of this moment: a compaction on a push meanwhile replaces it, and members removed meanwhile
    // are skipped by their flag.
    const items = this.#items;
    for (let index = this.#head; index < items.length; index++) {
      const item = items[index];
      if (item?.queued === true) yield item;
    }
  }

  /** Empties the queue and returns its members, in order. */
  drain(): T[] {
    const members = [...this];
    for (const item of members) item.queued = false;
    this.#items = [];
    this.#head = 0;
    this.#size = 0;
    return members;
  }

  #advance(): void {
    while (this.#head < this.#items.length && this.#items[this.#head] === undefined) this.#head++;
  }

  /**
   * Drops the dead part of the array once it is large; only on `push`, never while the queue is being walked
   * (removals leave holes that iteration skips).
   */
  #compact(): void {
    if (this.#size === 0) {
      this.#items = [];
      this.#head = 0;
      return;
    }
    if (this.#head < 1024 || this.#head * 2 < this.#items.length) return;
    const live = this.#items.slice(this.#head).filter((item): item is T => item?.queued === true);
    live.forEach((item, index) => {
      item.slot = index;
    });
    this.#items = live;
    this.#head = 0;
  }
}
