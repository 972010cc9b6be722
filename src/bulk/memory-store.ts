/**
 * The default {@link JobStore}: jobs and results in process memory, results kept compactly.
 * @module
 */
import type { VerificationResult } from '../result.js';
import { ResultColumns } from './columns.js';
import type { JobRecord, JobStore } from './types.js';

interface StoredJob {
  record: JobRecord;
  readonly results: ResultColumns;
}

/**
 * Creates an in-memory job store: the manager's default. Results take about 24 bytes per address plus the
 * address itself; nothing survives the process.
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
      if (job === undefined) jobs.set(record.id, { record, results: new ResultColumns() });
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
    deleteJob(id) {
      jobs.delete(id);
    },
  };
}
