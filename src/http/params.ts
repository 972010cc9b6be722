/**
 * Reading query parameters strictly: each at most once, numbers within documented bounds.
 * @module
 */
import { HttpError } from './errors.js';

/**
 * The path and the query of an absolute URL string such as `Request.url`, split without a full URL parse
 * (the hot path needs nothing else). The fragment, if any, is dropped.
 * @example
 * pathAndQuery('http://h:1/v1/verify?email=a%40b.c').pathname; // '/v1/verify'
 */
export function pathAndQuery(href: string): { pathname: string; query: URLSearchParams } {
  const hash = href.indexOf('#');
  const end = hash === -1 ? href.length : hash;
  const authority = href.indexOf('://');
  const from = authority === -1 ? 0 : authority + 3;
  const question = href.indexOf('?', from);
  const pathEnd = question === -1 || question > end ? end : question;
  const slash = href.indexOf('/', from);
  const start = slash === -1 || slash > pathEnd ? pathEnd : slash;
  return {
    pathname: start === pathEnd ? '/' : href.slice(start, pathEnd),
    query: new URLSearchParams(pathEnd < end ? href.slice(pathEnd + 1, end) : ''),
  };
}

/** The value of query parameter `name`, or `null`; giving it twice is a 400. */
export function queryParam(query: URLSearchParams, name: string): string | null {
  const values = query.getAll(name);
  if (values.length > 1) throw new HttpError('invalid_request', `${name} must be given at most once`);
  return values[0] ?? null;
}

/** An integer query parameter in `[min, max]`, or `fallback` when absent. */
export function integerParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = queryParam(query, name);
  if (raw === null) return fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new HttpError('invalid_request', `${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A number query parameter (decimals allowed) in `[min, max]`, or `fallback` when absent. */
export function numberParam(
  query: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = queryParam(query, name);
  if (raw === null) return fallback;
  const value = /^\d{1,6}(\.\d{1,6})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new HttpError('invalid_request', `${name} must be a number from ${min} to ${max}`);
  }
  return value;
}

/** A boolean query parameter (`true` or `false`), `false` when absent. */
export function booleanParam(query: URLSearchParams, name: string): boolean {
  const raw = queryParam(query, name);
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new HttpError('invalid_request', `${name} must be true or false`);
}
