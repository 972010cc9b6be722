/**
 * What a job holds, in bytes: the cost of its addresses, their kept CSV rows and its name, and the ledger a manager
 * keeps of it per owner and in all. A server's byte budgets (`maxBytesPerKey`, `maxBytesHeld` of the HTTP adapter)
 * are checked against it, so that wide rows cannot run the process out of memory under an address quota.
 * @module
 */

/**
 * Bytes one held address costs besides its text, counted generously: its stored result, its place in the job's
 * work and scheduling.
 */
export const BYTES_PER_ADDRESS = 256;

/** Bytes a string of `length` UTF-16 code units may take (two a code unit: the most a JavaScript engine uses). */
export function textBytes(length: number): number {
  return 2 * length;
}

/**
 * The bytes that one address with a kept row of `rowLength` code units (0 without a row) costs its job.
 * @example
 * addressBytes('a@example.com', 0); // 282: 256 + 2 × 13
 */
export function addressBytes(email: string, rowLength: number): number {
  return BYTES_PER_ADDRESS + textBytes(email.length + rowLength);
}

/**
 * The bytes that `emails`, with their encoded rows if any (one per address), cost a job.
 * @example
 * inputBytes(['a@example.com'], ['a@example.com,Ann']); // 316
 */
export function inputBytes(emails: readonly string[], rows?: readonly string[]): number {
  let bytes = 0;
  for (let i = 0; i < emails.length; i++) bytes += addressBytes(emails[i]!, rows?.[i]?.length ?? 0);
  return bytes;
}

/** What a manager's jobs hold: those of one owner (`owner`) and all of them (`total`), in bytes. */
export interface HeldBytes {
  /** Bytes held by the jobs of the owner asked about (every job without an owner). */
  readonly owner: number;
  /** Bytes held by every job of the manager. */
  readonly total: number;
}

/**
 * The bytes each job holds, by job id, with their sum per owner and in all. Jobs grow by {@link HeldBytesLedger.hold}
 * and leave by {@link HeldBytesLedger.release} (idempotent).
 */
export class HeldBytesLedger {
  readonly #jobs = new Map<string, { readonly owner: string | null; bytes: number }>();
  readonly #owners = new Map<string | null, number>();
  #total = 0;

  /** Counts `bytes` more held by job `id` of `owner`. */
  hold(id: string, owner: string | null, bytes: number): void {
    const job = this.#jobs.get(id);
    if (job === undefined) this.#jobs.set(id, { owner, bytes });
    else job.bytes += bytes;
    const payer = job?.owner ?? owner;
    this.#owners.set(payer, (this.#owners.get(payer) ?? 0) + bytes);
    this.#total += bytes;
  }

  /** Forgets job `id` and what it held; a job it does not know is ignored. */
  release(id: string): void {
    const job = this.#jobs.get(id);
    if (job === undefined) return;
    this.#jobs.delete(id);
    const left = (this.#owners.get(job.owner) ?? 0) - job.bytes;
    if (left <= 0) this.#owners.delete(job.owner);
    else this.#owners.set(job.owner, left);
    this.#total -= job.bytes;
  }

  /** The bytes held by `owner`'s jobs (`null`: the jobs without an owner) and by every job. */
  of(owner: string | null): HeldBytes {
    return { owner: this.#owners.get(owner) ?? 0, total: this.#total };
  }
}
