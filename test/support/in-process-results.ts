/**
 * The reference results of the fleet and crash tests: what the in-process runner answers for the same job.
 * @module
 */
import { BulkJobManager } from '../../src/bulk/manager.js';
import type { BulkVerifier } from '../../src/bulk/types.js';
import type { VerificationResult } from '../../src/result.js';

/**
 * Verifies `emails` as one job of an in-process manager (no store, no queue) and resolves with its results in
 * position order. The manager is closed; `verifier` stays the caller's to dispose of.
 */
export async function inProcessResults(
  verifier: BulkVerifier,
  emails: readonly string[],
): Promise<VerificationResult[]> {
  const jobs = new BulkJobManager({ verifier });
  try {
    const job = await jobs.create({ emails });
    const results: VerificationResult[] = [];
    for await (const result of jobs.stream(job.id)) results.push(result);
    return results;
  } finally {
    await jobs.close();
  }
}
