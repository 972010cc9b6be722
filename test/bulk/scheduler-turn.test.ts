/**
 * The scheduler's verifications count in the event-loop turn's shared budget (src/turn.ts): a sliced loop that
 * resumes in a turn where the scheduler already worked finds that work spent, instead of adding a budget of its own
 * (issue 30, "Nothing stalls the server").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Scheduler } from '../../src/bulk/scheduler.js';
import type { Task } from '../../src/bulk/work.js';
import { TurnBudget, turnWorkBegan } from '../../src/turn.js';
import { processingJob, resultFor } from './support.js';

/** Resolves after the loop's next timer phase: the turn's shared mark is gone by then. */
const timerPhase = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('Scheduler and the turn budget', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('marks the turn when it starts verifications, so a sliced loop of the same turn counts that work', async () => {
    await timerPhase();
    let now = 5000;
    vi.spyOn(performance, 'now').mockImplementation(() => now);
    const tasks: Task[] = [{ position: 0, email: 'a@example.com', key: 'example.com', attempt: 0 }];
    const settled: string[] = [];
    const scheduler = new Scheduler(
      { concurrency: 4, yieldAfterMs: 5, verificationTimeoutMs: 60_000 },
      { verify: async (email: string) => resultFor(email) },
      {
        runnable: () => tasks.length > 0,
        take: () => tasks.shift(),
        settled: (_job, task) => settled.push(task.email),
      },
    );
    scheduler.ready(processingJob(1));
    scheduler.pump(); // starts the verification at 5000: the turn's sliced work began then
    now = 5004;
    expect(turnWorkBegan()).toBe(5000);
    const budget = new TurnBudget(3);
    expect(budget.spent()).toBe(true); // 4 ms of the turn are gone, though the budget was made just now
    await scheduler.idle();
    expect(settled).toEqual(['a@example.com']);
    await timerPhase();
    expect(new TurnBudget(3).spent()).toBe(false);
    scheduler.stop();
  });
});
