/**
 * The reads of a {@link LocalEngine} (`get`, `list`, `view`, `stream`) and the lookup every call makes: a job by
 * id for its owner, in memory or, with a durable store, adopted from it (made by another process since this one
 * opened). Another owner's job is missing, as one that does not exist.
 * @module
 */
import type { VerificationResult } from '../result.js';
import { JobNotFoundError, StoreError } from './errors.js';
import { type LiveJob, snapshot } from './job.js';
import type { Job, JobList, JobStore } from './job-types.js';
import type { JobLeases } from './leases.js';
import type { ResultsView } from './runner.js';
import type { ResultSink } from './sink.js';

/** What the reads reach of the engine. */
export interface ReadsContext {
  /** The engine's jobs by id. */
  readonly jobs: ReadonlyMap<string, LiveJob>;
  /** Recovery, adoption and the freshness of jobs held elsewhere. */
  readonly leases: JobLeases;
  /** Results written and being written. */
  readonly sink: ResultSink;
  /** The job store (the kept rows). */
  readonly store: JobStore;
}

/** Throws `job_not_found` for `id`. */
export function missing(id: unknown): never {
  throw new JobNotFoundError(String(id));
}

/** The engine's reads and its lookup of jobs. */
export class JobReads {
  readonly #context: ReadsContext;

  /** Reads the jobs of `context`. */
  constructor(context: ReadsContext) {
    this.#context = context;
  }

  /** `owner`'s job `id` once the engine is open, in memory or adopted; else throws `job_not_found`. */
  async found(id: string, owner: string | null): Promise<LiveJob> {
    await this.#context.leases.whenOpen();
    return this.#visible(id, owner) ?? (await this.#adopted(id, owner)) ?? missing(id);
  }

  /** The job's wire shape, once what it holds is synced; `undefined` when it is not `owner`'s or is gone. */
  async get(id: string, owner: string | null): Promise<Job | undefined> {
    const { leases, sink } = this.#context;
    await leases.whenOpen();
    const job = this.#visible(id, owner) ?? (await this.#adopted(id, owner));
    if (job === undefined) return undefined;
    await leases.current(job);
    await sink.sync(job);
    return job.deleted ? undefined : snapshot(job);
  }

  /** A page of `owner`'s jobs and how many they are. */
  async list(owner: string | null, offset: number, limit: number): Promise<JobList> {
    const { jobs, leases, sink } = this.#context;
    await leases.whenOpen();
    const visible: LiveJob[] = [];
    for (const job of jobs.values()) if (job.owner === owner) visible.push(job);
    const page = visible.slice(offset, offset + limit);
    await Promise.all(page.map((job) => leases.current(job)));
    await Promise.all(page.map((job) => sink.sync(job)));
    return { jobs: page.filter((job) => !job.deleted).map(snapshot), total: visible.length };
  }

  /** The state a read of the job's results needs, and how to read its results and rows. */
  async view(id: string, owner: string | null): Promise<ResultsView> {
    const { leases, sink, store } = this.#context;
    const job = await this.found(id, owner);
    await leases.current(job);
    await sink.sync(job);
    if (job.deleted) throw new JobNotFoundError(id);
    return {
      status: job.status,
      total: job.total,
      source: job.source,
      snapshot: () => snapshot(job),
      results: (offset, count) => sink.read(job, offset, count),
      rows: async (offset, count) => {
        try {
          return await sink.enqueue(job, () => store.getRows?.(job.id, offset, count) ?? []);
        } catch (error) {
          throw new StoreError('read the rows', error);
        }
      },
    };
  }

  /** The job's results from `offset` on, as they become final; throws `job_not_found` at once when it can tell. */
  stream(id: string, owner: string | null, offset: number): AsyncIterable<VerificationResult> {
    const { jobs, leases, sink } = this.#context;
    if (leases.recovering()) return this.#streamOnceOpen(id, owner, offset);
    const job = this.#visible(id, owner);
    if (job !== undefined) return sink.stream(job, offset);
    // Not in memory: another process may have made it since this one opened (a durable store), else it is missing.
    const adopting = typeof id === 'string' && !jobs.has(id) ? leases.adopt(id) : undefined;
    if (adopting === undefined) missing(id);
    adopting.catch(() => {}); // reported by the stream when it is read
    return this.#streamAdopted(id, owner, offset, adopting);
  }

  async *#streamAdopted(
    id: string,
    owner: string | null,
    offset: number,
    adopting: Promise<LiveJob | undefined>,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    const job = await adopting;
    if (job === undefined || job.owner !== owner || job.deleted) missing(id);
    yield* this.#context.sink.stream(job, offset);
  }

  async *#streamOnceOpen(
    id: string,
    owner: string | null,
    offset: number,
  ): AsyncGenerator<VerificationResult, void, undefined> {
    const job = await this.found(id, owner);
    yield* this.#context.sink.stream(job, offset);
  }

  #visible(id: unknown, owner: string | null): LiveJob | undefined {
    if (typeof id !== 'string') return undefined;
    const job = this.#context.jobs.get(id);
    return job !== undefined && job.owner === owner ? job : undefined;
  }

  /**
   * A job not in memory that another process created since this one opened (read from a durable store), if it is
   * `owner`'s; `undefined` otherwise, and at once without a durable store or when the id is known here (another
   * owner's job, which stays invisible).
   */
  async #adopted(id: unknown, owner: string | null): Promise<LiveJob | undefined> {
    if (typeof id !== 'string' || this.#context.jobs.has(id)) return undefined;
    const job = await this.#context.leases.adopt(id);
    return job !== undefined && job.owner === owner && !job.deleted ? job : undefined;
  }
}
