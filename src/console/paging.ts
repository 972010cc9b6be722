/**
 * Paging of the console's long tables (jobs, results): the page holds one page of rows, read from the API with
 * `offset` and `limit`, so a job of 10,000 (or a million) rows costs the page no more than one of 50.
 * @module
 */

/** Rows per page of the results table. */
export const RESULTS_PAGE_SIZE = 50;

/** Rows per page of the jobs table. */
export const JOBS_PAGE_SIZE = 20;

/** One page of a table of `total` rows. */
export interface PageWindow {
  /** The page shown, 0-based, clamped to the pages there are. */
  readonly index: number;
  /** How many pages there are (at least 1). */
  readonly pages: number;
  /** `offset` and `limit` to ask the API for (the API lists jobs oldest first). */
  readonly offset: number;
  readonly limit: number;
  /** 1-based numbers of the first and last row shown, for "Rows 51–100 of 2,000" (0 and 0 when empty). */
  readonly first: number;
  readonly last: number;
}

/**
 * Page `index` of `total` rows, `size` a page. `newestFirst` pages a list the API gives oldest first from its
 * end: page 0 is the newest `size` rows (read in API order, shown reversed).
 * @example
 * pageWindow(2000, 1, 50); // { index: 1, pages: 40, offset: 50, limit: 50, first: 51, last: 100 }
 * pageWindow(45, 0, 20, true); // { index: 0, pages: 3, offset: 25, limit: 20, first: 1, last: 20 }
 */
export function pageWindow(total: number, index: number, size: number, newestFirst = false): PageWindow {
  const pages = Math.max(1, Math.ceil(total / size));
  const page = Math.min(Math.max(0, Math.floor(index)), pages - 1);
  const first = page * size;
  const count = Math.max(0, Math.min(size, total - first));
  const offset = newestFirst ? Math.max(0, total - first - count) : first;
  return {
    index: page,
    pages,
    offset,
    limit: Math.max(1, count),
    first: count === 0 ? 0 : first + 1,
    last: first + count,
  };
}
