/**
 * Calls of the HTTP API from tests, as a client with one bearer key sends them (JSON in, JSON out): over the
 * network to a running `mailvet serve`, or in process to a {@link Handler}.
 * @module
 */
import type { Handler } from '../../src/http/handler.js';

/** A call of a running server's API: `url` is the server's (`http://127.0.0.1:4321`), `path` the API's. */
export type ServerCall = (url: string, path: string, init?: RequestInit) => Promise<unknown>;

/**
 * Calls of a running server's API with bearer `key`: `call(url, path, init)` fetches `url + path` with `init`
 * (its headers go after the key and the JSON content type), resolves with the JSON body, and rejects, naming
 * the path, the status and the body, when the status is not 2xx.
 */
export function serverCaller(key: string): ServerCall {
  return async (url, path, init = {}) => {
    const response = await fetch(`${url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...init.headers },
    });
    const body = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`);
    return body;
  };
}

/**
 * Calls of a handler in process with bearer `key`: `call(handler, method, path, body)` sends `body` (when
 * given) as JSON and resolves, whatever the status, with the status, the `Retry-After` header (`null` without
 * one) and the parsed JSON body (`undefined` when empty; as `JSON.parse` returns it, so a test reads the
 * fields it checks).
 */
export function handlerCaller(key: string) {
  return async (handler: Handler, method: string, path: string, body?: unknown) => {
    const response = await handler(
      new Request(`http://127.0.0.1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    const text = await response.text();
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: text === '' ? undefined : JSON.parse(text),
    };
  };
}
