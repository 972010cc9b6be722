/**
 * Turns what a database client throws while opening into one clear `store_unavailable` error.
 * @module
 */
import { isMailvetError, MailvetError } from '../errors.js';

/** What PostgreSQL's SQLSTATE codes mean to someone starting mailvet. */
const SQLSTATE_HINTS: Readonly<Record<string, string>> = {
  '28P01': 'the password was refused',
  '28000': 'the server refused this user (pg_hba.conf)',
  '3D000': 'the database does not exist',
  '42501': 'the user may not create the schema or its tables',
  '57P03': 'the server is starting up or shutting down',
};

/** Network failures that Node reports by `code`. */
const NETWORK_HINTS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing listens at that address (is the server running?)',
  ENOTFOUND: 'the host name does not resolve',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the server closed the connection',
};

/** Wraps `error` (thrown while opening `what`) as `store_unavailable`, keeping mailvet's own errors as they are. */
export function openError(what: string, error: unknown): MailvetError {
  if (isMailvetError(error)) return error;
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const detail = error instanceof Error ? error.message : String(error);
  const hint = SQLSTATE_HINTS[code] ?? NETWORK_HINTS[code];
  return new MailvetError(
    'store_unavailable',
    `cannot open the job store (${what}): ${hint === undefined ? detail : `${hint}: ${detail}`}`,
    { cause: error },
  );
}

/** A connection string with its password replaced by `***`, for messages. */
export function redactUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return 'an unparsable connection string';
  }
}
