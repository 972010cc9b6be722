/**
 * Reading query parameters strictly: each at most once, numbers within documented bounds.
 * @module
 */
import { HttpError } from './errors.js';

/** What reading query parameters needs of them (a `URLSearchParams` will do). */
export interface QueryParams {
  /** Every value of parameter `name`, decoded, in order. */
  getAll(name: string): string[];
  /** The name of every parameter, decoded, in order (a repeated one as often as it is given). */
  keys(): Iterable<string>;
  /** The parameters in `application/x-www-form-urlencoded` form, as `URLSearchParams` writes them. */
  toString(): string;
}

/** A query string that needs nothing but percent-decoding: read by splitting, answered from two arrays. */
class SimpleQuery implements QueryParams {
  readonly #search: string;
  readonly #names: readonly string[];
  readonly #values: readonly string[];

  constructor(search: string, names: readonly string[], values: readonly string[]) {
    this.#search = search;
    this.#names = names;
    this.#values = values;
  }

  getAll(name: string): string[] {
    const found: string[] = [];
    for (let i = 0; i < this.#names.length; i++) {
      if (this.#names[i] === name) found.push(this.#values[i] as string);
    }
    return found;
  }

  keys(): Iterable<string> {
    return this.#names;
  }

  toString(): string {
    return new URLSearchParams(this.#search).toString();
  }
}

/**
 * Printable ASCII only (where `decodeURIComponent` and the form decoding of `URLSearchParams` agree), and no
 * leading `?` (which `URLSearchParams` drops).
 */
const PLAIN = /^(?:[\x21-\x3e\x40-\x7e][\x21-\x7e]*)?$/;

/** The value of hexadecimal digit `code` (a char code), or -1. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/**
 * `+` to space, then percent-decoding, of part of a plain query string; `undefined` for a malformed escape or
 * escaped bytes that are not UTF-8. ASCII escapes are decoded here; others by `decodeURIComponent`.
 */
function formDecode(part: string): string | undefined {
  let decoded = '';
  let copied = 0;
  for (let i = 0; i < part.length; i++) {
    const code = part.charCodeAt(i);
    if (code === 0x2b) {
      decoded += `${part.slice(copied, i)} `;
      copied = i + 1;
    } else if (code === 0x25) {
      const high = hexValue(part.charCodeAt(i + 1));
      const low = hexValue(part.charCodeAt(i + 2));
      if (high < 0 || low < 0) return undefined;
      if (high >= 8) return utf8Decode(part);
      decoded += part.slice(copied, i) + String.fromCharCode(high * 16 + low);
      i += 2;
      copied = i + 1;
    }
  }
  return copied === 0 ? part : decoded + part.slice(copied);
}

/** {@link formDecode} of a part with non-ASCII escapes. */
function utf8Decode(part: string): string | undefined {
  try {
    return decodeURIComponent(part.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

/**
 * The parameters of a query string (without `?`), decoded exactly as `URLSearchParams` decodes them. Plain
 * ASCII with well-formed escapes, the usual case, is split and decoded here; anything else (a stray `%`,
 * escapes that are not UTF-8, other characters) is left to `URLSearchParams`, which repairs it its own way.
 * @example
 * parseQuery('email=a%40b.c&timeout=2').getAll('email'); // ['a@b.c']
 */
export function parseQuery(search: string): QueryParams {
  if (!PLAIN.test(search)) return new URLSearchParams(search);
  const names: string[] = [];
  const values: string[] = [];
  let from = 0;
  while (from < search.length) {
    const amp = search.indexOf('&', from);
    const to = amp === -1 ? search.length : amp;
    if (to > from) {
      const equals = search.indexOf('=', from);
      const split = equals !== -1 && equals < to;
      const name = formDecode(search.slice(from, split ? equals : to));
      const value = split ? formDecode(search.slice(equals + 1, to)) : '';
      if (name === undefined || value === undefined) return new URLSearchParams(search);
      names.push(name);
      values.push(value);
    }
    from = to + 1;
  }
  return new SimpleQuery(search, names, values);
}

/**
 * The path and the query of an absolute URL string such as `Request.url`, or of an origin-form request target
 * (`/path?query`), split without a full URL parse (the hot path needs nothing else). The fragment, if any, is
 * dropped.
 * @example
 * pathAndQuery('http://h:1/v1/verify?email=a%40b.c').pathname; // '/v1/verify'
 * pathAndQuery('/v1/verify?email=a%40b.c').pathname; // '/v1/verify'
 */
export function pathAndQuery(href: string): { pathname: string; query: QueryParams } {
  const hash = href.indexOf('#');
  const end = hash === -1 ? href.length : hash;
  const authority = href.startsWith('/') ? -1 : href.indexOf('://');
  const from = authority === -1 ? 0 : authority + 3;
  const question = href.indexOf('?', from);
  const pathEnd = question === -1 || question > end ? end : question;
  const slash = href.indexOf('/', from);
  const start = slash === -1 || slash > pathEnd ? pathEnd : slash;
  return {
    pathname: start === pathEnd ? '/' : href.slice(start, pathEnd),
    query: parseQuery(pathEnd < end ? href.slice(pathEnd + 1, end) : ''),
  };
}

/** The value of query parameter `name`, or `null`; giving it twice is a 400. */
export function queryParam(query: QueryParams, name: string): string | null {
  const values = query.getAll(name);
  if (values.length > 1) throw new HttpError('invalid_request', `${name} must be given at most once`);
  return values[0] ?? null;
}

function boundedParam(
  query: QueryParams,
  name: string,
  fallback: number,
  range: { min: number; max: number },
  shape: { pattern: RegExp; noun: string },
): number {
  const raw = queryParam(query, name);
  if (raw === null) return fallback;
  const value = shape.pattern.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= range.min && value <= range.max)) {
    throw new HttpError('invalid_request', `${name} must be ${shape.noun} from ${range.min} to ${range.max}`);
  }
  return value;
}

const INTEGER = { pattern: /^\d{1,16}$/, noun: 'an integer' };
const DECIMAL = { pattern: /^\d{1,6}(\.\d{1,6})?$/, noun: 'a number' };

/** An integer query parameter in `[min, max]`, or `fallback` when absent. */
export function integerParam(
  query: QueryParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  return boundedParam(query, name, fallback, { min, max }, INTEGER);
}

/** A number query parameter (decimals allowed) in `[min, max]`, or `fallback` when absent. */
export function numberParam(
  query: QueryParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  return boundedParam(query, name, fallback, { min, max }, DECIMAL);
}

/**
 * A list of integers, comma-separated (`?d=1,2`) or repeated (`?d=1&d=2`, as openapi-fetch sends arrays), or
 * `undefined` when absent; an empty value is the empty list. Each entry is checked by the caller.
 * @example
 * integerListParam(parseQuery('d=60000,300000'), 'd'); // [60000, 300000]
 */
export function integerListParam(query: QueryParams, name: string): number[] | undefined {
  const values = query.getAll(name);
  if (values.length === 0) return undefined;
  const text = values.join(',');
  if (text === '') return [];
  const parts = text.split(',');
  if (parts.length > 100 || parts.some((part) => !/^\d{1,16}$/.test(part))) {
    throw new HttpError('invalid_request', `${name} must be integers separated by commas`);
  }
  return parts.map(Number);
}

/** A boolean query parameter (`true` or `false`), `false` when absent. */
export function booleanParam(query: QueryParams, name: string): boolean {
  const raw = queryParam(query, name);
  if (raw === null || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new HttpError('invalid_request', `${name} must be true or false`);
}

/**
 * Refuses a query parameter that is not in `known` with a 400 naming it (and what the route takes), as an
 * unknown JSON field is refused: a misspelt `auto_strat=false` must not be ignored.
 * @example
 * rejectUnknownParams(parseQuery('auto_strat=false'), ['name', 'auto_start']); // throws invalid_request
 */
export function rejectUnknownParams(query: QueryParams, known: readonly string[]): void {
  for (const name of query.keys()) {
    if (known.includes(name)) continue;
    const takes = known.length === 0 ? 'no query parameters' : `only ${known.join(', ')}`;
    throw new HttpError(
      'invalid_request',
      `unknown query parameter ${JSON.stringify(name.slice(0, 64))} (this route takes ${takes})`,
    );
  }
}
