/**
 * Bulk: drop or pick a CSV or TXT file, pick the address column of a CSV (guessed from its header), upload it as
 * one list (`POST v1/bulk` with a `text/csv` or `text/plain` body, with upload progress), then follow the job.
 * @module
 */
import { useSignal } from '@preact/signals';
import { guessEmailColumn, headerCells } from './csv-header.js';
import { JobProgress } from './job-progress.js';
import type { Job } from './types.js';

/** Uploads `file` as a list; reports the upload's progress (0-1). */
function upload(
  key: string,
  file: File,
  column: string | null,
  onProgress: (share: number) => void,
): Promise<Job> {
  const csv = column !== null;
  const query = new URLSearchParams({ name: file.name });
  if (csv) query.set('column', column);
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `v1/bulk?${query.toString()}`);
    request.setRequestHeader('authorization', `Bearer ${key}`);
    request.setRequestHeader('content-type', csv ? 'text/csv; charset=utf-8' : 'text/plain; charset=utf-8');
    request.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded / event.total);
    };
    request.onload = () => {
      let body: { error?: { message?: string } } & Partial<Job> = {};
      try {
        body = JSON.parse(request.responseText) as typeof body;
      } catch {
        // not JSON: the status says enough
      }
      if (request.status === 201) resolve(body as Job);
      else reject(new Error(body.error?.message ?? `${request.status} ${request.statusText}`));
    };
    request.onerror = () => reject(new Error('the server cannot be reached'));
    request.send(file);
  });
}

/** The bulk panel. */
export function BulkPanel({
  apiKey,
  onCreated,
}: {
  readonly apiKey: string;
  readonly onCreated: () => void;
}) {
  const file = useSignal<File | null>(null);
  const headers = useSignal<string[]>([]);
  const column = useSignal(-1);
  const sent = useSignal<number | null>(null);
  const job = useSignal<Job | null>(null);
  const error = useSignal<string | null>(null);

  const choose = async (chosen: File | undefined) => {
    error.value = null;
    job.value = null;
    file.value = chosen ?? null;
    headers.value = [];
    if (chosen === undefined || /\.txt$/i.test(chosen.name)) return;
    const cells = headerCells(await chosen.slice(0, 65_536).text());
    if (cells.length > 1 || guessEmailColumn(cells) === 0) {
      headers.value = cells;
      column.value = Math.max(0, guessEmailColumn(cells));
    }
  };
  const start = async () => {
    if (file.value === null) return;
    error.value = null;
    sent.value = 0;
    try {
      const name = headers.value.length > 0 ? (headers.value[column.value] ?? null) : null;
      job.value = await upload(apiKey, file.value, name, (share) => {
        sent.value = share;
      });
      onCreated();
    } catch (failure) {
      error.value = (failure as Error).message;
    } finally {
      sent.value = null;
    }
  };

  return (
    <section id="bulk" aria-labelledby="bulk-title">
      <h2 id="bulk-title">Verify a list</h2>
      <label
        class="drop"
        for="bulk-file"
        onDragOver={(event) => event.preventDefault()}
        onDrop={(event) => {
          event.preventDefault();
          void choose(event.dataTransfer?.files[0]);
        }}
      >
        Drop a CSV or TXT file here, or choose one
        <input
          id="bulk-file"
          type="file"
          accept=".csv,.txt,text/csv,text/plain"
          onChange={(event) => void choose((event.target as HTMLInputElement).files?.[0])}
        />
      </label>
      {file.value === null ? null : (
        <p data-testid="bulk-file-name">
          {file.value.name} ({file.value.size.toLocaleString()} bytes)
        </p>
      )}
      {headers.value.length === 0 ? null : (
        <p>
          <label for="bulk-column">Email column</label>{' '}
          <select
            id="bulk-column"
            value={String(column.value)}
            onChange={(event) => {
              column.value = Number((event.target as HTMLSelectElement).value);
            }}
          >
            {headers.value.map((header, index) => (
              <option key={`${index}-${header}`} value={String(index)}>
                {header === '' ? `column ${index + 1}` : header}
              </option>
            ))}
          </select>
        </p>
      )}
      <button
        type="button"
        disabled={file.value === null || sent.value !== null}
        onClick={() => void start()}
      >
        Start verification
      </button>
      {sent.value === null ? null : (
        <p>
          Uploading <progress max={1} value={sent.value} aria-label="Upload" />
        </p>
      )}
      {error.value === null ? null : (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
      {job.value === null ? null : <JobProgress apiKey={apiKey} id={job.value.id} />}
    </section>
  );
}
