/**
 * What requests in progress are about to add to the jobs, for the byte budgets (see byte-quota.ts).
 * @module
 */

/**
 * Bytes that requests in progress are about to add, per tenant and in all: a request reserves what it adds once it
 * passes the byte budgets and frees it when it ends (by then the job manager counts what was added), so that
 * concurrent uploads of one key cannot all pass the same check.
 */
export class ByteReservations {
  readonly #tenants = new Map<string, number>();
  #total = 0;

  /** Bytes reserved by `tenant`'s requests in progress. */
  of(tenant: string): number {
    return this.#tenants.get(tenant) ?? 0;
  }

  /** Bytes reserved by every request in progress. */
  get total(): number {
    return this.#total;
  }

  /** Reserves `bytes` for `tenant`; returns the function that frees them (once). */
  reserve(tenant: string, bytes: number): () => void {
    this.#tenants.set(tenant, this.of(tenant) + bytes);
    this.#total += bytes;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      const left = this.of(tenant) - bytes;
      if (left <= 0) this.#tenants.delete(tenant);
      else this.#tenants.set(tenant, left);
      this.#total -= bytes;
    };
  }
}
