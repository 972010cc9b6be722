/**
 * Previous / next buttons of a paged table, with the rows shown ("Rows 51–100 of 2,000").
 * @module
 */
import type { PageWindow } from './paging.js';

/** Properties of {@link Pager}. */
export interface PagerProps {
  /** What is paged, for the navigation's name ("Results" gives "Results pages"). */
  readonly label: string;
  readonly view: PageWindow;
  readonly total: number;
  readonly onPage: (index: number) => void;
}

/** The pager of one table; nothing when everything fits on one page. */
export function Pager({ label, view, total, onPage }: PagerProps) {
  if (view.pages <= 1) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={view.index === 0} onClick={() => onPage(view.index - 1)}>
        Previous
      </button>
      <span aria-live="polite" data-testid="page-rows">
        Rows {view.first.toLocaleString('en')}–{view.last.toLocaleString('en')} of{' '}
        {total.toLocaleString('en')}
      </span>
      <button type="button" disabled={view.index >= view.pages - 1} onClick={() => onPage(view.index + 1)}>
        Next
      </button>
    </nav>
  );
}
