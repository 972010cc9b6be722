/**
 * HTTP errors: the wire codes, the one error body, and the one function that maps any thrown value to a
 * response.
 * @module
 */

import type { Job } from '../bulk/types.js';
import { type ErrorCode, isMailvetError } from '../errors.js';
import { jsonResponse } from './response.js';
import { wireJob } from './wire.js';

/**
 * Every error code the HTTP API sends, with its status and the message used when none is given (and always
 * for 5xx, whose own messages never leave the server). docs/http.md has the same table.
 */
export const HTTP_ERRORS = {
  invalid_request: { status: 400, message: 'the request is malformed' },
  unauthorized: { status: 401, message: 'a valid API key is required (Authorization: Bearer <key>)' },
  forbidden: { status: 403, message: 'the API key lacks a scope this route needs' },
  not_found: { status: 404, message: 'not found' },
  method_not_allowed: { status: 405, message: 'method not allowed' },
  conflict: { status: 409, message: 'the request conflicts with the state of the job' },
  job_not_complete: { status: 409, message: 'the job is not complete; poll it, or ask with ?partial=true' },
  job_failed: { status: 409, message: 'the job failed; ask with ?partial=true for the results it produced' },
  payload_too_large: { status: 413, message: 'the request body is too large' },
  unsupported_media_type: {
    status: 415,
    message: 'the request body must be application/json (or, for address lists, text/plain or text/csv)',
  },
  webhook_refused: {
    status: 422,
    message: 'the webhook URL is refused: it must be https and resolve to public addresses only',
  },
  rate_limited: {
    status: 429,
    message: 'too many requests; retry after the number of seconds in Retry-After',
  },
  limit_exceeded: { status: 429, message: 'a quota is exhausted' },
  client_closed_request: {
    status: 499,
    message: 'the client closed the connection before the request was read',
  },
  internal_error: { status: 500, message: 'internal error' },
  body_already_read: {
    status: 500,
    message:
      'the request body was already read by another middleware (a body parser such as express.json()): mount mailvet before any body parser',
  },
  service_unavailable: { status: 503, message: 'the service is shutting down or unavailable' },
} as const satisfies Record<string, { status: number; message: string }>;

/** A wire error code (`error.code` of an error body). */
export type HttpErrorCode = keyof typeof HTTP_ERRORS;

/** Every wire error code. */
export const HTTP_ERROR_CODES = Object.keys(HTTP_ERRORS) as HttpErrorCode[];

/** The JSON body of every error response. */
export interface ErrorBody {
  error: { code: HttpErrorCode; message: string };
  /** Present with `job_not_complete` and `job_failed`: the job and its progress. */
  job?: unknown;
}

/** Extra parts of an {@link HttpError}. */
export interface HttpErrorOptions {
  /** Response headers to add (`Allow`, `Retry-After`, `WWW-Authenticate`, ...). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Top-level fields added to the body next to `error` (e.g. `job`). */
  readonly fields?: Readonly<Record<string, unknown>>;
  readonly cause?: unknown;
}

/**
 * An error meant for the client: its `message` is sent as is, so it must say only what the client may know.
 * Throw it from an `authenticate` hook to answer with another status (e.g. `new HttpError('unauthorized')`).
 * @example
 * throw new HttpError('invalid_request', 'email is required');
 */
export class HttpError extends Error {
  override name = 'HttpError';
  readonly code: HttpErrorCode;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, unknown>>;

  constructor(code: HttpErrorCode, message?: string, options: HttpErrorOptions = {}) {
    super(message ?? HTTP_ERRORS[code].message, options.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.status = HTTP_ERRORS[code].status;
    this.headers = options.headers ?? {};
    this.fields = options.fields ?? {};
  }
}

/** How each engine error code surfaces over HTTP; codes not listed become `internal_error`. */
const FROM_ENGINE: Partial<Record<ErrorCode, HttpErrorCode>> = {
  invalid_request: 'invalid_request',
  invalid_option: 'invalid_request',
  job_not_found: 'not_found',
  job_not_complete: 'job_not_complete',
  job_failed: 'job_failed',
  job_finished: 'conflict',
  job_not_processing: 'conflict',
  lease_lost: 'conflict',
  limit_exceeded: 'limit_exceeded',
  disposed: 'service_unavailable',
  queue_unavailable: 'service_unavailable',
  store_unavailable: 'service_unavailable',
  webhook_refused: 'webhook_refused',
};

/** What a client is told, and when to come back, for engine errors of a dependency that is away for now. */
const UNAVAILABLE: Partial<Record<ErrorCode, string>> = {
  store_unavailable: 'the job store does not answer; retry later',
  queue_unavailable: 'the job queue does not answer; retry later',
};

/** Seconds a client is asked to wait (`Retry-After`) when the store or the queue does not answer. */
const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Receives unexpected errors: those the client only sees as `internal_error` (or `service_unavailable`). */
export interface HttpLogger {
  /** Called once per such error, with the request id the client got. */
  error(message: string, details: { readonly requestId: string; readonly error: unknown }): void;
}

/**
 * Maps any thrown value to the one JSON error response. An {@link HttpError} keeps its message; an engine
 * error of a client mistake (unknown job, job not complete, quota) keeps its message under its HTTP code;
 * anything else becomes `internal_error` (or `service_unavailable` for a disposed engine) with the generic
 * message, and the real error goes to `logger` only.
 */
export function errorResponse(
  error: unknown,
  requestId: string,
  logger: HttpLogger,
  headers: Readonly<Record<string, string>> = {},
): Response {
  let code: HttpErrorCode;
  let message: string;
  let extraHeaders: Readonly<Record<string, string>> = {};
  let fields: Readonly<Record<string, unknown>> = {};
  if (error instanceof HttpError) {
    code = error.code;
    message = error.message;
    extraHeaders = error.headers;
    fields = error.fields;
  } else if (isMailvetError(error) && FROM_ENGINE[error.code] !== undefined) {
    code = FROM_ENGINE[error.code] as HttpErrorCode;
    const status = HTTP_ERRORS[code].status;
    message = status < 500 ? error.message : (UNAVAILABLE[error.code] ?? HTTP_ERRORS[code].message);
    if (UNAVAILABLE[error.code] !== undefined)
      extraHeaders = { 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) };
    const job = (error as { job?: Job }).job;
    if (status === 409 && job !== undefined) fields = { job: wireJob(job) };
  } else {
    code = 'internal_error';
    message = HTTP_ERRORS[code].message;
  }
  const status = HTTP_ERRORS[code].status;
  if (status >= 500 && !(error instanceof HttpError))
    logger.error(`request ${requestId} failed`, { requestId, error });
  const body: ErrorBody = { ...fields, error: { code, message } };
  return jsonResponse(status, body, { ...headers, ...extraHeaders });
}
