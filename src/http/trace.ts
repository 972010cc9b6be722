/**
 * The span of one HTTP request (docs/operations.md, "Traces"): a `SERVER` span named `{method} {route}` (the
 * route's path template) with the HTTP semantic-convention attributes. It carries neither the path nor the query
 * (a client puts what it likes there, addresses included), nor any header but the trace context it may continue.
 * @module
 */
import type { Attributes } from '@opentelemetry/api';
import { endSpan, startSpan, type TracingApi } from '../tracing.js';

/** The HTTP methods the semantic conventions name; any other is recorded as `_OTHER`. */
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/** What the handler learned of a request while answering it: the route it matched (`null` for none). */
export interface RouteSeen {
  route: string | null;
}

/** The attributes a request has before it is answered: its method and URL scheme. */
function requestAttributes(request: Request): Attributes {
  const method = KNOWN_METHODS.has(request.method) ? request.method : '_OTHER';
  const attributes: Attributes = { 'http.request.method': method };
  if (method === '_OTHER') attributes['http.request.method_original'] = request.method.slice(0, 32);
  const colon = request.url.indexOf(':');
  if (colon > 0 && colon <= 5) attributes['url.scheme'] = request.url.slice(0, colon).toLowerCase();
  return attributes;
}

/**
 * Answers `request` with `answer` inside its span, once `api` is loaded: the span continues the trace context of
 * the request's headers (when the application registered a propagator), is active while the request is answered
 * (so a verification's span is its child, given a context manager), and ends when the response (its headers) is
 * ready, with `http.route`, `http.response.status_code`, and `error.type` on a 5xx.
 */
export async function tracedRequest<S extends RouteSeen>(
  api: TracingApi | Promise<TracingApi | undefined>,
  request: Request,
  seen: S,
  answer: (request: Request, seen: S) => Promise<Response>,
): Promise<Response> {
  const loaded = await api;
  if (loaded === undefined) return answer(request, seen);
  const headers = request.headers;
  const parent = loaded.propagation.extract(loaded.context.active(), headers, {
    keys: (carrier) => {
      const names: string[] = [];
      carrier.forEach((_value, name) => {
        names.push(name);
      });
      return names;
    },
    get: (carrier, key) => carrier.get(key) ?? undefined,
  });
  const attributes = requestAttributes(request);
  const method = attributes['http.request.method'] === '_OTHER' ? 'HTTP' : request.method;
  const trace = startSpan(loaded, method, parent, attributes, loaded.SpanKind.SERVER);
  if (trace === undefined) return answer(request, seen);
  let response: Response;
  try {
    response = await loaded.context.with(trace.context, () => answer(request, seen));
  } catch (error) {
    endSpan(trace, error);
    throw error;
  }
  const { span } = trace;
  if (seen.route !== null) {
    span.setAttribute('http.route', seen.route);
    span.updateName(`${method} ${seen.route}`);
  }
  span.setAttribute('http.response.status_code', response.status);
  if (response.status >= 500) {
    span.setAttribute('error.type', String(response.status));
    span.setStatus({ code: loaded.SpanStatusCode.ERROR });
  }
  span.end();
  return response;
}
