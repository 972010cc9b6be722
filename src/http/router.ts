/**
 * Matching a method and path against the route table: path templates with `{param}` segments.
 * @module
 */

/** The methods the API uses. */
export type Method = 'GET' | 'POST' | 'DELETE';

/** What the router needs of a route. */
export interface RoutePattern {
  readonly method: Method;
  /** An OpenAPI path template, e.g. `/v1/bulk/{id}`. */
  readonly path: string;
}

/** The outcome of matching a request. */
export type Match<R extends RoutePattern> =
  | { readonly kind: 'found'; readonly route: R; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: 'method_not_allowed'; readonly allow: readonly string[] }
  | { readonly kind: 'not_found' };

/** A router over a fixed route table. */
export interface Router<R extends RoutePattern> {
  /**
   * Finds the route of `method` and `pathname`. `HEAD` matches `GET` routes. A path that exists for other
   * methods gives `method_not_allowed` with the methods to list in `Allow`. Parameter values are
   * percent-decoded; a segment that does not decode matches nothing.
   */
  match(method: string, pathname: string): Match<R>;
}

/** A literal path segment, or the parameter name of a `{name}` segment. */
type Segment = { readonly literal: string } | { readonly param: string };

interface Compiled<R> {
  readonly route: R;
  readonly segments: readonly Segment[];
}

function compile<R extends RoutePattern>(route: R): Compiled<R> {
  const segments = route.path
    .split('/')
    .slice(1)
    .map((segment): Segment => {
      const param = /^\{(\w+)\}$/.exec(segment)?.[1];
      return param === undefined ? { literal: segment } : { param };
    });
  return { route, segments };
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

function paramsOf<R>(compiled: Compiled<R>, parts: readonly string[]): Record<string, string> | undefined {
  if (compiled.segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const segment = compiled.segments[i] as Segment;
    const part = parts[i] as string;
    if ('literal' in segment) {
      if (segment.literal !== part) return undefined;
    } else {
      const value = part === '' ? undefined : decode(part);
      if (value === undefined) return undefined;
      params[segment.param] = value;
    }
  }
  return params;
}

/**
 * Builds a router over `routes`.
 * @example
 * const router = createRouter([{ method: 'GET', path: '/v1/bulk/{id}' }]);
 * router.match('GET', '/v1/bulk/abc'); // { kind: 'found', route, params: { id: 'abc' } }
 */
export function createRouter<R extends RoutePattern>(routes: readonly R[]): Router<R> {
  const compiled = routes.map(compile);
  // Paths without parameters are found by one lookup (and win over templates); the others by their segments.
  const literal = new Map<string, Compiled<R>[]>();
  const templated: Compiled<R>[] = [];
  for (const entry of compiled) {
    if (entry.route.path.includes('{')) templated.push(entry);
    else literal.set(entry.route.path, [...(literal.get(entry.route.path) ?? []), entry]);
  }
  const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
  return {
    match(method, pathname) {
      const wanted = method === 'HEAD' ? 'GET' : method;
      const allow: string[] = [];
      const exact = literal.get(pathname);
      if (exact !== undefined) {
        for (const candidate of exact) {
          if (candidate.route.method === wanted)
            return { kind: 'found', route: candidate.route, params: NO_PARAMS };
          allow.push(candidate.route.method);
        }
      } else {
        const parts = pathname.split('/').slice(1);
        for (const candidate of templated) {
          const params = paramsOf(candidate, parts);
          if (params === undefined) continue;
          if (candidate.route.method === wanted) return { kind: 'found', route: candidate.route, params };
          allow.push(candidate.route.method);
        }
      }
      if (allow.length === 0) return { kind: 'not_found' };
      if (allow.includes('GET')) allow.push('HEAD');
      return { kind: 'method_not_allowed', allow };
    },
  };
}
