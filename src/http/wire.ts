/**
 * The wire types of the specification: a result's `domain` and `mx_record`, and a job's `name`, are strings,
 * the empty string when there is none (the library uses `null` for them).
 * @module
 */
import type { Job } from '../bulk/types.js';
import type { VerificationResult } from '../result.js';
import { shapedResultJson } from '../result-json.js';

/** A result as the HTTP API sends it: `domain` and `mx_record` are `""` when absent. */
export type WireResult = Omit<VerificationResult, 'domain' | 'mx_record'> & {
  readonly domain: string;
  readonly mx_record: string;
};

/** A job as the HTTP API sends it: `name` is `""` when it has none. */
export type WireJob = Omit<Job, 'name'> & { readonly name: string };

/**
 * `result` with the specification's string types (the same object when nothing is absent).
 * @example
 * wireResult(await verify('nobody')).domain; // ''
 */
export function wireResult(result: VerificationResult): WireResult {
  if (result.domain !== null && result.mx_record !== null) return result as WireResult;
  return { ...result, domain: result.domain ?? '', mx_record: result.mx_record ?? '' };
}

/**
 * `JSON.stringify(wireResult(result))`: the same text, written faster for a result the verifier made (see
 * `resultJson`).
 */
export function wireResultJson(result: VerificationResult): string {
  return shapedResultJson(result, '""') ?? JSON.stringify(wireResult(result));
}

/** `job` with the specification's string type for `name`. */
export function wireJob(job: Job): WireJob {
  return job.name !== null ? (job as WireJob) : { ...job, name: '' };
}
