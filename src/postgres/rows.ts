/**
 * Conversions between the job store's rows and the manager's records, shared by the store's statements.
 * @module
 */
import type { JobError, JobRecord, JobSource, JobStatus } from '../bulk/types.js';
import type { Status, VerificationResult } from '../result.js';
import { resultJson } from '../result-json.js';
import { TurnBudget } from '../turn.js';
import type { Row } from './driver.js';

/**
 * Inputs per row of the `inputs` table, at most. Every writer of inputs (the durable store, the fleet) cuts them so,
 * and reads rely on it (`getInputs` bounds its scan with it): change it only with a migration.
 */
export const INPUT_CHUNK = 4096;

/** A numeric column (`bigint` arrives as a string). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}

/** A nullable numeric column. */
export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

/** A JSON column (PGlite parses it, `pg` may hand it over as text). */
export function json<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** A `jobs` row as the manager's record. */
export function recordOfRow(row: Row): JobRecord {
  return {
    id: String(row.id),
    owner: (row.owner as string | null) ?? null,
    name: (row.name as string | null) ?? null,
    status: row.status as JobStatus,
    total: num(row.total),
    completed: num(row.completed),
    counts: json<Record<Status, number>>(row.counts),
    createdAt: num(row.created_at),
    startedAt: numOrNull(row.started_at),
    completedAt: numOrNull(row.completed_at),
    error: row.error === null || row.error === undefined ? null : json<JobError>(row.error),
    greylistDelaysMs: json<number[]>(row.greylist_delays_ms),
    armed: row.armed === true,
    source: row.source === null || row.source === undefined ? null : json<JobSource>(row.source),
    ...(row.fresh === true ? { fresh: true } : {}),
  };
}

/** The `source` column of a job: `{ columns, emailColumn }` as JSON, or `null`. */
export function sourceColumn(record: JobRecord): string | null {
  const source = record.source ?? null;
  return source === null
    ? null
    : JSON.stringify({ columns: source.columns, emailColumn: source.emailColumn });
}

/**
 * Inserts the inputs of job `$1` from position `$2`: `$3` the addresses, `$4` their rows or `NULL`, each a JSON
 * array (parsed by the server: much cheaper for the client than a text[] parameter). `queued` is the value of
 * the fleet's column (the durable store's rows are queued by definition).
 */
export function insertInputsSql(s: string, queued: boolean): string {
  return `INSERT INTO ${s}.inputs (job_id, first, emails, source_rows, queued)
    VALUES ($1, $2, ARRAY(SELECT json_array_elements_text($3::json)),
      CASE WHEN $4::json IS NULL THEN NULL ELSE ARRAY(SELECT json_array_elements_text($4::json)) END, ${queued})`;
}

/** The parameters of {@link insertInputsSql} for the chunk at `at` of the inputs (and rows) starting at `first`. */
export function inputChunk(
  id: string,
  first: number,
  at: number,
  emails: readonly string[],
  rows: readonly string[] | undefined,
): unknown[] {
  return [
    id,
    first + at,
    JSON.stringify(emails.slice(at, at + INPUT_CHUNK)),
    rows === undefined ? null : JSON.stringify(rows.slice(at, at + INPUT_CHUNK)),
  ];
}

/**
 * Serialises results once per distinct object (duplicates of an address share one). JSON text never holds a
 * raw line feed (JSON.stringify escapes it), so the texts can travel joined by `\n`.
 */
export function texts(results: readonly VerificationResult[]): string[] {
  const seen = new Map<VerificationResult, string>();
  return results.map((result) => {
    let text = seen.get(result);
    if (text === undefined) {
      text = resultJson(result);
      seen.set(result, text);
    }
    return text;
  });
}

/** Results serialised between two event-loop turns at most, in {@link resultColumnsInSlices}. */
const TEXTS_SLICE = 256;

/** A commit's results as the three texts the store's statements split on the server. */
export interface ResultColumns {
  /** The positions joined by `,`. */
  readonly list: string;
  /** The statuses joined by `,`. */
  readonly statuses: string;
  /** The results' JSON texts ({@link texts}) joined by `\n`. */
  readonly joined: string;
}

/**
 * The columns of a commit's results, built slice by slice, with an event-loop turn whenever `budgetMs` of work is
 * spent: a commit holds one to a few megabytes of results (thousands), whose JSON took 10-40 ms in one piece, and
 * whose positions and statuses joined in one call another few milliseconds. Each slice is joined as it is made: a
 * text built by concatenation is a tree of pieces that a join copies out one by one, and a commit's texts joined in
 * one call held the loop for 20-90 ms; the slices' joins copy flat strings, about a millisecond.
 */
export async function resultColumnsInSlices(
  positions: readonly number[],
  results: readonly VerificationResult[],
  budgetMs: number,
): Promise<ResultColumns> {
  const statusOf = (result: VerificationResult): string => result.status;
  if (results.length <= TEXTS_SLICE) {
    return {
      list: positions.join(','),
      statuses: results.map(statusOf).join(','),
      joined: texts(results).join('\n'),
    };
  }
  const budget = new TurnBudget(budgetMs);
  const lists: string[] = [];
  const statuses: string[] = [];
  const parts: string[] = [];
  for (let at = 0; at < results.length; at += TEXTS_SLICE) {
    if (at > 0 && budget.spent()) await budget.turn();
    const slice = results.slice(at, at + TEXTS_SLICE);
    lists.push(positions.slice(at, at + TEXTS_SLICE).join(','));
    statuses.push(slice.map(statusOf).join(','));
    parts.push(texts(slice).join('\n'));
  }
  return { list: lists.join(','), statuses: statuses.join(','), joined: parts.join('\n') };
}

/**
 * Parses the result texts `byPosition` holds of `positions` (in order; `undefined` where it holds none), each
 * distinct text once, with an event-loop turn whenever `budgetMs` of parsing is spent: the duplicates a commit
 * fills from the store are a few thousand results, whose parse in one piece held the loop for tens of milliseconds.
 */
export async function parsedInSlices(
  positions: readonly number[],
  byPosition: ReadonlyMap<number, string>,
  budgetMs: number,
): Promise<(VerificationResult | undefined)[]> {
  const budget = new TurnBudget(budgetMs);
  const parsed = new Map<number, VerificationResult>();
  const found: (VerificationResult | undefined)[] = [];
  for (let i = 0; i < positions.length; i++) {
    if ((i & (TEXTS_SLICE - 1)) === TEXTS_SLICE - 1 && budget.spent()) await budget.turn();
    const position = positions[i]!;
    const text = byPosition.get(position);
    let result: VerificationResult | undefined;
    if (text !== undefined) {
      result = parsed.get(position);
      if (result === undefined) {
        result = JSON.parse(text) as VerificationResult;
        parsed.set(position, result);
      }
    }
    found.push(result);
  }
  return found;
}
