/**
 * Choosing the format of job results: `?format=` first, then the `Accept` header, then JSON.
 * @module
 */
import { HttpError } from './errors.js';

/** The result formats and their media types. */
export const RESULT_FORMATS = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson',
} as const;

/** A result format. */
export type ResultFormat = keyof typeof RESULT_FORMATS;

/** Media types that select each format in `Accept`, in order of preference on a tie. */
const ACCEPTED: readonly (readonly [ResultFormat, readonly string[]])[] = [
  ['json', ['application/json']],
  ['csv', ['text/csv']],
  ['ndjson', ['application/x-ndjson', 'application/ndjson']],
];

interface MediaRange {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
}

function parseAccept(header: string): MediaRange[] {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',').slice(0, 64)) {
    const [range, ...params] = part.split(';');
    const [type, subtype] = (range ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) continue;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name?.trim().toLowerCase() === 'q') {
        const parsed = Number(value?.trim());
        q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
      }
    }
    ranges.push({ type, subtype, q });
  }
  return ranges;
}

/** The q-value of `mediaType` under `ranges`: from the most specific range that matches (RFC 9110 12.5.1). */
function qualityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split('/');
  let best = -1;
  let q = 0;
  for (const range of ranges) {
    const specificity =
      range.type === type && range.subtype === subtype
        ? 2
        : range.type === type && range.subtype === '*'
          ? 1
          : range.type === '*' && range.subtype === '*'
            ? 0
            : -1;
    if (specificity > best) {
      best = specificity;
      q = range.q;
    }
  }
  return q;
}

/**
 * The format asked for: `?format=json|csv|ndjson` wins (anything else is a 400); otherwise the type the
 * `Accept` header prefers among `application/json`, `text/csv` and `application/x-ndjson` (or
 * `application/ndjson`); when it accepts none of them, or is absent, JSON (RFC 9110 lets a server ignore an
 * `Accept` it cannot satisfy rather than answer 406).
 */
export function resultFormatOf(format: string | null, accept: string | null): ResultFormat {
  if (format !== null) {
    if (Object.hasOwn(RESULT_FORMATS, format)) return format as ResultFormat;
    throw new HttpError('invalid_request', 'format must be json, csv or ndjson');
  }
  if (accept === null) return 'json';
  const ranges = parseAccept(accept);
  let chosen: ResultFormat = 'json';
  let chosenQ = 0;
  for (const [name, types] of ACCEPTED) {
    const q = Math.max(...types.map((type) => qualityOf(type, ranges)));
    if (q > chosenQ) {
      chosen = name;
      chosenQ = q;
    }
  }
  return chosen;
}
