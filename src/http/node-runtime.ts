/**
 * The HTTP adapter's Node runtime module: what the handler takes of Node, handed to it as an {@link HttpPlatform}
 * by `createHandler` (handler.ts). It reads the built web console from disk (dist/console) and the JavaScript
 * heap limit (`v8`), from which the memory budgets' defaults are made. The handler and its routes never import it,
 * so they stay runtime-free (`createHandlerWith` takes any platform).
 * @module
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { ASSET_NAME, type ConsoleFiles } from './console.js';
import type { HttpPlatform } from './handler-core.js';
import { FIXED_LIMITS, type HttpLimits } from './limits.js';

/**
 * Where the built console is: dist/console beside this module's dist/http, or, when this module runs from
 * src/ (tests, tsx), the checkout's dist/console.
 */
export const DEFAULT_CONSOLE_DIR =
  [new URL('../console/', import.meta.url), new URL('../../dist/console/', import.meta.url)]
    .map((url) => fileURLToPath(url))
    .find((dir) => existsSync(`${dir}index.html`)) ?? fileURLToPath(new URL('../console/', import.meta.url));

/**
 * Reads the built console from `dir`. Returns `undefined` when it is not there (a checkout that was not built):
 * `/` then answers 404 saying so, and the API is unaffected.
 */
export function readConsole(dir: string = DEFAULT_CONSOLE_DIR): ConsoleFiles | undefined {
  const indexPath = `${dir.replace(/\/?$/, '/')}index.html`;
  if (!existsSync(indexPath)) return undefined;
  const assetsDir = `${dir.replace(/\/?$/, '/')}assets/`;
  const assets = new Map<string, string>();
  for (const name of existsSync(assetsDir) ? readdirSync(assetsDir) : []) {
    if (ASSET_NAME.test(name)) assets.set(name, readFileSync(`${assetsDir}${name}`, 'utf8'));
  }
  return { index: readFileSync(indexPath, 'utf8'), assets };
}

/** Bytes of memory one held address costs, counted generously (stored result, input, scheduling, parsing). */
const BYTES_PER_ADDRESS = 256;

/**
 * The default `maxAddressesPerKey`: a quarter of this process's JavaScript heap limit
 * (`v8.getHeapStatistics().heap_size_limit`, set by `--max-old-space-size` or the machine's memory) at 256 bytes
 * an address, at least 10,000.
 * @example
 * defaultMaxAddressesPerKey(4 * 2 ** 30); // 4194304 for a 4 GiB heap
 */
export function defaultMaxAddressesPerKey(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(10_000, Math.floor(heapLimitBytes / 4 / BYTES_PER_ADDRESS));
}

/** The smallest default byte budget (16 MiB), whatever the heap limit. */
const MIN_BYTE_BUDGET = 16 * 2 ** 20;

/**
 * The default `maxBytesPerKey`: a quarter of this process's JavaScript heap limit (as for
 * {@link defaultMaxAddressesPerKey}), at least 16 MiB.
 * @example
 * defaultMaxBytesPerKey(4 * 2 ** 30); // 1073741824 for a 4 GiB heap
 */
export function defaultMaxBytesPerKey(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(MIN_BYTE_BUDGET, Math.floor(heapLimitBytes / 4));
}

/**
 * The default `maxBytesHeld`: half this process's JavaScript heap limit, at least 16 MiB (the rest is for requests
 * in flight, results being written and the program itself).
 * @example
 * defaultMaxBytesHeld(4 * 2 ** 30); // 2147483648 for a 4 GiB heap
 */
export function defaultMaxBytesHeld(heapLimitBytes = getHeapStatistics().heap_size_limit): number {
  return Math.max(MIN_BYTE_BUDGET, Math.floor(heapLimitBytes / 2));
}

/** The documented defaults of {@link HttpLimits}: the memory budgets on this process's heap limit. */
export const DEFAULT_LIMITS: Readonly<Required<HttpLimits>> = Object.freeze({
  maxBodyBytes: FIXED_LIMITS.maxBodyBytes,
  maxEmailsPerRequest: FIXED_LIMITS.maxEmailsPerRequest,
  maxListBytes: FIXED_LIMITS.maxListBytes,
  maxListEmails: FIXED_LIMITS.maxListEmails,
  maxJobsPerKey: FIXED_LIMITS.maxJobsPerKey,
  maxAddressesPerKey: defaultMaxAddressesPerKey(),
  maxBytesPerKey: defaultMaxBytesPerKey(),
  maxBytesHeld: defaultMaxBytesHeld(),
  requestsPerSecond: FIXED_LIMITS.requestsPerSecond,
  burst: FIXED_LIMITS.burst,
  failedAuthPerMinute: FIXED_LIMITS.failedAuthPerMinute,
});

/** Node's {@link HttpPlatform}: {@link DEFAULT_LIMITS}, and the console read by {@link readConsole}. */
export const nodeHttpPlatform: HttpPlatform = Object.freeze({
  limits: DEFAULT_LIMITS,
  readConsole: (dir: string | undefined) => readConsole(dir),
});
