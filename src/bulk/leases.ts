/**
 * Who holds a job. A durable store's jobs are leased to one process at a time: {@link leaseKeeper} recovers them
 * at open, renews the leases, takes over the jobs whose holder died and keeps the jobs held elsewhere current.
 * Without a durable store every job is this process's ({@link processLeases}). After bullmq's `LockManager`: the
 * keeper reaches the engine only through a small {@link LeaseContext}.
 * @module
 */
import { isMailvetError, MailvetError } from '../errors.js';
import { StoreError } from './errors.js';
import { isFinished, type LiveJob, liveJobOf, refreshJob } from './job.js';
import type { DurableJobStore, JobError, JobRecord, StoreHealth } from './job-types.js';

/** What the engine asks of the object that knows who holds its jobs. */
export interface JobLeases {
  /** Settles once the jobs are recovered (at once without a durable store); rejects with what made it fail. */
  readonly opened: Promise<void>;
  /** True while the jobs of a durable store are being recovered. */
  recovering(): boolean;
  /** Waits for {@link JobLeases.opened} when there is something to wait for; throws what made it fail. */
  whenOpen(): Promise<void>;
  /**
   * A job the engine does not hold in memory, read from a durable store: another process created it after this one
   * opened. It joins the engine's jobs, read-only here while its holder runs it. `undefined` when the store has no
   * such job, or at once without a durable store.
   */
  adopt(id: string): Promise<LiveJob | undefined> | undefined;
  /** Brings a job another process holds up to date from the store (no-op for the jobs held here). */
  current(job: LiveJob): Promise<void>;
  /** Throws `lease_lost` when another process holds the job: it is read-only here. */
  assertHeld(job: LiveJob): void;
  /** The store's state for `GET /healthz`. */
  health(timeoutMs: number): Promise<StoreHealth>;
  /** Stops renewing and claiming (the first step of closing). */
  stop(): void;
  /** The last step of closing, once the jobs' pending writes are done: what becomes of the unfinished jobs. */
  leave(jobs: readonly LiveJob[]): Promise<void>;
}

/** What the lease keeper reaches of the engine. */
export interface LeaseContext {
  /** The engine's jobs by id: the keeper adds the jobs it finds in the store. */
  readonly jobs: Map<string, LiveJob>;
  /** True once the engine is closing: no more claims. */
  closing(): boolean;
  /** Rebuilds the pending work of a job just leased here from the store; throws when the store fails. */
  restore(job: LiveJob): Promise<void>;
  /** Runs a job whose pending work was just rebuilt. */
  resumed(job: LiveJob): void;
  /** Forgets a job (deleted by the process that held it). */
  forget(job: LiveJob): void;
  /** Wakes the streams of a job that moved. */
  wake(job: LiveJob): void;
  /** Starts verifications (after claims). */
  pump(): void;
}

/**
 * Every job is this process's: nothing to recover or renew. At close, a job that is not finished fails (`disposed`):
 * nothing else could ever finish it.
 */
export function processLeases(context: {
  fail(job: LiveJob, error: JobError): void;
  sync(job: LiveJob): Promise<void>;
}): JobLeases {
  return {
    opened: Promise.resolve(),
    recovering: () => false,
    adopt: () => undefined,
    async whenOpen() {},
    async current() {},
    assertHeld() {},
    async health() {
      return 'memory';
    },
    stop() {},
    async leave(jobs) {
      for (const job of jobs) {
        context.fail(job, { code: 'disposed', message: 'the manager was closed before the job finished' });
      }
      await Promise.all(jobs.map((job) => context.sync(job)));
    },
  };
}

/** The leases of a durable store's jobs; starts recovering them at once. */
export function leaseKeeper(store: DurableJobStore, context: LeaseContext): JobLeases {
  return new LeaseKeeper(store, context);
}

/** What the lease keeper knows of a job's lease: its own state, which no other object sees. */
interface LeaseState {
  /**
   * Another process holds the job's lease. The job is read-only here (refreshed from the store) until that lease
   * expires and this manager takes the job over.
   */
  foreign: boolean;
  /** Reads of the job's record begun here; a claim counts as one. */
  reads: number;
  /** The number of the newest read applied to the job: an older read that answers later is dropped. */
  readApplied: number;
}

class LeaseKeeper implements JobLeases {
  readonly #store: DurableJobStore;
  readonly #context: LeaseContext;
  readonly #leases = new WeakMap<LiveJob, LeaseState>();
  readonly opened: Promise<void>;
  #recovering = true;
  #timer: ReturnType<typeof setInterval> | undefined;
  #tending = false;

  constructor(store: DurableJobStore, context: LeaseContext) {
    this.#store = store;
    this.#context = context;
    this.opened = this.#recover();
  }

  recovering(): boolean {
    return this.#recovering;
  }

  /** The lease state of `job`: held here, with no read begun, until told otherwise. */
  #lease(job: LiveJob): LeaseState {
    let lease = this.#leases.get(job);
    if (lease === undefined) {
      lease = { foreign: false, reads: 0, readApplied: 0 };
      this.#leases.set(job, lease);
    }
    return lease;
  }

  async whenOpen(): Promise<void> {
    await this.opened;
  }

  /**
   * `up` when the database answers a trivial query within `timeoutMs` (`damaged` if the store found damage when it
   * opened), else `down`.
   */
  async health(timeoutMs: number): Promise<StoreHealth> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    });
    try {
      await Promise.race([this.opened.then(() => this.#store.ping()), timeout]);
      return (this.#store.damage?.length ?? 0) > 0 ? 'damaged' : 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** Unfinished jobs stay as they are; their leases are given up so that the next manager resumes them at once. */
  async leave(jobs: readonly LiveJob[]): Promise<void> {
    for (const job of jobs) job.retries?.clear(); // their due times are in the store
    await this.#store.releaseLeases().catch(() => {}); // else another manager waits out the lease
  }

  /** Loads the finished jobs, claims and resumes the unfinished ones, then keeps their leases. */
  async #recover(): Promise<void> {
    const store = this.#store;
    try {
      for (const record of await store.listJobs()) {
        const job = liveJobOf(record);
        this.#lease(job).foreign = !isFinished(job); // until claimed below, or later when its holder's lease expires
        this.#context.jobs.set(record.id, job);
      }
      await this.#claim();
    } catch (error) {
      throw isMailvetError(error) && error.code === 'store_unavailable'
        ? error
        : new StoreError('recover its jobs', error);
    } finally {
      this.#recovering = false;
    }
    const every = Math.max(100, Math.floor(store.leaseMs / 3));
    this.#timer = setInterval(() => void this.#tend(), every);
    this.#timer.unref?.();
  }

  /** Takes over the unfinished jobs whose lease is free or expired and resumes them. */
  async #claim(): Promise<void> {
    const jobs = this.#context.jobs;
    for (const record of await this.#store.claimJobs()) {
      if (this.#context.closing()) return;
      let job = jobs.get(record.id);
      if (job === undefined) {
        job = liveJobOf(record);
        jobs.set(job.id, job);
      } else {
        const lease = this.#lease(job);
        lease.readApplied = ++lease.reads; // a read begun before the claim answers with an older record: dropped
        refreshJob(job, record);
      }
      this.#lease(job).foreign = true; // read-only here until its pending work is rebuilt
      await this.#resume(job);
    }
    this.#context.pump();
  }

  /**
   * Rebuilds the pending work of a job this manager has just leased and runs it. When the store fails meanwhile,
   * the job stays read-only here (still leased to this manager) and the next lease tick tries again, so that a
   * passing database error neither stalls the job nor fails it.
   */
  async #resume(job: LiveJob): Promise<void> {
    try {
      await this.#context.restore(job);
    } catch {
      return; // still foreign and leased here: #tend finds it among the leases it renews
    }
    this.#lease(job).foreign = false;
    this.#context.resumed(job);
  }

  /** Re-reads the jobs another process holds, so that reads here follow their progress. */
  async #refreshForeign(): Promise<void> {
    for (const job of [...this.#context.jobs.values()]) {
      if (this.#lease(job).foreign && !job.deleted) await this.#reload(job);
    }
  }

  /**
   * Re-reads a job another process holds: forgets it when it was deleted there, stops treating it as foreign once
   * finished, and wakes its streams when it moved. An answer that comes after a newer one, or after this manager
   * took the job over, is dropped: it would move the job back.
   */
  async #reload(job: LiveJob): Promise<void> {
    const lease = this.#lease(job);
    const read = ++lease.reads;
    const record = await this.#store.getJob(job.id);
    // Taken over here while the read ran (this manager's state is the job's now), or a newer read came first.
    if (!lease.foreign || job.deleted || read < lease.readApplied) return;
    lease.readApplied = read;
    if (record === undefined) {
      this.#context.forget(job);
      return;
    }
    const completed = job.completed;
    refreshJob(job, record);
    if (isFinished(job)) lease.foreign = false;
    if (job.completed !== completed || !lease.foreign) this.#context.wake(job);
  }

  async adopt(id: string): Promise<LiveJob | undefined> {
    let record: JobRecord | undefined;
    try {
      record = await this.#store.getJob(id);
    } catch (error) {
      throw new StoreError('read the job', error);
    }
    if (record === undefined) return undefined;
    const known = this.#context.jobs.get(id); // adopted (or claimed) by another call while this one read
    if (known !== undefined) return known;
    const job = liveJobOf(record);
    const lease = this.#lease(job);
    lease.foreign = !isFinished(job); // until its holder's lease expires and a claim takes it over
    lease.readApplied = ++lease.reads;
    this.#context.jobs.set(id, job);
    return job;
  }

  async current(job: LiveJob): Promise<void> {
    if (!this.#lease(job).foreign) return;
    try {
      await this.#reload(job);
    } catch (error) {
      throw new StoreError('read the job', error);
    }
  }

  assertHeld(job: LiveJob): void {
    if (this.#lease(job).foreign) {
      throw new MailvetError(
        'lease_lost',
        'another mailvet process is processing this job; it can be changed there, or here once that process stops',
      );
    }
  }

  /**
   * Renews this manager's leases, resumes the leased jobs whose work could not be read yet, then takes over jobs
   * whose holder died (its lease expired).
   */
  async #tend(): Promise<void> {
    if (this.#tending || this.#context.closing()) return;
    this.#tending = true;
    try {
      for (const id of await this.#store.renewLeases()) {
        // A job leased here but still foreign is one whose take-over could not read its pending work yet.
        const job = this.#context.jobs.get(id);
        if (job !== undefined && this.#lease(job).foreign && !job.deleted) await this.#resume(job);
      }
      await this.#claim();
      await this.#refreshForeign();
    } catch {
      // The database is unreachable: the next tick tries again; writes meanwhile fail their jobs.
    } finally {
      this.#tending = false;
    }
  }
}
