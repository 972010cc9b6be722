import { afterEach, describe, expect, it, vi } from 'vitest';
import { nextTurn, TurnBudget, turnWorkBegan } from '../src/turn.js';

/** Resolves after the loop's next timer phase: the shared mark of the turn's work is gone by then. */
const timerPhase = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Makes `performance.now()` answer `at` until the next call of the returned setter. */
function clockAt(at: number): (next: number) => void {
  let now = at;
  vi.spyOn(performance, 'now').mockImplementation(() => now);
  return (next) => {
    now = next;
  };
}

describe('TurnBudget', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('is spent once its own work has taken the budget', async () => {
    await timerPhase();
    const set = clockAt(1000);
    const budget = new TurnBudget(5);
    set(1004);
    expect(budget.spent()).toBe(false);
    set(1005);
    expect(budget.spent()).toBe(true);
  });

  it('shares one budget with the sliced work that began earlier in the same turn', async () => {
    await timerPhase();
    const set = clockAt(2000);
    const first = new TurnBudget(5);
    set(2006);
    expect(first.spent()).toBe(true);
    // A second loop resuming in the same turn: the turn's budget is gone, it does one unit and yields.
    const second = new TurnBudget(5);
    expect(second.spent()).toBe(true);
    expect(turnWorkBegan()).toBe(2000);
  });

  it('starts afresh once a timer phase has passed (the loop-delay monitor had its turn)', async () => {
    await timerPhase();
    const set = clockAt(3000);
    const first = new TurnBudget(5);
    set(3010);
    expect(first.spent()).toBe(true);
    await first.turn(); // an immediate: no timer phase yet when it resumes
    expect(first.spent()).toBe(true);
    await timerPhase();
    const later = new TurnBudget(5);
    expect(later.spent()).toBe(false);
    expect(turnWorkBegan()).toBe(3010);
    set(3014);
    expect(later.spent()).toBe(false);
    set(3015);
    expect(later.spent()).toBe(true);
  });

  it('takes a fresh budget after its own turn once the timer phase passed', async () => {
    await timerPhase();
    const set = clockAt(4000);
    const budget = new TurnBudget(5);
    set(4020);
    await timerPhase();
    await budget.turn();
    expect(budget.spent()).toBe(false);
  });
});

describe('nextTurn', () => {
  it('resolves after an immediate queued before it', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('immediate'));
    await nextTurn();
    order.push('turn');
    expect(order).toEqual(['immediate', 'turn']);
  });
});
