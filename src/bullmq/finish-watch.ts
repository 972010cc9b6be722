/**
 * Which job endings an API node of the fleet has told its listeners of, and which it has missed.
 *
 * The fleet's `complete` and `failed` events travel on Redis pub/sub, which drops a message for a subscriber
 * that is reconnecting and never carries one that a worker died before publishing. The database is the record
 * of how a job ended: each reconcile pass lists the jobs, and the endings this node never told are told then.
 * @module
 */
import type { JobRecord } from '../bulk/types.js';

/** The fields of a job record that say whether, and when, the job ended. */
export type EndingRecord = Pick<JobRecord, 'id' | 'status' | 'completedAt'>;

/** A record of a job that ended. */
export type EndedRecord = EndingRecord & { readonly status: 'complete' | 'failed' };

function ended(record: EndingRecord): record is EndedRecord {
  return record.status === 'complete' || record.status === 'failed';
}

/**
 * The endings told and owed on one API node. An ending is a job id with the time it ended: a job reopened by
 * `add()` and finished again ends a second time. Listings and the ids it keeps are bounded by the jobs the
 * database holds (the retention sweep deletes old ones).
 */
export class FinishWatch {
  /** The last ending told of each job (its `completedAt`). */
  readonly #told = new Map<string, number>();
  /** Jobs seen running here (in a listing or an event): an ending of theirs in a listing is owed. */
  readonly #owed = new Set<string>();
  /** The ids of the previous listing; `undefined` before the first. */
  #listed: Set<string> | undefined;

  /** Job `id` is running (a progress event was heard, or it was created here): its ending is owed. */
  running(id: string): void {
    this.#owed.add(id);
  }

  /**
   * Whether the ending in `record` is still to be told; when it is, it counts as told from now on (so two
   * tellings of one ending, from an event and from a listing, call the listeners once). A record that has not
   * ended is always to be told (the caller tells what it heard).
   */
  claim(record: EndingRecord): boolean {
    if (!ended(record) || record.completedAt === null) return true;
    if (this.#told.get(record.id) === record.completedAt) return false;
    this.#told.set(record.id, record.completedAt);
    this.#owed.delete(record.id);
    return true;
  }

  /**
   * The endings in `records` (a listing of every job) that this node owes and has not told: of jobs it saw
   * running, and of jobs that were not in the previous listing (created and ended between two listings). The
   * first listing only learns which jobs run: what ended before this node looked is not its to tell.
   */
  missed<T extends EndingRecord>(records: readonly T[]): (T & EndedRecord)[] {
    const endings: (T & EndedRecord)[] = [];
    const listed = new Set<string>();
    for (const record of records) {
      listed.add(record.id);
      if (!ended(record)) {
        this.#owed.add(record.id);
        continue;
      }
      if (this.#told.get(record.id) === record.completedAt) continue;
      const appeared = this.#listed !== undefined && !this.#listed.has(record.id);
      if (this.#owed.has(record.id) || appeared) endings.push(record);
    }
    for (const id of this.#told.keys()) if (!listed.has(id)) this.#told.delete(id);
    for (const id of this.#owed) if (!listed.has(id)) this.#owed.delete(id);
    this.#listed = listed;
    return endings;
  }
}
