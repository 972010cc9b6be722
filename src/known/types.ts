/**
 * The known-results seam: the verdicts of addresses a mail server was asked about, kept for a time that depends on
 * the status, so that the next verification of the same address (in the same namespace) does not ask again.
 * @module
 */
import type { Status, SubStatus } from '../result.js';

/** What the SMTP check found for one address: the part of a result that a known result stands in for. */
export interface KnownVerdict {
  /** Headline verdict the mail server's answer gave. */
  readonly status: Status;
  /** Specific reason for it, or `null`. */
  readonly sub_status: SubStatus | null;
  /** The domain's mail server accepts any local part. */
  readonly accept_all: boolean;
  /** The mail exchanger asked, or `null`. */
  readonly mx_record: string | null;
  /** The mail provider recognised from the MX host names, or `null`. */
  readonly smtp_provider: string | null;
  /** The result's `reason`, or `null`. */
  readonly reason: string | null;
}

/** A kept verdict, with the time the mail server was asked. */
export interface KnownResult extends KnownVerdict {
  /** When the mail server was asked, in milliseconds since the Unix epoch. */
  readonly checkedAt: number;
}

/** One verdict to keep: under `key`, from `checkedAt` for `ttlMs`. */
export interface KnownEntry {
  /** The namespace and the address, as {@link knownKey} makes them. */
  readonly key: string;
  /** What to keep. */
  readonly verdict: KnownVerdict;
  /** When the mail server was asked, in milliseconds since the Unix epoch (the verifier's clock). */
  readonly checkedAt: number;
  /** How long it answers after `checkedAt`, in milliseconds (at least 1). */
  readonly ttlMs: number;
}

/**
 * Where known results are kept. Both members are batched (a bulk chunk asks for many keys in one call); an
 * implementation answers an entry while its own clock is before `checkedAt + ttlMs`, and bounds what it holds. A rejection is taken as "nothing known" by the verifier (it then asks the mail
 * server), never as a failed verification.
 */
export interface KnownResults {
  /** The unexpired results kept under `keys` (a key with none is absent from the map). */
  get(keys: readonly string[]): Promise<ReadonlyMap<string, KnownResult>>;
  /** Keeps `entries`, replacing what was kept under their keys. */
  set(entries: readonly KnownEntry[]): Promise<void>;
  /**
   * The implementation's clock, in milliseconds since the Unix epoch: the verifier stamps `checkedAt` with it, so
   * that expiry and `checked_at` go by one clock (a fake one in tests). @default the verifier's clock
   */
  now?(): number;
}

/** Longest namespace, in UTF-16 code units (the longest job owner, so a tenant always fits). */
export const MAX_NAMESPACE_LENGTH = 1024;

/**
 * The key of `address` (a normalized address, as the syntax check gives it) in `namespace`: the namespace, a
 * line feed, then the address (which the syntax check never lets contain one, so the key is unambiguous).
 * @example
 * knownKey('acme', 'jane@example.com'); // 'acme\njane@example.com'
 */
export function knownKey(namespace: string, address: string): string {
  return `${namespace}\n${address}`;
}
