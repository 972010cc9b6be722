/**
 * What an API node of the fleet hears of its jobs: the events other nodes and workers publish, told to the
 * manager's listeners (coalesced for progress, exactly once for an ending, also one whose event was lost), and the
 * streams waiting for a job to move.
 * @module
 */
import type { JobEvents } from '../bulk/listeners.js';
import type { FleetJobStore } from '../bulk/runner.js';
import type { Clock, Job, JobEventName, JobRecord } from '../bulk/types.js';
import type { FleetEvent } from './events.js';
import { FinishWatch } from './finish-watch.js';

/** Collects progress events of a job for this long before reading it once. */
const PROGRESS_COALESCE_MS = 100;
/** How long a node keeps trying to read a job whose completion or failure it heard, to tell its listeners. */
const TELL_RETRY_MS = 120_000;

/** What the news reaches of the API node. */
export interface NewsContext {
  readonly store: FleetJobStore;
  /** The manager's listener table. */
  readonly events: JobEvents;
  readonly clock: Clock;
  /** True once the node is closing: no more retries. */
  closing(): boolean;
  /** The wire shape of a stored job. */
  snapshot(record: JobRecord): Promise<Job>;
}

/** The events an API node hears, and the streams that wait for them. */
export class FleetNews {
  readonly #context: NewsContext;
  /** Longest wait of a stream for an event, in milliseconds. */
  readonly #pollMs: number;
  /** Streams waiting for a job to move. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Jobs with a progress event waiting to be read (coalesced). */
  readonly #progressed = new Set<string>();
  /** The job endings told to the listeners here, and those owed (an event lost on the way: see finish-watch.ts). */
  readonly #finish = new FinishWatch();
  #progressTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(pollMs: number, context: NewsContext) {
    this.#pollMs = pollMs;
    this.#context = context;
  }

  /** Stops reading coalesced progress (the first step of closing). */
  stop(): void {
    clearTimeout(this.#progressTimer);
  }

  /** Wakes every waiting stream (the node closed). */
  wakeAll(): void {
    for (const id of [...this.#waiters.keys()]) this.wake(id);
  }

  /** Tells the listeners of the job endings whose events never arrived here (see {@link FinishWatch}). */
  async tellMissed(): Promise<void> {
    const listening = this.#context.events.has('complete') || this.#context.events.has('failed');
    for (const record of this.#finish.missed(await this.#context.store.listJobs())) {
      if (listening) this.heard({ event: record.status, id: record.id });
      else this.#finish.claim(record); // nobody to tell: a listener added later hears of later endings
    }
  }

  heard(event: FleetEvent): void {
    if (event.event === 'failed') {
      this.#progressed.delete(event.id);
      void this.#tell(event.id, ['failed']);
      return;
    }
    if (event.event === 'complete') {
      this.#progressed.delete(event.id);
      void this.#tell(event.id, ['progress', 'complete']);
      return;
    }
    this.#finish.running(event.id);
    this.#progressed.add(event.id);
    this.#progressTimer ??= setTimeout(() => {
      this.#progressTimer = undefined;
      const ids = [...this.#progressed];
      this.#progressed.clear();
      for (const id of ids) void this.#tell(id, ['progress']);
    }, PROGRESS_COALESCE_MS);
  }

  /**
   * Wakes the streams of job `id` and tells the listeners of `events` with the job as stored. A job that cannot
   * be read (the database out of reach) is read again, with backoff, for as long as {@link TELL_RETRY_MS} when
   * the events end the job (`complete`, `failed`: a webhook hangs on them), until the runner closes; a progress
   * event is simply dropped, the next one supersedes it. A job that no longer exists tells nobody, and an ending
   * already told here (heard from an event and from a listing) is not told again.
   */
  async #tell(id: string, events: readonly JobEventName[]): Promise<void> {
    this.wake(id);
    const listeners = this.#context.events;
    if (events.every((event) => !listeners.has(event))) return;
    const final = events.includes('complete') || events.includes('failed');
    const giveUpAt = this.#context.clock.now() + (final ? TELL_RETRY_MS : 0);
    let job: Job | undefined;
    let record: JobRecord | undefined;
    for (let pause = 250; job === undefined; pause = Math.min(pause * 2, 5000)) {
      try {
        record = await this.#context.store.getJob(id);
        if (record === undefined) return;
        job = await this.#context.snapshot(record);
      } catch {
        if (this.#context.closing() || this.#context.clock.now() + pause > giveUpAt) return;
        await new Promise((resolve) => setTimeout(resolve, pause).unref());
      }
    }
    // An ending heard twice (its event, then a listing: see finish-watch.ts) is told once.
    if (final && !this.#finish.claim(record!)) return;
    for (const event of events) listeners.emit(event, job);
  }

  /** A promise that settles when job `id` moves (an event) or after `pollMs`. */
  moved(id: string): { promise: Promise<void>; cancel(): void } {
    let waiters = this.#waiters.get(id);
    if (waiters === undefined) {
      waiters = new Set();
      this.#waiters.set(id, waiters);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let wake!: () => void;
    const set = waiters;
    const promise = new Promise<void>((resolve) => {
      wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.#waiters.get(id) === set) this.#waiters.delete(id);
        resolve();
      };
      timer = setTimeout(wake, this.#pollMs);
    });
    set.add(wake);
    return { promise, cancel: wake };
  }

  wake(id: string): void {
    const waiters = this.#waiters.get(id);
    if (waiters === undefined) return;
    for (const wake of [...waiters]) wake();
  }
}
