/**
 * Validation of the arguments of `BulkJobManager` calls: each malformed one is a `JobInputError` naming it.
 * @module
 */
import { SLICE_CHECK_EVERY, TurnBudget } from '../turn.js';
import { JobInputError, LimitError } from './errors.js';
import { checkGreylistDelays } from './options.js';
import { type EncodedSource, encodeSource, sourceMismatch } from './source.js';
import { LONE_SURROGATE, unstorableText } from './storable.js';
import type { CreateJobInput, JobAccess, JobSource } from './types.js';

/** Longest job name. */
export const MAX_NAME_LENGTH = 256;
/** Longest owner. */
export const MAX_OWNER_LENGTH = 1024;

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const CREATE_KEYS = new Set([
  'name',
  'emails',
  'autoStart',
  'owner',
  'greylistRetry',
  'webhook',
  'source',
  'fresh',
]);

/** A validated {@link CreateJobInput}. */
export interface CreateJob {
  readonly name: string | null;
  readonly emails: readonly unknown[];
  readonly autoStart: boolean;
  readonly owner: string | null;
  /** The job's own greylisting delays, or `null` for the manager's. */
  readonly greylistDelaysMs: readonly number[] | null;
  /** Ask every mail server again, known results notwithstanding. */
  readonly fresh: boolean;
}

function plainObject(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new JobInputError(field, 'must be an object');
  }
  return value as Record<string, unknown>;
}

/** The owner of an access (`null` when none is given). */
export function ownerOf(access: JobAccess | undefined): string | null {
  if (access === undefined) return null;
  const owner = plainObject(access, 'options').owner;
  if (owner === undefined) return null;
  if (
    typeof owner !== 'string' ||
    owner.length === 0 ||
    owner.length > MAX_OWNER_LENGTH ||
    unstorableText(owner) !== undefined
  ) {
    throw new JobInputError(
      'owner',
      `must be a string of 1-${MAX_OWNER_LENGTH} characters without NUL characters or lone surrogates`,
    );
  }
  return owner;
}

/** A job's own greylisting delays, or `null` for the manager's. */
function greylistOf(value: unknown): readonly number[] | null {
  if (value === undefined) return null;
  const fields = plainObject(value, 'greylistRetry');
  for (const key of Object.keys(fields)) {
    if (key !== 'delaysMs') throw new JobInputError(`greylistRetry.${key}`, 'is not a known field');
  }
  const checked = checkGreylistDelays(fields.delaysMs);
  if (typeof checked === 'string') throw new JobInputError('greylistRetry.delaysMs', checked);
  return checked;
}

/** Validates the input of `create`. */
export function createInput(input: CreateJobInput | undefined): CreateJob {
  if (input === undefined)
    return { name: null, emails: [], autoStart: true, owner: null, greylistDelaysMs: null, fresh: false };
  const fields = plainObject(input, 'input');
  for (const key of Object.keys(fields)) {
    if (!CREATE_KEYS.has(key)) throw new JobInputError(key, 'is not a known field');
  }
  const { name, emails, autoStart, fresh } = fields;
  if (
    name !== undefined &&
    (typeof name !== 'string' ||
      name.length > MAX_NAME_LENGTH ||
      CONTROL.test(name) ||
      LONE_SURROGATE.test(name))
  ) {
    throw new JobInputError(
      'name',
      `must be a string of at most ${MAX_NAME_LENGTH} characters without control characters or lone surrogates`,
    );
  }
  if (autoStart !== undefined && typeof autoStart !== 'boolean') {
    throw new JobInputError('autoStart', 'must be a boolean');
  }
  if (fresh !== undefined && typeof fresh !== 'boolean')
    throw new JobInputError('fresh', 'must be a boolean');
  if (emails !== undefined && !Array.isArray(emails)) {
    throw new JobInputError('emails', 'must be an array of strings');
  }
  return {
    name: (name as string | undefined) ?? null,
    emails: (emails as unknown[] | undefined) ?? [],
    autoStart: autoStart ?? true,
    owner: ownerOf(input),
    greylistDelaysMs: greylistOf(fields.greylistRetry),
    fresh: fresh ?? false,
  };
}

/** Throws unless `emails` is an array of at most `maxPerAdd` entries. */
function checkEmailArray(emails: unknown, maxPerAdd: number): asserts emails is unknown[] {
  if (!Array.isArray(emails)) throw new JobInputError('emails', 'must be an array of strings');
  if (emails.length > maxPerAdd) {
    throw new LimitError('maxAddressesPerAdd', maxPerAdd, `${emails.length} addresses in one call`);
  }
}

/** The address at `emails[i]`, checked and trimmed. */
function trimmedAt(emails: readonly unknown[], i: number, maxLength: number): string {
  const email: unknown = emails[i];
  if (typeof email !== 'string') throw new JobInputError(`emails[${i}]`, 'must be a string');
  if (email.length > maxLength) {
    throw new JobInputError(`emails[${i}]`, `must be at most ${maxLength} characters long`);
  }
  const problem = unstorableText(email);
  if (problem !== undefined) throw new JobInputError(`emails[${i}]`, problem);
  return email.trim();
}

/**
 * Validates addresses for `create`/`add` and returns them trimmed (the verifier trims too, and duplicates are
 * found on the trimmed text). An address with a NUL character or a lone surrogate is refused ({@link
 * unstorableText}): no PostgreSQL store could keep it. Nothing is accepted unless everything is.
 */
export function trimmedEmails(emails: unknown, maxPerAdd: number, maxLength: number): string[] {
  checkEmailArray(emails, maxPerAdd);
  const trimmed: string[] = [];
  for (let i = 0; i < emails.length; i++) trimmed.push(trimmedAt(emails, i, maxLength));
  return trimmed;
}

/**
 * {@link trimmedEmails} for a large list: the same checks, with an event-loop turn whenever `yieldAfterMs` of
 * work passed without one. The length is read once, at the start.
 */
export async function trimmedEmailsInSlices(
  emails: unknown,
  maxPerAdd: number,
  maxLength: number,
  yieldAfterMs: number,
): Promise<string[]> {
  checkEmailArray(emails, maxPerAdd);
  const count = emails.length;
  const trimmed: string[] = new Array(count);
  const budget = new TurnBudget(yieldAfterMs);
  for (let i = 0; i < count; i++) {
    if (i % SLICE_CHECK_EVERY === SLICE_CHECK_EVERY - 1 && budget.spent()) await budget.turn();
    trimmed[i] = trimmedAt(emails, i, maxLength);
  }
  return trimmed;
}

/**
 * Validates the `source` of a create or add of `count` addresses against the job's header (`current`, `null`
 * while it has none) and encodes its rows; `undefined` without a source. Throws `JobInputError` (nothing is added).
 */
export function sourceRows(
  source: unknown,
  count: number,
  current: JobSource | null,
): EncodedSource | undefined {
  if (source === undefined) return undefined;
  const encoded = encodeSource(source as Parameters<typeof encodeSource>[0], count);
  if ('problem' in encoded) throw new JobInputError(encoded.field, encoded.problem);
  const mismatch = current === null ? undefined : sourceMismatch(current, encoded.source.columns);
  if (mismatch !== undefined) throw new JobInputError('source.columns', mismatch);
  return encoded;
}

/** A validated `offset` / `limit` pair. */
export interface Paging {
  readonly offset: number;
  readonly limit: number;
}

function count(value: unknown, field: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new JobInputError(field, 'must be a non-negative integer');
  }
  return value;
}

/** Validates `offset` (default 0) and `limit` (default: no limit). */
export function paging(options: { offset?: unknown; limit?: unknown }): Paging {
  return {
    offset: count(options.offset, 'offset', 0),
    limit: count(options.limit, 'limit', Number.MAX_SAFE_INTEGER),
  };
}

/** Validates the `options` argument of reads: an object or nothing. */
export function readOptions<T extends object>(options: T | undefined): Partial<Record<keyof T, unknown>> {
  if (options === undefined) return {};
  return plainObject(options, 'options') as Partial<Record<keyof T, unknown>>;
}
