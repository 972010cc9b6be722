/**
 * `GET /v1/bulk/{id}/results`: JSON pages, or the whole list streamed as CSV or NDJSON.
 * @module
 */
import type { SourcedResults } from '../bulk/types.js';
import { csvHeader, csvRow } from '../io/result-csv.js';
import type { VerificationResult } from '../result.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';
import { RESULTS_PAGE } from './limits.js';
import { RESULT_FORMATS, type ResultFormat, resultFormatOf } from './negotiate.js';
import { booleanParam, integerParam, queryParam } from './params.js';
import { streamResponse } from './response.js';
import { wireJob, wireResult, wireResultJson } from './wire.js';

/** Positions read from the job store per step of a CSV or NDJSON stream. */
export const STREAM_CHUNK = 1000;

type ReadPage = (offset: number, limit: number) => Promise<VerificationResult[]>;
type ReadSourced = (offset: number, limit: number) => Promise<SourcedResults>;

/**
 * Streams the text of positions `[start, end)`: one store read of {@link STREAM_CHUNK} positions at a time,
 * turned into text by `render` (its `first` is true for the first read), and one read per pull (more while a
 * read gives no text, as a partial read may), so memory stays bounded and a slow client slows the reads. `render`
 * is called once, with an empty range, when `[start, end)` is empty.
 */
function pagedStream<Page>(
  read: (offset: number, limit: number) => Promise<Page>,
  render: (page: Page, first: boolean) => string,
  start: number,
  end: number,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let position = start;
  let first = true;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = '';
      do {
        const count = Math.min(STREAM_CHUNK, end - position);
        text += render(await read(position, count), first);
        first = false;
        position += count;
      } while (text === '' && position < end);
      if (text !== '') controller.enqueue(encoder.encode(text));
      if (position >= end) controller.close();
    },
  });
}

/** Positions `[start, end)` as NDJSON (see {@link pagedStream}). */
function ndjsonStream(read: ReadPage, start: number, end: number): ReadableStream<Uint8Array> {
  return pagedStream(
    (offset, limit) => (limit === 0 ? Promise.resolve([]) : read(offset, limit)),
    (page) => page.map((result) => `${wireResultJson(result)}\n`).join(''),
    start,
    end,
  );
}

/**
 * Positions `[start, end)` as CSV (see {@link pagedStream}): the header row first, each row the cells of its
 * source row (a job made from a CSV file, unless `resultsOnly`), then the result columns.
 */
function csvStream(
  read: ReadSourced,
  start: number,
  end: number,
  resultsOnly: boolean,
): ReadableStream<Uint8Array> {
  /** The header has the source's columns (decided by the first read: a partial read of a job still filling). */
  let withRows = false;
  return pagedStream(
    read,
    (page, first) => {
      let text = '';
      if (first) {
        withRows = !resultsOnly && page.source !== null;
        text += csvHeader(withRows ? page.source!.columns : []);
      }
      page.results.forEach((result, i) => {
        text += withRows && page.rows.length > 0 ? csvRow(result, page.rows[i]) : csvRow(result);
      });
      return text;
    },
    start,
    end,
  );
}

/**
 * Streams the JSON body `{ job, offset, limit: null, next_offset: null, results: [...] }` with every result
 * from `start`, reading {@link STREAM_CHUNK} positions per pull: the whole job in flat memory.
 */
function jsonStream(read: ReadPage, head: Record<string, unknown>, start: number, end: number) {
  const encoder = new TextEncoder();
  let position = start;
  let first = true;
  let text = `${JSON.stringify(head).slice(0, -1)},"results":[`;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      while (position < end && text.length < 65_536) {
        const count = Math.min(STREAM_CHUNK, end - position);
        const page = await read(position, count);
        position += count;
        for (const result of page) {
          text += `${first ? '\n' : ',\n'}${wireResultJson(result)}`;
          first = false;
        }
      }
      if (position >= end) text += '\n]}\n';
      controller.enqueue(encoder.encode(text));
      text = '';
      if (position >= end) controller.close();
    },
  });
}

/**
 * The results of a job in input order. JSON: `{ job, offset, limit, next_offset, results }`: without `limit`,
 * every result from `offset`, streamed (`limit` and `next_offset` are then `null`); with `limit` (at most
 * {@link RESULTS_PAGE}`.max`), one page and the `next_offset` of the next. CSV and NDJSON: every result from
 * `offset` (or `limit` of them), streamed; the CSV of a job made from a CSV file starts each row with the file's
 * cells (its columns first in the header), unless `results_only=true`. Before completion: 409 `job_not_complete` (or `job_failed`) with the job, unless `partial=true`,
 * which gives the results final so far (positions still in progress are left out).
 */
export const getJobResults: Operation = async ({
  query,
  request,
  params,
  tenant,
  headers,
  services,
  json,
}) => {
  const format: ResultFormat = resultFormatOf(queryParam(query, 'format'), request.headers.get('accept'));
  const partial = booleanParam(query, 'partial');
  const offset = integerParam(query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const paged = format === 'json' && queryParam(query, 'limit') !== null;
  const limit = paged
    ? integerParam(query, 'limit', RESULTS_PAGE.max, 1, RESULTS_PAGE.max)
    : integerParam(query, 'limit', Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER);
  const id = params.id as string;
  const access = tenant === undefined ? {} : { owner: tenant };
  const job = await services.jobs.get(id, access);
  if (job === undefined) throw new HttpError('not_found', 'no such job');
  if (!partial && job.status !== 'complete') {
    const failed = job.status === 'failed';
    throw new HttpError(
      failed ? 'job_failed' : 'job_not_complete',
      failed
        ? 'the job failed; ask with ?partial=true for the results it produced'
        : `the job is ${job.status} (${job.completed} of ${job.total} done); poll it, or ask with ?partial=true`,
      { fields: { job: wireJob(job) } },
    );
  }
  const read: ReadPage = (from, count) =>
    services.jobs.results(id, { ...access, offset: from, limit: count, partial });
  // The job is checked above: a read of the header alone, or of a job failed since, takes what there is.
  const readSourced: ReadSourced = (from, count) =>
    services.jobs.sourceResults(id, {
      ...access,
      offset: from,
      limit: count,
      partial: partial || count === 0,
    });
  const vary = { ...headers, vary: 'Accept' };
  if (paged) {
    const results = await read(offset, limit);
    const next = offset + limit < job.total ? offset + limit : null;
    return json(
      200,
      { job: wireJob(job), offset, limit, next_offset: next, results: results.map(wireResult) },
      { vary: 'Accept' },
    );
  }
  const end = Math.min(job.total, offset + limit);
  if (format === 'json') {
    const head = { job: wireJob(job), offset, limit: null, next_offset: null };
    return streamResponse(jsonStream(read, head, offset, end), RESULT_FORMATS.json, vary);
  }
  const disposition =
    format === 'csv'
      ? { 'content-disposition': `attachment; filename="mailvet-${encodeURIComponent(id)}.csv"` }
      : {};
  const stream =
    format === 'csv'
      ? csvStream(readSourced, offset, end, booleanParam(query, 'results_only'))
      : ndjsonStream(read, offset, end);
  return streamResponse(stream, RESULT_FORMATS[format], { ...vary, ...disposition });
};
