/**
 * The byte budgets of the bulk routes: `maxBytesPerKey` and `maxBytesHeld`, checked before a job is created or
 * addresses are added, against what the job manager says its jobs hold.
 * @module
 */
import { addressBytes, inputBytes, textBytes } from '../bulk/held-bytes.js';
import { encodedRowLength } from '../bulk/source.js';
import type { SourceRowsInput } from '../bulk/types.js';
import { TurnBudget } from '../turn.js';
import type { Context } from './context.js';
import { HttpError } from './errors.js';

/** What a create or an add would make its job hold: its addresses, their CSV rows and the job's name. */
export interface HeldRequest {
  readonly emails: readonly string[] | undefined;
  readonly source?: SourceRowsInput | undefined;
  readonly name?: string | undefined;
}

/** The bytes `request` would add to what the jobs hold, counted as the manager counts them (bulk/held-bytes.ts). */
export function requestBytes(request: HeldRequest): number {
  const emails = request.emails ?? [];
  const rows = request.source?.rows;
  let bytes = textBytes(request.name?.length ?? 0);
  if (rows === undefined) return bytes + inputBytes(emails);
  for (let i = 0; i < emails.length; i++) bytes += addressBytes(emails[i]!, encodedRowLength(rows[i] ?? []));
  return bytes;
}

/** Addresses counted at once by {@link requestBytesInSlices} between two looks at the clock. */
const COUNT_SLICE = 16_384;

/**
 * {@link requestBytes} of an uploaded list (up to millions of addresses and rows), counted a slice at a time with
 * an event-loop turn whenever `sliceMs` passed without one.
 */
export async function requestBytesInSlices(request: HeldRequest, sliceMs: number): Promise<number> {
  const emails = request.emails ?? [];
  const rows = request.source?.rows;
  const budget = new TurnBudget(sliceMs);
  let bytes = requestBytes({ emails: [], name: request.name });
  for (let from = 0; from < emails.length; from += COUNT_SLICE) {
    if (from > 0 && budget.spent()) await budget.turn();
    const to = Math.min(emails.length, from + COUNT_SLICE);
    bytes += requestBytes({
      emails: emails.slice(from, to),
      ...(rows === undefined ? {} : { source: { ...request.source!, rows: rows.slice(from, to) } }),
    });
  }
  return bytes;
}

/**
 * Throws `limit_exceeded` when `request` would take the tenant's jobs past `maxBytesPerKey`, or all jobs past
 * `maxBytesHeld`, counting what the job manager holds and what requests in progress reserved; the message names the
 * limit, what is held and what the request adds. Otherwise reserves the request's bytes and returns the function
 * that frees them, to call when the request ends. A manager that does not count what its jobs hold (no
 * `heldBytes`) is not checked. `adding` is the request's bytes when counted already ({@link requestBytesInSlices}).
 */
export function reserveBytes(
  context: Context,
  request: HeldRequest,
  adding: number = requestBytes(request),
): () => void {
  const { jobs, limits, reservedBytes } = context.services;
  if (jobs.heldBytes === undefined || adding === 0) return () => undefined;
  const tenant = context.tenant ?? '';
  const held = jobs.heldBytes(context.tenant === undefined ? {} : { owner: context.tenant });
  const ownerHeld = held.owner + reservedBytes.of(tenant);
  if (ownerHeld + adding > limits.maxBytesPerKey) {
    throw new HttpError(
      'limit_exceeded',
      `at most ${limits.maxBytesPerKey} bytes held per API key (maxBytesPerKey; its jobs hold ${ownerHeld}, this request adds ${adding}); delete finished jobs to make room`,
    );
  }
  const totalHeld = held.total + reservedBytes.total;
  if (totalHeld + adding > limits.maxBytesHeld) {
    throw new HttpError(
      'limit_exceeded',
      `at most ${limits.maxBytesHeld} bytes held by all jobs of this server (maxBytesHeld; they hold ${totalHeld}, this request adds ${adding}); try again once jobs are deleted`,
    );
  }
  return reservedBytes.reserve(tenant, adding);
}
