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
 * When the sliced work of the current event-loop turn began (`performance.now()`), shared by every
 * {@link TurnBudget} and the bulk scheduler, or `undefined` once a timer phase has passed since: several loops
 * that each yield after their own budget would otherwise all resume in one turn, each with a fresh budget, and
 * hold the loop for the sum of them.
 */
let turnWorkStart: number | undefined;

function endTurnWork(): void {
  turnWorkStart = undefined;
}

/**
 * Notes that sliced work runs now and answers when the sliced work of this event-loop turn began (now, when it is
 * the first). The mark lasts until the loop's next timer phase (a 0 ms timer clears it): the phase a timer, and
 * the loop-delay monitor, waits for.
 */
export function turnWorkBegan(): number {
  if (turnWorkStart === undefined) {
    turnWorkStart = performance.now();
    const timer = globalThis.setTimeout(endTurnWork, 0) as unknown as { unref?: () => void };
    timer.unref?.();
  }
  return turnWorkStart;
}

/**
 * A budget of synchronous work between two event-loop turns, shared with the other sliced work of the same turn.
 * At construction and after each {@link TurnBudget.turn} it runs from when the turn's first sliced work began
 * ({@link turnWorkBegan}), so the loops that resume in one turn share one budget instead of taking one each (a loop
 * that finds it spent yields at its next check). A loop checks {@link TurnBudget.spent} every so many items
 * and awaits `turn()` when it is spent.
 * @example
 * const budget = new TurnBudget(5);
 * for (let i = 0; i < items.length; i++) {
 *   work(items[i]);
 *   if ((i & 1023) === 1023 && budget.spent()) await budget.turn();
 * }
 */
export class TurnBudget {
  readonly #budgetMs: number;
  #start = turnWorkBegan();

  /** `budgetMs`: the longest stretch of work without a turn, in milliseconds. */
  constructor(budgetMs: number) {
    this.#budgetMs = budgetMs;
  }

  /** True when the turn's sliced work, from when its first began (see the class), has taken the budget. */
  spent(): boolean {
    return performance.now() - this.#start >= this.#budgetMs;
  }

  /** Gives the event loop a turn, then starts a new budget. */
  async turn(): Promise<void> {
    await nextTurn();
    this.#start = turnWorkBegan();
  }
}

/** Items processed between two looks at the clock in a sliced loop (a look costs about as much as a few items). */
export const SLICE_CHECK_EVERY = 1024;
