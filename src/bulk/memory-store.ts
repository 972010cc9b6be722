/**
 * The default {@link JobStore}: jobs and results in process memory, results kept compactly.
 * @module
 */
import type { VerificationResult } from '../result.js';
import { ResultColumns } from './columns.js';
import type { JobRecord, JobStore } from './types.js';

/** Rows per chunk of a job's source rows. */
const ROW_CHUNK = 16_384;

interface StoredJob {
  record: JobRecord;
  readonly results: ResultColumns;
  /** Source rows by chunk of {@link ROW_CHUNK} positions; `undefined` until the job's first row. */
  rows: (string | undefined)[][] | undefined;
}

/**
 * Creates an in-memory job store: the manager's default. Results take about 24 bytes per address plus the
 * address itself; a source row one string (nothing for jobs without one); nothing survives the process.
 * @example
 * const jobs = new BulkJobManager({ store: memoryJobStore() });
 */
export function memoryJobStore(): JobStore {
  const jobs = new Map<string, StoredJob>();

  function stored(id: string): StoredJob {
    const job = jobs.get(id);
    if (job === undefined) throw new RangeError(`no job ${JSON.stringify(id)} in the store`);
    return job;
  }

  return {
    saveJob(record) {
      const job = jobs.get(record.id);
      if (job === undefined) jobs.set(record.id, { record, results: new ResultColumns(), rows: undefined });
      else job.record = record;
    },
    putResults(id, positions, results) {
      if (positions.length !== results.length) throw new RangeError('positions and results differ in length');
      const columns = stored(id).results;
      for (let i = 0; i < positions.length; i++) {
        if (columns.get(positions[i]!) === undefined) columns.set(positions[i]!, results[i]!); // written once
      }
    },
    getResults(id, offset, limit) {
      const columns = stored(id).results;
      const page: (VerificationResult | undefined)[] = [];
      for (let i = 0; i < limit; i++) page.push(columns.get(offset + i));
      return page;
    },
    putRows(id, first, rows) {
      const job = stored(id);
      job.rows ??= [];
      for (let i = 0; i < rows.length; i++) {
        const position = first + i;
        const index = Math.floor(position / ROW_CHUNK);
        while (job.rows.length <= index)
          job.rows.push(new Array<string | undefined>(ROW_CHUNK).fill(undefined));
        const chunk = job.rows[index]!;
        chunk[position % ROW_CHUNK] ??= rows[i]!; // written once
      }
    },
    getRows(id, offset, limit) {
      const chunks = stored(id).rows;
      const page: (string | undefined)[] = new Array(limit).fill(undefined);
      if (chunks === undefined) return page;
      for (let i = 0; i < limit; i++) {
        const position = offset + i;
        page[i] = chunks[Math.floor(position / ROW_CHUNK)]?.[position % ROW_CHUNK];
      }
      return page;
    },
    deleteJob(id) {
      jobs.delete(id);
    },
  };
}
