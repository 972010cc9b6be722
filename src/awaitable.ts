/**
 * `Awaitable<T>`: what a seam may answer synchronously or asynchronously.
 * @module
 */

/** A value, or a promise of it (a store in memory answers at once, one in a database later). */
export type Awaitable<T> = T | Promise<T>;
