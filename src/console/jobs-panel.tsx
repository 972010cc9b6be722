/**
 * The key's jobs: name, state, progress, created time; open, download, delete (after a confirmation).
 * @module
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { call, json } from './api.js';
import { downloadResults, forgetUpload } from './download.js';
import { JobProgress } from './job-progress.js';
import type { Job } from './types.js';

/** The jobs table; `version` changes when a job was created elsewhere, to reload. */
export function JobsPanel({ apiKey, version }: { readonly apiKey: string; readonly version: number }) {
  const jobs = useSignal<Job[]>([]);
  const open = useSignal<string | null>(null);
  const error = useSignal<string | null>(null);
  const reload = useSignal(0);
  // Reloads when a job was created in the bulk panel (`version`) or after Refresh and Delete (`reload`).
  const reloads = reload.value;
  useEffect(() => {
    void reloads;
    json<{ jobs: Job[] }>(apiKey, 'v1/bulk?limit=1000')
      .then((page) => {
        jobs.value = [...page.jobs].reverse();
      })
      .catch((failure: Error) => {
        error.value = failure.message;
      });
  }, [apiKey, version, reloads]);
  const remove = async (job: Job) => {
    if (!window.confirm(`Delete the job ${job.name === '' ? job.id : job.name} and its results?`)) return;
    try {
      await call(apiKey, `v1/bulk/${encodeURIComponent(job.id)}`, { method: 'DELETE' });
      forgetUpload(job.id);
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
        <table>
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
            {jobs.value.map((job) => (
              <tr key={job.id} data-testid="job-row">
                <td>{job.name === '' ? job.id : job.name}</td>
                <td>{job.status}</td>
                <td>
                  {job.completed.toLocaleString()} / {job.total.toLocaleString()}
                </td>
                <td>{new Date(job.created_at).toLocaleString()}</td>
                <td class="actions">
                  <button type="button" onClick={() => (open.value = job.id)}>
                    Open
                  </button>
                  <button
                    type="button"
                    disabled={job.status !== 'complete'}
                    onClick={() => {
                      error.value = null;
                      downloadResults(apiKey, job.id, 'csv').catch((failure: Error) => {
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
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
      {open.value === null ? null : <JobProgress key={open.value} apiKey={apiKey} id={open.value} />}
    </section>
  );
}
