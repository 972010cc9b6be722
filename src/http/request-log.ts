/**
 * The log lines of the HTTP API: one per answered request (from the handler's `onRequest` record, with the bytes
 * the Node listener wrote), and one per error a client saw only as `internal_error`. Runtime-free: it writes to
 * any logger with pino's `info` / `error` / `isLevelEnabled` shape (`mailvet serve` gives it pino).
 * @module
 */
import { errorFields } from '../io/log-text.js';
import type { HttpLogger } from './errors.js';
import type { RequestObserver, RequestRecord } from './request-record.js';

/** What the request log needs of a logger (a pino `Logger` has it). */
export interface LineLogger {
  /** Whether lines of `level` are written. */
  isLevelEnabled(level: string): boolean;
  /** Writes an `info` line: `fields` and the message. */
  info(fields: object, message: string): void;
  /** Writes an `error` line: `fields` and the message. */
  error(fields: object, message: string): void;
  /**
   * Writes an `info` line whose fields come as ready JSON members (`"a":1,"b":"x"`), in the logger's own line
   * format, straight to its destination: the request log's fast path (no object to walk). @default none: `info`
   */
  infoLine?(members: string, message: string): void;
}

/** Options of {@link requestLog} and {@link httpErrorLog}. */
export interface RequestLogOptions {
  /** Let lines carry email addresses (a `GET /v1/verify` line its `email`). @default false */
  readonly addresses?: boolean;
}

/** The route whose `email` parameter a request line carries when addresses are on. */
const VERIFY_ROUTE = '/v1/verify';

/** The `email` query parameter of `request`, or `undefined` (a malformed target has none). */
function emailOf(request: Request): string | undefined {
  try {
    return new URL(request.url).searchParams.get('email') ?? undefined;
  } catch {
    return undefined;
  }
}

/** A number for a line (a non-finite one, which JSON has not, as `null`). */
function numberOf(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? 'null' : String(value);
}

/** Text that JSON writes as it is between quotes: printable ASCII without `"` and `\`. */
const PLAIN_JSON_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** `text` as a JSON string: quoted as it is when nothing in it needs escaping (a request id, a key id). */
function jsonString(text: string): string {
  return PLAIN_JSON_TEXT.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** Largest number of hundredths written by integer arithmetic (beyond it, and below 0, `String` does it). */
const MAX_HUNDREDTHS = 1e12;

/**
 * `durationMs` rounded to hundredths, as JSON: the same text as `String(Math.round(ms * 100) / 100)`, from whole
 * numbers (a double's shortest form costs more than two integers' on the hot path).
 */
export function hundredthsOf(durationMs: number): string {
  if (!Number.isFinite(durationMs)) return 'null';
  const hundredths = Math.round(durationMs * 100);
  if (!(hundredths >= 0 && hundredths <= MAX_HUNDREDTHS)) return String(hundredths / 100);
  const whole = Math.floor(hundredths / 100);
  const fraction = hundredths - whole * 100;
  if (fraction === 0) return String(whole);
  if (fraction % 10 === 0) return `${whole}.${fraction / 10}`;
  return `${whole}.${fraction < 10 ? '0' : ''}${fraction}`;
}

/** Most `method`, `route` and `status` members kept ready by one request log (they come from bounded sets). */
const MAX_HEADS = 1000;

/**
 * The members of a request's line as JSON text, the same fields as {@link fieldsOf}: the `method`, `route` and
 * `status` members are made once per combination and kept, so a line costs two string escapes (request and key
 * id) and three numbers.
 */
function membersWriter(): (record: RequestRecord) => string {
  const heads = new Map<string | null, Map<string, Map<number, string>>>();
  let count = 0;
  const headOf = (record: RequestRecord): string => {
    const head =
      `"method":${JSON.stringify(record.method)},` +
      `"route":${record.route === null ? 'null' : JSON.stringify(record.route)},"status":${numberOf(record.status)}`;
    if (count >= MAX_HEADS) return head;
    let methods = heads.get(record.route);
    if (methods === undefined) {
      methods = new Map();
      heads.set(record.route, methods);
    }
    let statuses = methods.get(record.method);
    if (statuses === undefined) {
      statuses = new Map();
      methods.set(record.method, statuses);
    }
    statuses.set(record.status, head);
    count += 1;
    return head;
  };
  return (record) => {
    const head = heads.get(record.route)?.get(record.method)?.get(record.status) ?? headOf(record);
    return (
      `"request_id":${jsonString(record.requestId)},${head},"duration_ms":${hundredthsOf(record.durationMs)},` +
      `"bytes":${record.bytes === undefined ? 'null' : numberOf(record.bytes)},` +
      `"key_id":${record.keyId === undefined ? 'null' : jsonString(record.keyId)}`
    );
  };
}

/** The fields of a request's line. */
function fieldsOf(record: RequestRecord) {
  return {
    request_id: record.requestId,
    method: record.method,
    route: record.route,
    status: record.status,
    duration_ms: Math.round(record.durationMs * 100) / 100,
    bytes: record.bytes ?? null,
    key_id: record.keyId ?? null,
  };
}

/**
 * The `onRequest` observer that logs one `info` line per request (`msg`: `request`): `request_id` (the
 * `Request-Id` the client got), `method`, `route` (the template, never the path), `status`, `duration_ms`,
 * `bytes` and `key_id` (the key's public id; never the key nor its tenant). With `addresses` a `GET /v1/verify`
 * line also carries its `email`. When `info` is off it does nothing: no object is built.
 */
export function requestLog(log: LineLogger, options: RequestLogOptions = {}): RequestObserver {
  if (!log.isLevelEnabled('info')) return () => {};
  if (options.addresses !== true) {
    const infoLine = log.infoLine?.bind(log);
    if (infoLine !== undefined) {
      const membersOf = membersWriter();
      return (record) => infoLine(membersOf(record), 'request');
    }
    return (record) => log.info(fieldsOf(record), 'request');
  }
  return (record, request) => {
    const email = record.route === VERIFY_ROUTE ? emailOf(request) : undefined;
    log.info(email === undefined ? fieldsOf(record) : { ...fieldsOf(record), email }, 'request');
  };
}

/**
 * The handler's `logger`: an `error` line with the request id the client got and the error's name, code and
 * message (addresses removed unless `addresses`). No stack: the request id finds the request's line.
 */
export function httpErrorLog(log: LineLogger, options: RequestLogOptions = {}): HttpLogger {
  const addresses = options.addresses === true;
  return {
    error: (message, details) => {
      log.error(
        {
          request_id: details.requestId === '' ? null : details.requestId,
          error: errorFields(details.error, addresses),
        },
        message,
      );
    },
  };
}
