/**
 * What a failed call of the fleet's store means: the database is out of reach for now (wait and try again), or
 * it refused what was asked (trying again would fail the same way).
 * @module
 */
import { StoreError } from '../bulk/errors.js';
import { isMailvetError, MailvetError } from '../errors.js';

/** How a store call failed: `unreachable` (connection lost, server down), `rejected` (the database refused the statement or its data), `other`. */
export type StoreFailure = 'unreachable' | 'rejected' | 'other';

/** Network failures Node reports by `code`. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * SQLSTATE classes of a statement the database refuses whatever the moment: data exception (22), integrity
 * constraint violation (23), syntax error or access rule violation (42: a missing table, no privilege), feature
 * not supported (0A), program limit exceeded (54).
 */
const REJECTED_CLASSES = new Set(['22', '23', '42', '0A', '54']);

/**
 * SQLSTATEs of a server that is out of reach for now: connection exception (class 08), operator intervention
 * (57: shutting down, starting up), too many connections.
 */
function unreachableState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('57') || code === '53300';
}

/** What `pg` throws, without a code, when a connection ends under a query or cannot be made in time. */
const CONNECTION_MESSAGE =
  /connection terminated|connection error|timeout exceeded when trying to connect|connection ended|not queryable/i;

/** Classifies what a store call threw (looking one `cause` deep, for errors that wrap the driver's). */
export function storeFailureOf(error: unknown): StoreFailure {
  for (let current = error, depth = 0; depth < 2 && current != null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code)) return 'unreachable';
      if (/^[0-9A-Z]{5}$/.test(code)) {
        if (unreachableState(code)) return 'unreachable';
        if (REJECTED_CLASSES.has(code.slice(0, 2))) return 'rejected';
      }
    }
    if (current instanceof Error && CONNECTION_MESSAGE.test(current.message)) return 'unreachable';
    current = (current as { cause?: unknown }).cause;
  }
  return 'other';
}

/**
 * The error of a failed store call: `store_unavailable` when the database is out of reach (the call may be
 * repeated once it is back; HTTP 503), `store_error` otherwise.
 */
export function storeError(operation: string, error: unknown): MailvetError {
  if (storeFailureOf(error) === 'unreachable') {
    return new MailvetError('store_unavailable', `the job store is unreachable (to ${operation})`, {
      cause: error,
    });
  }
  return new StoreError(operation, error);
}

/** Runs a store read; a failure is `store_unavailable` (database out of reach) or `store_error`. */
export async function readStore<T>(operation: string, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw storeError(operation, error);
  }
}

/** Runs a store write; mailvet errors (a refused check) pass through, anything else as for reads. */
export async function writeStore<T>(operation: string, call: () => T | Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isMailvetError(error)) throw error;
    throw storeError(operation, error);
  }
}
