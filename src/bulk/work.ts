/**
 * The pending work of one job: addresses queued in domain groups, duplicates folded onto their first
 * position, and a per-domain cap on verifications in flight.
 * @module
 */
import { Deque } from './deque.js';
import { exactSeenIndex, type SeenIndex } from './seen-index.js';

/** One verification to run. */
export interface Task {
  /** Input position whose result this is (duplicates follow it). */
  readonly position: number;
  /** The trimmed input. */
  readonly email: string;
  /** Grouping key: the lower-cased text after the last `@`, or `''` when there is none. */
  readonly key: string;
  /** 0 for the first try, n for the n-th greylisting retry. */
  readonly attempt: number;
}

/** Addresses of one domain set aside because the domain was at its cap (and greylisting retries). */
interface Parked {
  positions: number[];
  emails: string[];
  attempts: number[];
  head: number;
  /** In the ready queue. */
  ready: boolean;
}

/** Grouping key of an address: the lower-cased domain as written, or `''` when it has none. */
export function domainKey(email: string): string {
  const at = email.lastIndexOf('@');
  return at < 0 ? '' : email.slice(at + 1).toLowerCase();
}

const COMPACT_AT = 65_536;

/** The addresses of one domain in a staged add, in input order. */
interface Group {
  /** Indices into the add's addresses. */
  readonly indices: number[];
  /** How many of them {@link StagedAdd.spill} moved to the queue's hidden tail. */
  spilled: number;
}

/** An add being built in slices: see {@link JobWork.stage}. */
export interface StagedAdd {
  /** Stages the add's addresses `from` to `to - 1`, at positions `first + from` and on. */
  push(from: number, to: number): void;
  /**
   * Moves up to `limit` staged addresses, by domain, to the end of the queue, where `take` does not see them yet;
   * returns true when none is left. Optional: `commit` moves the rest, but spilling in slices first keeps it short.
   */
  spill(limit: number): boolean;
  /** Makes everything staged visible at once: queued by domain, duplicates following their first position. */
  commit(): void;
  /** Forgets everything staged (the index forgets the addresses this add saw first). Idempotent. */
  abort(): void;
}

/** What a durable store says about the positions of a recovered job (see {@link JobWork.add}). */
export interface RestoredPositions {
  /** True when the position has a stored final result. */
  isFinal(position: number): boolean;
  /** True when the position waits for a greylisting retry. */
  isWaiting(position: number): boolean;
}

/**
 * Pending work of one job. `add` appends a batch grouped by domain (so that a domain's addresses reach the
 * verifier together and share its pooled SMTP sessions); `take` hands out the next task whose domain is under
 * its cap; `release` ends a task. Inputs without a domain (key `''`) are never capped.
 */
export class JobWork {
  readonly #cap: number;
  // Main queue, three parallel columns from `#head` to `#visible`; past it, a staged add being spilled.
  #positions: number[] = [];
  #emails: string[] = [];
  #keys: string[] = [];
  #head = 0;
  #visible = 0;
  readonly #parked = new Map<string, Parked>();
  readonly #readyParked = new Deque<string>();
  readonly #inFlight = new Map<string, number>();
  // Deduplication: exact trimmed input → first position; bit set of first positions that are final.
  readonly #seen: SeenIndex;
  #final = new Uint8Array(128);
  readonly #followers = new Map<number, number[]>();
  /** Pairs `[from, to, from, to, ...]`: positions to fill with the already final result at `from`. */
  copies: number[] = [];

  /** `seen` is the deduplication index (exact by default; hashed for windowed jobs of a durable store). */
  constructor(perDomainConcurrency: number, seen: SeenIndex = exactSeenIndex()) {
    this.#cap = perDomainConcurrency;
    this.#seen = seen;
  }

  /** Tasks in the main queue (not counting domains parked at their cap and retries). */
  get queued(): number {
    return this.#visible - this.#head;
  }

  /**
   * Queues `emails` (trimmed) at positions `first`, `first + 1`, ... When `restored` is given (a job recovered
   * from a durable store), positions it says are final are not queued (and count as final for their
   * duplicates), and positions waiting for a greylisting retry are not queued either (the retry queues them).
   */
  add(emails: readonly string[], first: number, restored?: RestoredPositions): void {
    const staged = this.stage(first, emails, restored);
    staged.push(0, emails.length);
    staged.commit();
  }

  /**
   * Starts an add of `emails` (trimmed) at positions `first`, `first + 1`, ... that is built in slices ({@link
   * StagedAdd.push}, with event-loop turns between them) and becomes visible at once ({@link StagedAdd.commit}):
   * until then `take` hands out none of it, `settle` returns none of its positions as followers and `copies` gets
   * none of them, so that {@link StagedAdd.abort} can undo it whole. One add is staged at a time per job (the
   * manager serialises adds); `restored` as for {@link JobWork.add}. `emails` must not change meanwhile.
   */
  stage(first: number, emails: readonly string[], restored?: RestoredPositions): StagedAdd {
    const groups = new Map<string, Group>();
    /** `[first position, duplicate position, ...]`: resolved at commit (a copy or a follower). */
    const pairs: number[] = [];
    /** Addresses this add put into the index first (forgotten by `abort`). */
    const claimed: string[] = [];
    /** Restored positions that are final already. */
    const finals: number[] = [];
    let open = true;
    let end = first;
    const seen = this.#seen;
    return {
      push: (from, to) => {
        if (!open) throw new Error('the staged add is committed or aborted');
        end = Math.max(end, first + to);
        for (let i = from; i < to; i++) {
          const email = emails[i]!;
          const position = first + i;
          const earlier = seen.claim(email, position);
          if (earlier !== undefined) {
            if (restored?.isFinal(position)) continue; // its copy of the result was stored already
            pairs.push(earlier, position);
            continue;
          }
          claimed.push(email);
          if (restored !== undefined) {
            if (restored.isFinal(position)) {
              finals.push(position);
              continue;
            }
            if (restored.isWaiting(position)) continue;
          }
          const key = domainKey(email);
          const group = groups.get(key);
          if (group === undefined) groups.set(key, { indices: [i], spilled: 0 });
          else group.indices.push(i);
        }
      },
      spill: (limit) => {
        if (!open) throw new Error('the staged add is committed or aborted');
        let moved = 0;
        for (const [key, group] of groups) {
          const indices = group.indices;
          while (group.spilled < indices.length && moved < limit) {
            const i = indices[group.spilled]!;
            this.#positions.push(first + i);
            this.#emails.push(emails[i]!);
            this.#keys.push(key);
            group.spilled++;
            moved++;
          }
          if (moved === limit) return false;
          groups.delete(key);
        }
        return true;
      },
      commit: () => {
        if (!open) throw new Error('the staged add is committed or aborted');
        open = false;
        this.#ensureBits(end);
        for (const position of finals) this.#final[position >>> 3]! |= 1 << (position & 7);
        for (let k = 0; k < pairs.length; k += 2) {
          const earlier = pairs[k]!;
          const position = pairs[k + 1]!;
          if (this.#isFinal(earlier)) this.copies.push(earlier, position);
          else {
            const followers = this.#followers.get(earlier);
            if (followers === undefined) this.#followers.set(earlier, [position]);
            else followers.push(position);
          }
        }
        for (const [key, group] of groups) {
          for (let k = group.spilled; k < group.indices.length; k++) {
            const i = group.indices[k]!;
            this.#positions.push(first + i);
            this.#emails.push(emails[i]!);
            this.#keys.push(key);
          }
        }
        this.#visible = this.#positions.length;
      },
      abort: () => {
        if (!open) return;
        open = false;
        for (const email of claimed) seen.delete(email);
        // What was spilled past the visible queue goes (nothing else appends to it while an add is staged).
        this.#positions.length = this.#visible;
        this.#emails.length = this.#visible;
        this.#keys.length = this.#visible;
      },
    };
  }

  /** The next task whose domain is under its cap, or `undefined` when there is none now. */
  take(): Task | undefined {
    while (this.#readyParked.length > 0) {
      const key = this.#readyParked.peek()!;
      const parked = this.#parked.get(key)!;
      if (this.#atCap(key)) {
        this.#readyParked.shift();
        parked.ready = false;
        continue;
      }
      const i = parked.head++;
      const task: Task = {
        position: parked.positions[i]!,
        email: parked.emails[i]!,
        key,
        attempt: parked.attempts[i]!,
      };
      this.#start(key);
      if (parked.head === parked.positions.length) {
        this.#readyParked.shift();
        this.#parked.delete(key);
      } else if (this.#atCap(key)) {
        this.#readyParked.shift();
        parked.ready = false;
      }
      return task;
    }
    while (this.#head < this.#visible) {
      const i = this.#head++;
      const key = this.#keys[i]!;
      const position = this.#positions[i]!;
      const email = this.#emails[i]!;
      if (this.#head === this.#positions.length) this.#resetMain();
      else if (this.#head >= COMPACT_AT && this.#head * 2 >= this.#positions.length) this.#compactMain();
      if (!this.#atCap(key)) {
        this.#start(key);
        return { position, email, key, attempt: 0 };
      }
      this.#park(key, position, email, 0);
    }
    return undefined;
  }

  /** Ends a task of domain `key`; returns true when that made a parked task of the domain ready. */
  release(key: string): boolean {
    const count = (this.#inFlight.get(key) ?? 1) - 1;
    if (count === 0) this.#inFlight.delete(key);
    else this.#inFlight.set(key, count);
    const parked = this.#parked.get(key);
    if (parked === undefined || parked.ready) return false;
    parked.ready = true;
    this.#readyParked.push(key);
    return true;
  }

  /** Queues a retry of `position`, ahead of the main queue. */
  retry(task: Task): void {
    this.#park(task.key, task.position, task.email, task.attempt);
  }

  /**
   * True when `take` may hand out a task now (it can still return `undefined` when the main queue holds only
   * domains at their cap). False when all that is left waits for a domain's `release`.
   */
  get hasWork(): boolean {
    return this.#readyParked.length > 0 || this.#head < this.#visible;
  }

  /**
   * Marks the result at `position` final and returns the later positions of the same address (which take
   * the same result), if any.
   */
  settle(position: number): number[] | undefined {
    this.#final[position >>> 3]! |= 1 << (position & 7);
    const followers = this.#followers.get(position);
    if (followers !== undefined) this.#followers.delete(position);
    return followers;
  }

  /** Drops all queued work (tasks in flight still settle, and their duplicates follow them). */
  dropQueued(): void {
    this.#resetMain();
    this.#parked.clear();
    this.#readyParked.clear();
    this.#seen.clear();
  }

  #atCap(key: string): boolean {
    return key !== '' && (this.#inFlight.get(key) ?? 0) >= this.#cap;
  }

  #start(key: string): void {
    this.#inFlight.set(key, (this.#inFlight.get(key) ?? 0) + 1);
  }

  #park(key: string, position: number, email: string, attempt: number): void {
    let parked = this.#parked.get(key);
    if (parked === undefined) {
      parked = { positions: [], emails: [], attempts: [], head: 0, ready: false };
      this.#parked.set(key, parked);
    }
    parked.positions.push(position);
    parked.emails.push(email);
    parked.attempts.push(attempt);
    if (!parked.ready && !this.#atCap(key)) {
      parked.ready = true;
      this.#readyParked.push(key);
    }
  }

  #isFinal(position: number): boolean {
    return ((this.#final[position >>> 3] ?? 0) & (1 << (position & 7))) !== 0;
  }

  #ensureBits(positions: number): void {
    const bytes = (positions + 7) >>> 3;
    if (bytes <= this.#final.length) return;
    const grown = new Uint8Array(Math.max(bytes, this.#final.length * 2));
    grown.set(this.#final);
    this.#final = grown;
  }

  #resetMain(): void {
    this.#positions = [];
    this.#emails = [];
    this.#keys = [];
    this.#head = 0;
    this.#visible = 0;
  }

  #compactMain(): void {
    this.#positions = this.#positions.slice(this.#head);
    this.#emails = this.#emails.slice(this.#head);
    this.#keys = this.#keys.slice(this.#head);
    this.#visible -= this.#head;
    this.#head = 0;
  }
}
