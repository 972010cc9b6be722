/**
 * The console's client of the `/v1` API: every request carries the key as `Authorization: Bearer`, errors come
 * back as the API's own message.
 * @module
 */

/** An error the API answered with (its `error.message` and `error.code`), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The API's `error.code` (`rate_limited`, `limit_exceeded`, ...), or `null`. */
    readonly code: string | null = null,
    /** The `Retry-After` of a 429 or 503, in seconds, or `null`. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
  }
}

/** Calls `path` with the key; returns the response when it is 2xx, else throws {@link ApiError}. */
export async function call(key: string, path: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers: { ...init.headers, authorization: `Bearer ${key}` } });
  } catch {
    throw new ApiError('the server cannot be reached', 0);
  }
  if (response.ok) return response;
  let message = `${response.status} ${response.statusText}`;
  let code: string | null = null;
  try {
    const body = (await response.json()) as { error?: { message?: string; code?: string } };
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.code === 'string') code = body.error.code;
  } catch {
    // not a JSON error body: the status line says enough
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  throw new ApiError(message, response.status, code, Number.isFinite(retryAfter) ? retryAfter : null);
}

/** Calls `path` and parses the JSON answer. */
export async function json<T>(key: string, path: string, init?: RequestInit): Promise<T> {
  return (await (await call(key, path, init)).json()) as T;
}
