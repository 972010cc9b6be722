/**
 * Bulk: drop or pick a CSV or TXT file, pick the address column of a CSV (guessed from its header), upload it in
 * batches (read one slice at a time, with upload progress; see upload.ts), then follow the job.
 * @module
 */
import { useSignal } from '@preact/signals';
import { JobProgress } from './job-progress.js';
import { firstLine, type ListShape, listShape } from './list-file.js';
import type { Job } from './types.js';
import { uploadList } from './upload.js';

/** The bulk panel. */
export function BulkPanel({
  apiKey,
  onCreated,
}: {
  readonly apiKey: string;
  readonly onCreated: () => void;
}) {
  const file = useSignal<File | null>(null);
  const shape = useSignal<ListShape | null>(null);
  const column = useSignal(0);
  const sent = useSignal<number | null>(null);
  const job = useSignal<Job | null>(null);
  const error = useSignal<string | null>(null);

  const choose = async (chosen: File | undefined) => {
    error.value = null;
    job.value = null;
    file.value = chosen ?? null;
    shape.value = null;
    if (chosen === undefined) return;
    // The shape comes from the first line: only the file's first 64 KiB are read here.
    const first = firstLine(await chosen.slice(0, 65_536).text());
    const read = listShape(first, { text: /\.txt$/i.test(chosen.name) });
    shape.value = read;
    column.value = Math.max(0, read.emailIndex);
  };
  const start = async () => {
    if (file.value === null || shape.value === null) return;
    error.value = null;
    sent.value = 0;
    try {
      const read = { ...shape.value, emailIndex: column.value };
      const created = await uploadList(apiKey, file.value, read, (share) => {
        sent.value = share;
      });
      job.value = created;
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
      {shape.value?.format !== 'csv' ? null : (
        <p>
          <label for="bulk-column">Email column</label>{' '}
          <select
            id="bulk-column"
            value={String(column.value)}
            onChange={(event) => {
              column.value = Number((event.target as HTMLSelectElement).value);
            }}
          >
            {shape.value.columns.map((header, index) => (
              <option key={`${index}-${header}`} value={String(index)}>
                {header === '' ? `column ${index + 1}` : header}
              </option>
            ))}
          </select>
        </p>
      )}
      <button
        type="button"
        disabled={shape.value === null || sent.value !== null}
        onClick={() => void start()}
      >
        Start verification
      </button>
      {sent.value === null ? null : (
        <p>
          Uploading <progress max={1} value={sent.value} aria-label="Upload" />{' '}
          <span data-testid="upload-percent">{Math.floor(sent.value * 100)}</span> %
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
