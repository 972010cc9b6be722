/**
 * Reading query parameters strictly: each at most once, numbers within documented bounds.
 * @module
 */
import { HttpError } from './errors.js';

/** The value of query parameter `name`, or `null`; giving it twice is a 400. */
export function queryParam(url: URL, name: string): string | null {
  const values = url.searchParams.getAll(name);
  if (values.length > 1) throw new HttpError('invalid_request', `${name} must be given at most once`);
  return values[0] ?? null;
}

/** An integer query parameter in `[min, max]`, or `fallback` when absent. */
export function integerParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = queryParam(url, name);
  if (raw === null) return fallback;
  const value = /^\d{1,16}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new HttpError('invalid_request', `${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

/** A number query parameter (decimals allowed) in `[min, max]`, or `fallback` when absent. */
export function numberParam(url: URL, name: string, fallback: number, min: number, max: number): number {
  const raw = queryParam(url, name);
  if (raw === null) return fallback;
  const value = /^\d{1,6}(\.\d{1,6})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new HttpError('invalid_request', `${name} must be a number from ${min} to ${max}`);
  }
  return value;
}

/** A boolean query parameter (`true` or `false`), `false` when absent. */
export function booleanParam(url: URL, name: string): boolean {
  const raw = queryParam(url, name);
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new HttpError('invalid_request', `${name} must be true or false`);
}
