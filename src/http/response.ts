/**
 * Building responses. JSON responses remember their serialized body, so that the Node listener can write it
 * without reading the WHATWG body stream back; for the Node listener's own requests they are lightweight
 * (light.ts).
 * @module
 */
import { lightJsonResponse, lightText } from './light.js';

/** The headers sent with every API response, in a new record (a literal: cheaper than copying a shared one). */
function commonHeaders(): Record<string, string> {
  return { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
}

/** Headers sent with every API response. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze(commonHeaders());

const serialized = new WeakMap<Response, string>();

/**
 * A JSON response; `headers` are added to the common ones. With `light`, a lightweight response (only for a
 * request of the Node listener, which writes it without building it).
 */
export function jsonResponse(
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
  light = false,
): Response {
  return jsonTextResponse(status, JSON.stringify(body), headers, light);
}

/** As {@link jsonResponse}, for a body already serialized to JSON `text`. */
export function jsonTextResponse(
  status: number,
  text: string,
  headers: Readonly<Record<string, string>> = {},
  light = false,
): Response {
  const all = commonHeaders();
  all['content-type'] = 'application/json';
  Object.assign(all, headers);
  if (light) return lightJsonResponse(status, text, all);
  const response = new Response(text, { status, headers: all });
  serialized.set(response, text);
  return response;
}

/** A response without a body (204, or the answer to a HEAD request). */
export function emptyResponse(status: number, headers: Readonly<Record<string, string>> = {}): Response {
  return new Response(null, { status, headers: { ...COMMON_HEADERS, ...headers } });
}

/** A streamed response of `contentType`. */
export function streamResponse(
  stream: ReadableStream<Uint8Array>,
  contentType: string,
  headers: Readonly<Record<string, string>> = {},
): Response {
  return new Response(stream, {
    status: 200,
    headers: { ...COMMON_HEADERS, 'content-type': contentType, ...headers },
  });
}

/**
 * The serialized body of a response made by {@link jsonResponse}, or `undefined` for any other response.
 * Only meaningful while the body has not been replaced: callers pass the very response the handler returned.
 */
export function serializedBody(response: Response): string | undefined {
  return lightText(response) ?? serialized.get(response);
}
