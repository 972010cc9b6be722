/**
 * The log lines of the HTTP API: one per answered request (from the handler's `onRequest` record, with the bytes
 * the Node listener wrote), and one per error a client saw only as `internal_error`. Runtime-free: it writes to
 * any logger with pino's `info` / `error` / `isLevelEnabled` shape (`mailvet serve` gives it pino).
 * @module
 */
import {
  jsonStringRoom,
  type MembersWriter,
  NUMBER_ROOM,
  utf8Bytes,
  writeBytes,
  writeHundredths,
  writeJsonString,
  writeNonNegativeInteger,
} from '../io/json-bytes.js';
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
   * Writes an `info` line, in the logger's own line format, whose members (`"a":1,"b":"x"`, at most `room` bytes)
   * `members` writes as UTF-8 bytes: the request log's fast path (no object to walk, no string to make).
   * @default none: `info`
   */
  infoBytes?(room: number, members: MembersWriter, message: string): void;
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

/** Most `method`, `route` and `status` members kept ready by one request log (they come from bounded sets). */
const MAX_HEADS = 1000;

const REQUEST_ID = utf8Bytes('"request_id":');
const DURATION = utf8Bytes(',"duration_ms":');
const BYTES = utf8Bytes(',"bytes":');
const KEY_ID = utf8Bytes(',"key_id":');
const NULL = utf8Bytes('null');

/**
 * Writes the members of a request's line as bytes, the same fields as {@link fieldsOf}: the `method`, `route` and
 * `status` members are encoded once per combination and kept, so a line costs two short strings (request and key
 * id) and three numbers, and no allocation.
 */
function requestLineWriter() {
  const heads = new Map<string | null, Map<string, Map<number, Uint8Array>>>();
  let count = 0;
  const headOf = (record: RequestRecord): Uint8Array => {
    const known = heads.get(record.route)?.get(record.method)?.get(record.status);
    if (known !== undefined) return known;
    const head = utf8Bytes(
      `,"method":${JSON.stringify(record.method)},"route":${JSON.stringify(record.route)},` +
        `"status":${JSON.stringify(record.status)}`,
    );
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
  let record: RequestRecord;
  let head: Uint8Array;
  const members: MembersWriter = (buffer, at) => {
    let end = writeBytes(buffer, at, REQUEST_ID);
    end = writeJsonString(buffer, end, record.requestId);
    end = writeBytes(buffer, end, head);
    end = writeBytes(buffer, end, DURATION);
    end = writeHundredths(buffer, end, record.durationMs);
    end = writeBytes(buffer, end, BYTES);
    end =
      record.bytes === undefined
        ? writeBytes(buffer, end, NULL)
        : writeNonNegativeInteger(buffer, end, record.bytes);
    end = writeBytes(buffer, end, KEY_ID);
    return record.keyId === undefined
      ? writeBytes(buffer, end, NULL)
      : writeJsonString(buffer, end, record.keyId);
  };
  return {
    members,
    /** Makes {@link members} write `next`'s members, and answers the most bytes they take. */
    take(next: RequestRecord): number {
      record = next;
      head = headOf(next);
      return (
        64 +
        head.length +
        jsonStringRoom(next.requestId.length) +
        jsonStringRoom(next.keyId?.length ?? 0) +
        2 * NUMBER_ROOM
      );
    },
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
    const infoBytes = log.infoBytes?.bind(log);
    if (infoBytes !== undefined) {
      const line = requestLineWriter();
      return (record) => infoBytes(line.take(record), line.members, 'request');
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
