/**
 * Reading a JSON request body within a byte limit, counting bytes as they stream in.
 * @module
 */
import { HttpError } from './errors.js';

/** True when a `Content-Type` value is JSON: `application/json`, in any case, and UTF-8 if a charset is given. */
export function isJsonContentType(value: string): boolean {
  const [type, ...params] = value.split(';');
  if (type?.trim().toLowerCase() !== 'application/json') return false;
  return params.every((param) => {
    const [name, raw] = param.split('=');
    if (name?.trim().toLowerCase() !== 'charset') return true;
    return /^"?utf-?8"?$/i.test(raw?.trim() ?? '');
  });
}

function tooLarge(maxBytes: number): HttpError {
  return new HttpError('payload_too_large', `the request body exceeds ${maxBytes} bytes`);
}

async function readBytes(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/**
 * Reads the body of `request` as JSON. Returns `undefined` when there is no body (or an empty one).
 * Throws an `HttpError`: `unsupported_media_type` when a body is not `application/json`, `payload_too_large`
 * beyond `maxBytes` (at once when `Content-Length` says so, else as soon as the count passes it; the rest is
 * not read), `invalid_request` for bytes that are not UTF-8 or text that is not JSON.
 */
export async function readJsonBody(request: Request, maxBytes: number): Promise<unknown> {
  if (request.body === null) return undefined;
  const length = request.headers.get('content-length');
  if (length !== null && Number(length) > maxBytes) throw tooLarge(maxBytes);
  const type = request.headers.get('content-type');
  if (type === null && length === '0') return undefined;
  if (type === null || !isJsonContentType(type)) {
    throw new HttpError(
      'unsupported_media_type',
      `the request body must be application/json (or a list: text/plain, text/csv), not ${type === null ? 'untyped' : JSON.stringify(type.slice(0, 100))}`,
    );
  }
  const bytes = await readBytes(request.body, maxBytes);
  if (bytes.byteLength === 0) return undefined;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError('invalid_request', 'the request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError('invalid_request', 'the request body is not valid JSON');
  }
}
