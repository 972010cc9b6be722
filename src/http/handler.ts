/**
 * `createHandler`: the whole API as one `(request: Request) => Promise<Response>` function, on Node's defaults
 * (http/node-runtime.ts: the built console read from disk, memory budgets from the heap limit). The handler itself
 * (`createHandlerWith`, handler-core.ts) is runtime-free.
 * @module
 */
import { createHandlerWith, type Handler, type HandlerOptions } from './handler-core.js';
import { nodeHttpPlatform } from './node-runtime.js';

export type { Handler, HandlerOptions } from './handler-core.js';

/**
 * Creates the HTTP API handler: a `(request: Request) => Promise<Response>` function (WHATWG fetch types)
 * that any server can mount. Options are validated now (an `OptionsError` names a bad one); without
 * `apiKeys` or `authenticate` the keys come from MAILVET_API_KEYS, and with none at all it throws rather
 * than serve an open API.
 * @example
 * const handler = createHandler({ apiKeys: ['secret'], verifierOptions: { smtp: false } });
 * const response = await handler(
 *   new Request('http://localhost/v1/verify?email=a@example.com', { headers: { authorization: 'Bearer secret' } }),
 * );
 * await handler.close();
 */
export function createHandler(options: HandlerOptions = {}): Handler {
  return createHandlerWith(nodeHttpPlatform, options);
}
