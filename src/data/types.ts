/**
 * Metadata of the built-in data lists.
 * @module
 */

/** One source a generated list was built from. */
export interface ListSource {
  /** npm package name, or the path of a curated list in the repository (`scripts/sources/...`). */
  readonly name: string;
  /** Package version, or `sha256:<12 hex digits>` of a curated list's content. */
  readonly version: string;
  /** Upstream repository. */
  readonly url?: string;
  /** Licence of the source. */
  readonly license: string;
  /** Release date of the package version, or review date of a curated list (`YYYY-MM-DD`). */
  readonly date: string;
}

/** What a generated list holds and where it comes from. */
export interface ListMeta {
  /** Name of the list: `disposable`, `free`, `role` or `typo`. */
  readonly list: string;
  /** Number of entries (for `typo`: the number of suggestion targets). */
  readonly count: number;
  /** Where the entries come from, in order of precedence. */
  readonly sources: readonly ListSource[];
  /** How the sources were combined. */
  readonly note: string;
}
