/**
 * Compact storage of verification results: one row per input position, kept column-wise in typed arrays,
 * with strings interned; results are rebuilt as objects only when read.
 * @module
 */
import { STATUSES, type Status, SUB_STATUSES, type SubStatus, type VerificationResult } from '../result.js';

const CHUNK_BITS = 14;
const CHUNK = 1 << CHUNK_BITS;

// flags (Uint16): written, the four booleans, then how user / normalized / did_you_mean are stored.
const WRITTEN = 1;
const DISPOSABLE = 2;
const ROLE = 4;
const FREE = 8;
const ACCEPT_ALL = 16;
const USER_SHIFT = 5; // 2 bits: 0 null, 1 the email's text before its last '@', 2 kept in `#texts`
const NORMALIZED_SHIFT = 7; // 2 bits: 0 null, 1 `${user}@${domain}`, 2 kept in `#texts`
const DID_YOU_MEAN = 512; // kept in `#texts`
const HAS_TEXTS = (2 << 5) | (2 << 7) | 512;
const NULL = 0;
const DERIVED = 1;
const KEPT = 2;

/** Number of fields a `VerificationResult` always has (without the optional `reason`, `smtp_transcript`, `checked_at`). */
const FIELDS = 14;

const STATUS_INDEX = new Map<Status, number>(STATUSES.map((status, i) => [status, i]));
const SUB_STATUS_INDEX = new Map<SubStatus, number>(SUB_STATUSES.map((sub, i) => [sub, i + 1]));

/** Strings that could not be derived from the row, kept per position. */
interface Texts {
  user?: string;
  normalized?: string;
  did_you_mean?: string;
}

/** Positions `[n * CHUNK, (n + 1) * CHUNK)`, allocated on first write. */
interface Chunk {
  readonly email: (string | undefined)[];
  readonly flags: Uint16Array;
  /** status index * 32 + sub_status index (0 for `null`). */
  readonly verdict: Uint8Array;
  readonly score: Uint8Array;
  /** Interned string ids, 0 for `null`. */
  readonly domain: Uint32Array;
  readonly mx: Uint32Array;
  readonly provider: Uint32Array;
  /** Interned `reason`, 0 when the result has none. */
  readonly reason: Uint32Array;
  /** `checked_at` in ms since the epoch, NaN when absent; allocated with the chunk's first `checked_at`. */
  checkedAt: Float64Array | undefined;
}

function newChunk(): Chunk {
  return {
    email: new Array<string | undefined>(CHUNK).fill(undefined),
    flags: new Uint16Array(CHUNK),
    verdict: new Uint8Array(CHUNK),
    score: new Uint8Array(CHUNK),
    domain: new Uint32Array(CHUNK),
    mx: new Uint32Array(CHUNK),
    provider: new Uint32Array(CHUNK),
    reason: new Uint32Array(CHUNK),
    checkedAt: undefined,
  };
}

/** The ms of a `checked_at` that `toISOString()` writes back exactly; NaN for one it would not. */
function checkedMs(text: string): number {
  const ms = Date.parse(text);
  return Number.isFinite(ms) && new Date(ms).toISOString() === text ? ms : Number.NaN;
}

function isNullableString(value: unknown): value is string | null {
  return value === null || typeof value === 'string';
}

/** True when `result` has exactly the fields the columns can hold (no transcript, no unknown field). */
function fitsColumns(result: VerificationResult): boolean {
  return (
    typeof result.email === 'string' &&
    STATUS_INDEX.has(result.status) &&
    (result.sub_status === null || SUB_STATUS_INDEX.has(result.sub_status)) &&
    Number.isInteger(result.score) &&
    result.score >= 0 &&
    result.score <= 255 &&
    typeof result.disposable === 'boolean' &&
    typeof result.role === 'boolean' &&
    typeof result.free === 'boolean' &&
    typeof result.accept_all === 'boolean' &&
    isNullableString(result.user) &&
    isNullableString(result.normalized) &&
    isNullableString(result.domain) &&
    isNullableString(result.did_you_mean) &&
    isNullableString(result.mx_record) &&
    isNullableString(result.smtp_provider) &&
    (result.reason === undefined || typeof result.reason === 'string') &&
    (result.checked_at === undefined ||
      (typeof result.checked_at === 'string' && !Number.isNaN(checkedMs(result.checked_at)))) &&
    Object.keys(result).length ===
      FIELDS + (result.reason === undefined ? 0 : 1) + (result.checked_at === undefined ? 0 : 1)
  );
}

/** A deep enough copy of a result: its own object and its own transcript array. */
function copyResult(result: VerificationResult): VerificationResult {
  const copy = { ...result };
  if (Array.isArray(result.smtp_transcript)) copy.smtp_transcript = [...result.smtp_transcript];
  return copy;
}

/**
 * The results of one job. About 24 bytes per position (32 with `checked_at`) plus the `email` string (which the job's input shares);
 * results that do not fit the columns (a transcript, an unknown field) are kept whole.
 */
export class ResultColumns {
  readonly #chunks: (Chunk | undefined)[] = [];
  readonly #strings: (string | null)[] = [null];
  readonly #ids = new Map<string, number>();
  readonly #texts = new Map<number, Texts>();
  readonly #whole = new Map<number, VerificationResult>();
  /** Per column (domain, mx, provider, reason): the last string interned and its id. */
  readonly #lastStrings: (string | null)[] = [null, null, null, null];
  readonly #lastIds = [0, 0, 0, 0];

  /** Stores `result` at `position`. Throws a `RangeError` when the position is invalid or already written. */
  set(position: number, result: VerificationResult): void {
    if (!Number.isSafeInteger(position) || position < 0) {
      throw new RangeError(`position ${position} is not a non-negative integer`);
    }
    const chunkIndex = Math.floor(position / CHUNK);
    let chunk = this.#chunks[chunkIndex];
    if (chunk === undefined) {
      while (this.#chunks.length < chunkIndex) this.#chunks.push(undefined);
      chunk = newChunk();
      this.#chunks[chunkIndex] = chunk;
    }
    const i = position % CHUNK;
    if ((chunk.flags[i]! & WRITTEN) !== 0) throw new RangeError(`position ${position} is written already`);
    if (!fitsColumns(result)) {
      this.#whole.set(position, copyResult(result));
      chunk.flags[i] = WRITTEN;
      return;
    }
    const email = result.email;
    let flags = WRITTEN;
    if (result.disposable) flags |= DISPOSABLE;
    if (result.role) flags |= ROLE;
    if (result.free) flags |= FREE;
    if (result.accept_all) flags |= ACCEPT_ALL;
    let texts: Texts | undefined;
    const user = result.user;
    if (user !== null) {
      if (
        email.length > user.length &&
        email.charCodeAt(user.length) === 64 &&
        email.startsWith(user) &&
        email.indexOf('@', user.length + 1) < 0
      ) {
        flags |= DERIVED << USER_SHIFT;
      } else {
        flags |= KEPT << USER_SHIFT;
        texts = { user };
      }
    }
    const normalized = result.normalized;
    if (normalized !== null) {
      const domain = result.domain;
      if (
        user !== null &&
        domain !== null &&
        normalized.length === user.length + 1 + domain.length &&
        normalized.startsWith(user) &&
        normalized.charCodeAt(user.length) === 64 &&
        normalized.endsWith(domain)
      ) {
        flags |= DERIVED << NORMALIZED_SHIFT;
      } else {
        flags |= KEPT << NORMALIZED_SHIFT;
        texts = { ...texts, normalized };
      }
    }
    if (result.did_you_mean !== null) {
      flags |= DID_YOU_MEAN;
      texts = { ...texts, did_you_mean: result.did_you_mean };
    }
    if (texts !== undefined) this.#texts.set(position, texts);
    chunk.email[i] = email;
    chunk.flags[i] = flags;
    chunk.verdict[i] =
      STATUS_INDEX.get(result.status)! * 32 +
      (result.sub_status === null ? 0 : SUB_STATUS_INDEX.get(result.sub_status)!);
    chunk.score[i] = result.score;
    chunk.domain[i] = this.#intern(result.domain, 0);
    chunk.mx[i] = this.#intern(result.mx_record, 1);
    chunk.provider[i] = this.#intern(result.smtp_provider, 2);
    chunk.reason[i] = this.#intern(result.reason ?? null, 3);
    if (result.checked_at !== undefined) {
      chunk.checkedAt ??= new Float64Array(CHUNK).fill(Number.NaN);
      chunk.checkedAt[i] = checkedMs(result.checked_at);
    }
  }

  /** The result at `position` as a fresh object, or `undefined` when none was written. */
  get(position: number): VerificationResult | undefined {
    const chunk = this.#chunks[Math.floor(position / CHUNK)];
    if (chunk === undefined) return undefined;
    const i = position % CHUNK;
    const flags = chunk.flags[i]!;
    if ((flags & WRITTEN) === 0) return undefined;
    const whole = this.#whole.get(position);
    if (whole !== undefined) return copyResult(whole);
    const email = chunk.email[i]!;
    const texts = (flags & HAS_TEXTS) !== 0 ? this.#texts.get(position) : undefined;
    const userMode = (flags >>> USER_SHIFT) & 3;
    const user =
      userMode === NULL ? null : userMode === DERIVED ? email.slice(0, email.lastIndexOf('@')) : texts!.user!;
    const domain = this.#strings[chunk.domain[i]!] ?? null;
    const normalizedMode = (flags >>> NORMALIZED_SHIFT) & 3;
    const normalized =
      normalizedMode === NULL ? null : normalizedMode === DERIVED ? `${user}@${domain}` : texts!.normalized!;
    const verdict = chunk.verdict[i]!;
    const sub = verdict & 31;
    const reason = this.#strings[chunk.reason[i]!] ?? null;
    const result: VerificationResult = {
      email,
      normalized,
      user,
      domain,
      status: STATUSES[verdict >>> 5]!,
      sub_status: sub === 0 ? null : SUB_STATUSES[sub - 1]!,
      score: chunk.score[i]!,
      disposable: (flags & DISPOSABLE) !== 0,
      role: (flags & ROLE) !== 0,
      free: (flags & FREE) !== 0,
      accept_all: (flags & ACCEPT_ALL) !== 0,
      did_you_mean: (flags & DID_YOU_MEAN) !== 0 ? texts!.did_you_mean! : null,
      mx_record: this.#strings[chunk.mx[i]!] ?? null,
      smtp_provider: this.#strings[chunk.provider[i]!] ?? null,
    };
    if (reason !== null) result.reason = reason;
    const checkedAt = chunk.checkedAt?.[i];
    if (checkedAt !== undefined && !Number.isNaN(checkedAt))
      result.checked_at = new Date(checkedAt).toISOString();
    return result;
  }

  #intern(value: string | null, column: 0 | 1 | 2 | 3): number {
    if (value === null) return 0;
    // Work is grouped by domain, so a row mostly repeats the strings of the row before.
    if (value === this.#lastStrings[column]) return this.#lastIds[column]!;
    let id = this.#ids.get(value);
    if (id === undefined) {
      id = this.#strings.length;
      this.#strings.push(value);
      this.#ids.set(value, id);
    }
    this.#lastStrings[column] = value;
    this.#lastIds[column] = id;
    return id;
  }
}
