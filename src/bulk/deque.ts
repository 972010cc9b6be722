/**
 * A first-in first-out queue on a growable ring buffer: O(1) push and shift without `Array#shift`'s copying.
 * @module
 */

/** A FIFO queue. */
export class Deque<T> {
  #items: (T | undefined)[] = new Array<T | undefined>(16);
  #head = 0;
  #size = 0;

  /** Number of queued items. */
  get length(): number {
    return this.#size;
  }

  /** Appends an item at the tail. */
  push(item: T): void {
    if (this.#size === this.#items.length) this.#grow();
    this.#items[(this.#head + this.#size) & (this.#items.length - 1)] = item;
    this.#size++;
  }

  /** The item at the head, or `undefined` when empty. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#items[this.#head];
  }

  /** Removes and returns the item at the head, or `undefined` when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#items.length - 1);
    this.#size--;
    return item;
  }

  /** Removes every item. */
  clear(): void {
    this.#items = new Array<T | undefined>(16);
    this.#head = 0;
    this.#size = 0;
  }

  #grow(): void {
    const items = new Array<T | undefined>(this.#items.length * 2);
    for (let i = 0; i < this.#size; i++) items[i] = this.#items[(this.#head + i) & (this.#items.length - 1)];
    this.#items = items;
    this.#head = 0;
  }
}
