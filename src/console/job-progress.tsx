/**
 * A job while it runs and after: progress, a count per status, elapsed time and an estimate of what is left,
 * downloads. Follows the job's event stream (live), and polls once a second when the stream cannot be read.
 * @module
 */
import { useSignal, useSignalEffect } from '@preact/signals';
import { json } from './api.js';
import { type DownloadFormat, downloadResults } from './download.js';
import { followJob } from './job-stream.js';
import { ResultsTable } from './results-table.js';
import type { Job } from './types.js';
import { STATUS_LABEL, STATUSES } from './words.js';

function duration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** The live view of job `id`. */
export function JobProgress({ apiKey, id }: { readonly apiKey: string; readonly id: string }) {
  const job = useSignal<Job | null>(null);
  const error = useSignal<string | null>(null);
  useSignalEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const controller = new AbortController();
    const poll = async () => {
      try {
        const current = await json<Job>(apiKey, `v1/bulk/${encodeURIComponent(id)}`);
        if (stopped) return;
        job.value = current;
        if (current.status === 'complete' || current.status === 'failed') return;
      } catch (failure) {
        if (stopped) return;
        error.value = (failure as Error).message;
      }
      timer = setTimeout(() => void poll(), 1000);
    };
    void followJob(
      apiKey,
      id,
      (current) => {
        job.value = current;
      },
      controller.signal,
    ).then(
      () => {
        if (!stopped && job.value?.status !== 'complete' && job.value?.status !== 'failed') void poll();
      },
      () => {
        if (!stopped) void poll();
      },
    );
    return () => {
      stopped = true;
      controller.abort();
      clearTimeout(timer);
    };
  });
  const download = (format: DownloadFormat) => {
    if (job.value === null) return;
    error.value = null;
    downloadResults(apiKey, job.value, format).catch((failure: Error) => {
      error.value = failure.message;
    });
  };
  const current = job.value;
  if (current === null) return <p>{error.value ?? 'Loading…'}</p>;
  const started = current.started_at === null ? null : Date.parse(current.started_at);
  const ended = current.completed_at === null ? Date.now() : Date.parse(current.completed_at);
  const elapsed = started === null ? 0 : ended - started;
  const left =
    current.completed > 0 && current.status === 'processing'
      ? (elapsed / current.completed) * (current.total - current.completed)
      : null;
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
        Elapsed {duration(elapsed)}
        {left === null ? null : `, about ${duration(left)} left`}
      </p>
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
      {current.status === 'complete' ? (
        <ResultsTable apiKey={apiKey} id={current.id} total={current.total} />
      ) : null}
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
    </section>
  );
}
