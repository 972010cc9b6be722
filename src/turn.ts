/**
 * Long synchronous work cut into slices, with an event-loop turn between them, so that a large `add()`, a list
 * upload or a window of a job's inputs never holds the loop for long. Runtime-free: `setImmediate` where the
 * runtime has it (Node, Bun), a 0 ms timer elsewhere (browsers, workers, Deno).
 * @module
 */

type Immediate = (callback: () => void) => unknown;

/** Resolves after the event loop has had a turn: timers, I/O and other tasks queued before ran. */
export function nextTurn(): Promise<void> {
  const immediate = (globalThis as { setImmediate?: Immediate }).setImmediate;
  return new Promise<void>((resolve) => {
    if (immediate === undefined) globalThis.setTimeout(resolve, 0);
    else immediate(resolve);
  });
}

/**
 * A budget of synchronous work between two event-loop turns. The budget starts at construction and again after
 * each {@link TurnBudget.turn}; a loop checks {@link TurnBudget.spent} every so many items and awaits `turn()`
 * when it is spent.
 * @example
 * const budget = new TurnBudget(5);
 * for (let i = 0; i < items.length; i++) {
 *   work(items[i]);
 *   if ((i & 1023) === 1023 && budget.spent()) await budget.turn();
 * }
 */
export class TurnBudget {
  readonly #budgetMs: number;
  #start = performance.now();

  /** `budgetMs`: the longest stretch of work without a turn, in milliseconds. */
  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
  }

  /** True when the work since the last turn (or since construction) has taken the budget. */
  spent(): boolean {
    return performance.now() - this.#start >= this.#budgetMs;
  }

  /** Gives the event loop a turn, then starts a new budget. */
  async turn(): Promise<void> {
    await nextTurn();
    this.#start = performance.now();
  }
}

/** Items processed between two looks at the clock in a sliced loop (a look costs about as much as a few items). */
export const SLICE_CHECK_EVERY = 1024;
