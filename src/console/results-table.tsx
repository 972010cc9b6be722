/**
 * The results of a finished job as a paged table: one page of {@link RESULTS_PAGE_SIZE} rows is read at a time
 * (`GET v1/bulk/{id}/results?offset=&limit=`), so a job of 10,000 rows or more stays quick to show.
 * @module
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { json } from './api.js';
import { Pager } from './pager.js';
import { pageWindow, RESULTS_PAGE_SIZE } from './paging.js';
import type { Result } from './types.js';
import { STATUS_LABEL, subStatusWords } from './words.js';

/** The results table of job `id`, which holds `total` results. */
export function ResultsTable({
  apiKey,
  id,
  total,
}: {
  readonly apiKey: string;
  readonly id: string;
  readonly total: number;
}) {
  const index = useSignal(0);
  const rows = useSignal<Result[]>([]);
  /** The page the rows shown belong to (the page asked for may still be loading). */
  const shown = useSignal(0);
  const error = useSignal<string | null>(null);
  const wanted = pageWindow(total, index.value, RESULTS_PAGE_SIZE);
  const view = pageWindow(total, shown.value, RESULTS_PAGE_SIZE);
  useEffect(() => {
    let current = true;
    json<{ results: Result[] }>(
      apiKey,
      `v1/bulk/${encodeURIComponent(id)}/results?offset=${wanted.offset}&limit=${wanted.limit}`,
    )
      .then((page) => {
        if (!current) return;
        rows.value = page.results;
        shown.value = wanted.index;
      })
      .catch((failure: Error) => {
        if (current) error.value = failure.message;
      });
    return () => {
      current = false;
    };
  }, [apiKey, id, wanted.offset, wanted.limit, wanted.index]);
  if (total === 0) return null;
  return (
    <div class="results">
      <table aria-label="Results">
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">Email</th>
            <th scope="col">Status</th>
            <th scope="col">Why</th>
            <th scope="col">Score</th>
          </tr>
        </thead>
        <tbody>
          {rows.value.map((result, i) => (
            <tr key={view.offset + i} data-testid="result-row">
              <td data-label="#">{(view.offset + i + 1).toLocaleString('en')}</td>
              <td data-label="Email" class="address">
                {result.email}
              </td>
              <td data-label="Status">
                <span class={`badge badge-${result.status}`}>
                  <span aria-hidden="true">{STATUS_LABEL[result.status].icon}</span>{' '}
                  {STATUS_LABEL[result.status].word}
                </span>
              </td>
              <td data-label="Why">{subStatusWords(result.sub_status, result.status)}</td>
              <td data-label="Score">{result.score}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager label="Results" view={view} total={total} onPage={(next) => (index.value = next)} />
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
    </div>
  );
}
