/**
 * A job while it runs and after: progress, a count per status, the elapsed time (ticking while it runs), an
 * estimate of what is left, the addresses that wait for a greylisting retry and when, with "Finish now" (after a
 * confirmation) to stop waiting for them, downloads (the results so far while it runs). Live from the job's event stream, shared with the Jobs list (job-feed.ts).
 * @module
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { type DownloadFormat, downloadResults } from './download.js';
import { finishJob, isFinished, liveErrors, liveJobs, watchJob } from './job-feed.js';
import { duration, elapsedMs, retryLine, timeLeft } from './job-timing.js';
import { ResultsTable } from './results-table.js';
import { STATUS_LABEL, STATUSES } from './words.js';

/** The live view of job `id`. */
export function JobProgress({ apiKey, id }: { readonly apiKey: string; readonly id: string }) {
  const error = useSignal<string | null>(null);
  const finishing = useSignal(false);
  const now = useSignal(Date.now());
  useEffect(() => watchJob(apiKey, id), [apiKey, id]);
  const current = liveJobs.value.get(id) ?? null;
  const running = current !== null && !isFinished(current);
  // The clock ticks once a second while the job runs, so that the elapsed time and the estimate move even when
  // no event comes (a job waiting for greylisting retries sends none for minutes).
  useEffect(() => {
    if (!running) return;
    now.value = Date.now();
    const timer = setInterval(() => {
      now.value = Date.now();
    }, 1000);
    return () => clearInterval(timer);
  }, [running]);
  const failure = error.value ?? liveErrors.value.get(id) ?? null;
  if (current === null) return <p>{failure ?? 'Loading…'}</p>;
  const download = (format: DownloadFormat, partial = false) => {
    error.value = null;
    downloadResults(apiKey, current, format, partial).catch((reason: Error) => {
      error.value = reason.message;
    });
  };
  const finish = () => {
    const waiting = current.retries?.waiting ?? 0;
    const which = waiting === 1 ? 'The address that waits' : `The ${waiting} addresses that wait`;
    if (
      !window.confirm(
        `Finish the job now? ${which} for a greylisting retry keep${waiting === 1 ? 's' : ''} the verdict unknown (greylisted); no retry is made.`,
      )
    )
      return;
    error.value = null;
    finishing.value = true;
    finishJob(apiKey, current.id)
      .catch((reason: Error) => {
        error.value = reason.message;
      })
      .finally(() => {
        finishing.value = false;
      });
  };
  const left = timeLeft(current, now.value);
  const retries = retryLine(current);
  const percent = Math.floor(current.progress * 100);
  return (
    <section class="job" aria-label={`Job ${current.name === '' ? current.id : current.name}`}>
      <h3>{current.name === '' ? current.id : current.name}</h3>
      <p>
        <span data-testid="job-status">{current.status}</span>: {current.completed.toLocaleString()} of{' '}
        {current.total.toLocaleString()} (<span data-testid="job-percent">{percent}</span> %)
      </p>
      <progress max={Math.max(1, current.total)} value={current.completed} aria-label="Progress" />
      <p>
        Elapsed <span data-testid="job-elapsed">{duration(elapsedMs(current, now.value))}</span>
        {left === null ? null : (
          <>
            , <span data-testid="job-left">{left}</span>
          </>
        )}
      </p>
      {retries === null ? null : (
        <p class="retries">
          <span data-testid="job-retries">{retries}</span>{' '}
          {current.status === 'processing' ? (
            <button type="button" onClick={finish} disabled={finishing.value}>
              Finish now
            </button>
          ) : null}
        </p>
      )}
      <ul class="counts" aria-label="Results per status">
        {STATUSES.map((status) => (
          <li key={status}>
            <span class={`badge badge-${status}`}>
              <span aria-hidden="true">{STATUS_LABEL[status].icon}</span> {STATUS_LABEL[status].word}
            </span>
            <progress
              max={Math.max(1, current.total)}
              value={current.counts[status]}
              aria-label={STATUS_LABEL[status].word}
            />
            <span data-testid={`count-${status}`}>{current.counts[status]}</span>
          </li>
        ))}
      </ul>
      {current.status === 'complete' ? (
        <p class="downloads">
          <button type="button" onClick={() => download('csv')}>
            Download CSV
          </button>{' '}
          <button type="button" onClick={() => download('ndjson')}>
            Download NDJSON
          </button>
        </p>
      ) : null}
      {current.status === 'processing' && current.completed > 0 ? (
        <p class="downloads">
          <button type="button" onClick={() => download('csv', true)}>
            Download results so far (CSV)
          </button>{' '}
          <button type="button" onClick={() => download('ndjson', true)}>
            Download results so far (NDJSON)
          </button>
        </p>
      ) : null}
      {current.status === 'complete' ? (
        <ResultsTable apiKey={apiKey} id={current.id} total={current.total} />
      ) : null}
      {failure === null ? null : (
        <p role="alert" class="error">
          {failure}
        </p>
      )}
    </section>
  );
}
