/**
 * Fakes for bulk-job tests: a manual clock, verifiers with scripted answers, and waiting helpers that never sleep.
 */
import { setImmediate as tick } from 'node:timers/promises';
import { type LiveJob, liveJob, zeroCounts } from '../../src/bulk/job.js';
import type { Clock } from '../../src/bulk/types.js';
import type { VerificationResult } from '../../src/result.js';
import { scoreOf } from '../../src/score.js';
import { waitFor } from '../support/wait-for.js';

/** A clock whose time moves only when `advance` is called. */
export class FakeClock implements Clock {
  #now: number;
  #next = 1;
  readonly #timers = new Map<number, { due: number; callback: () => void }>();

  constructor(start = Date.UTC(2024, 0, 1)) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { due: this.#now + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Number of timers set and not yet run or cleared. */
  get pending(): number {
    return this.#timers.size;
  }

  /** Moves time forward by `ms`, running the timers that fall due, in due order. */
  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let first: [number, { due: number; callback: () => void }] | undefined;
      for (const entry of this.#timers)
        if (entry[1].due <= end && (!first || entry[1].due < first[1].due)) first = entry;
      if (first === undefined) break;
      this.#timers.delete(first[0]);
      this.#now = Math.max(this.#now, first[1].due);
      first[1].callback();
    }
    this.#now = end;
  }
}

/** A started, armed job `j` of `total` positions, as the engine holds it, with no work and nothing verified. */
export function processingJob(total = 0): LiveJob {
  return liveJob({
    id: 'j',
    owner: null,
    name: null,
    status: 'processing',
    total,
    completed: 0,
    counts: zeroCounts(),
    createdAt: 0,
    startedAt: 0,
    completedAt: null,
    error: null,
    armed: true,
    source: null,
    work: null,
    greylistDelaysMs: [],
  });
}

/** Rules of {@link resultFor}: the local part decides the verdict. */
export function resultFor(
  email: string,
  status?: Pick<VerificationResult, 'status' | 'sub_status'>,
): VerificationResult {
  const trimmed = email.trim();
  const at = trimmed.lastIndexOf('@');
  const user = at > 0 ? trimmed.slice(0, at) : null;
  const domain = at > 0 && at < trimmed.length - 1 ? trimmed.slice(at + 1).toLowerCase() : null;
  const verdict =
    status ??
    (user === null || domain === null
      ? { status: 'invalid' as const, sub_status: 'failed_syntax_check' as const }
      : user.startsWith('bad')
        ? { status: 'invalid' as const, sub_status: 'mailbox_not_found' as const }
        : user.startsWith('grey')
          ? { status: 'unknown' as const, sub_status: 'greylisted' as const }
          : user.startsWith('info')
            ? { status: 'do_not_mail' as const, sub_status: 'role_based' as const }
            : { status: 'valid' as const, sub_status: null });
  const result: VerificationResult = {
    email: trimmed,
    normalized: user !== null && domain !== null ? `${user}@${domain}` : null,
    user,
    domain,
    status: verdict.status,
    sub_status: verdict.sub_status,
    score: 0,
    disposable: false,
    role: user?.startsWith('info') ?? false,
    free: domain === 'gmail.com',
    accept_all: false,
    did_you_mean: domain === 'gmial.com' ? `${user}@gmail.com` : null,
    mx_record: domain === null ? null : `mx.${domain}`,
    smtp_provider: domain === 'gmail.com' ? 'google' : null,
  };
  result.score = scoreOf(result);
  return result;
}

/** A verifier that answers by {@link resultFor} after a microtask, and records every call. */
export function instantVerifier(options: { throwFor?: (email: string) => boolean } = {}) {
  const calls: string[] = [];
  return {
    calls,
    async verify(email: string): Promise<VerificationResult> {
      calls.push(email);
      if (options.throwFor?.(email)) throw new Error(`boom ${email}`);
      return resultFor(email);
    },
  };
}

/** One verification a {@link manualVerifier} holds until the test answers it. */
export interface HeldCall {
  readonly email: string;
  resolve(result?: VerificationResult): void;
  reject(error: unknown): void;
}

/** A verifier whose calls wait until the test resolves them (`held`), so a test controls every interleaving. */
export function manualVerifier() {
  const held: HeldCall[] = [];
  const calls: string[] = [];
  return {
    held,
    calls,
    verify(email: string): Promise<VerificationResult> {
      calls.push(email);
      return new Promise<VerificationResult>((resolve, reject) => {
        held.push({ email, resolve: (result) => resolve(result ?? resultFor(email)), reject });
      });
    },
    /** Answers every held call by {@link resultFor} (including calls made meanwhile) until none is held. */
    async releaseAll(): Promise<void> {
      while (held.length > 0) {
        for (const call of held.splice(0)) call.resolve();
        await settle();
      }
    },
  };
}

/** Lets pending promise callbacks and store calls run: a few turns of the event loop, never a timed sleep. */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await tick();
}

/** Waits (event-loop turns, not timers) until `condition` holds: {@link waitFor} probing every turn. */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  await waitFor(condition, { intervalMs: 0 });
}

/** `count` distinct addresses over `domains` domains, in a shuffled-looking but deterministic order. */
export function addresses(count: number, domains = 7): string[] {
  const list: string[] = [];
  for (let i = 0; i < count; i++) list.push(`user${i}@d${(i * 7919) % domains}.example`);
  return list;
}
