/**
 * The key's jobs: name, state, progress, created time; open, download, delete (after a confirmation). A job on
 * the page that is still running is followed through its event stream (shared with its progress view, see
 * job-feed.ts), so its row moves on to `complete` without Refresh.
 * @module
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { call, json } from './api.js';
import { downloadResults } from './download.js';
import { isFinished, liveJobs, watchJob } from './job-feed.js';
import { JobProgress } from './job-progress.js';
import { Pager } from './pager.js';
import { JOBS_PAGE_SIZE, pageWindow } from './paging.js';
import type { Job } from './types.js';

/**
 * Running jobs of a page followed at once, at most: each holds a connection open, and a browser opens only six
 * per server over HTTP/1.1, which the page's other requests need too. The newest ones are followed; Refresh
 * reads the others.
 */
export const MAX_FOLLOWED_JOBS = 3;

/**
 * The jobs table, newest first, one page of {@link JOBS_PAGE_SIZE} at a time; `version` changes when a job was
 * created elsewhere, to reload.
 */
export function JobsPanel({ apiKey, version }: { readonly apiKey: string; readonly version: number }) {
  const jobs = useSignal<Job[]>([]);
  const total = useSignal(0);
  const index = useSignal(0);
  /** The page the rows shown belong to (the page asked for may still be loading). */
  const shown = useSignal(0);
  const open = useSignal<string | null>(null);
  const error = useSignal<string | null>(null);
  const reload = useSignal(0);
  // Reloads when a job was created in the bulk panel (`version`) or after Refresh and Delete (`reload`).
  const reloads = reload.value;
  const wanted = index.value;
  useEffect(() => {
    void reloads;
    let current = true;
    // The API lists jobs oldest first: the count tells where the newest page starts.
    const load = async () => {
      const { total: count } = await json<{ total: number }>(apiKey, 'v1/bulk?limit=1');
      const view = pageWindow(count, wanted, JOBS_PAGE_SIZE, true);
      const page = await json<{ jobs: Job[]; total: number }>(
        apiKey,
        `v1/bulk?offset=${view.offset}&limit=${view.limit}`,
      );
      if (!current) return;
      total.value = page.total;
      shown.value = view.index;
      jobs.value = count === 0 ? [] : [...page.jobs].reverse();
    };
    load().catch((failure: Error) => {
      if (current) error.value = failure.message;
    });
    return () => {
      current = false;
    };
  }, [apiKey, version, reloads, wanted]);
  const running = jobs.value
    .filter((job) => !isFinished(job))
    .slice(0, MAX_FOLLOWED_JOBS)
    .map((job) => job.id)
    .join(' ');
  useEffect(() => {
    const stops = running === '' ? [] : running.split(' ').map((id) => watchJob(apiKey, id));
    return () => {
      for (const stop of stops) stop();
    };
  }, [apiKey, running]);
  const rows = jobs.value.map((job) => liveJobs.value.get(job.id) ?? job);
  const view = pageWindow(total.value, shown.value, JOBS_PAGE_SIZE, true);
  const remove = async (job: Job) => {
    if (!window.confirm(`Delete the job ${job.name === '' ? job.id : job.name} and its results?`)) return;
    try {
      await call(apiKey, `v1/bulk/${encodeURIComponent(job.id)}`, { method: 'DELETE' });
      if (open.value === job.id) open.value = null;
      reload.value++;
    } catch (failure) {
      error.value = (failure as Error).message;
    }
  };
  return (
    <section id="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Jobs</h2>
      <button type="button" onClick={() => reload.value++}>
        Refresh
      </button>
      {jobs.value.length === 0 ? (
        <p>No jobs yet.</p>
      ) : (
        <table aria-label="Jobs">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((job) => (
              <tr key={job.id} data-testid="job-row">
                <td data-label="Name">{job.name === '' ? job.id : job.name}</td>
                <td data-label="State" data-testid="job-row-state">
                  {job.status}
                </td>
                <td data-label="Progress">
                  {job.completed.toLocaleString()} / {job.total.toLocaleString()}
                </td>
                <td data-label="Created">{new Date(job.created_at).toLocaleString()}</td>
                <td class="actions">
                  <button type="button" onClick={() => (open.value = job.id)}>
                    Open
                  </button>
                  <button
                    type="button"
                    disabled={job.status !== 'complete'}
                    onClick={() => {
                      error.value = null;
                      downloadResults(apiKey, job, 'csv').catch((failure: Error) => {
                        error.value = failure.message;
                      });
                    }}
                  >
                    CSV
                  </button>
                  <button type="button" onClick={() => void remove(job)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Jobs" view={view} total={total.value} onPage={(next) => (index.value = next)} />
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
      {open.value === null ? null : <JobProgress key={open.value} apiKey={apiKey} id={open.value} />}
    </section>
  );
}
