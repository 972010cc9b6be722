/**
 * Downloads a job's results with the key in a header (a plain link could not carry it). A CSV of a job uploaded
 * from this page gets the uploaded file's columns back, in their order, in front of the result columns.
 * @module
 */
import { call } from './api.js';
import { fileRows, type ListShape, mergedCsv, readLineBatches, streamChunks } from './list-file.js';

/** The files uploaded from this page, by job id (a `File` is a handle: its bytes stay on disk). */
const uploads = new Map<string, { readonly file: Blob; readonly shape: ListShape }>();

/** Remembers that job `id` was made from `file`, read as `shape`, for its CSV download. */
export function rememberUpload(id: string, file: Blob, shape: ListShape): void {
  uploads.set(id, { file, shape });
}

/** Forgets the file of job `id` (deleted). */
export function forgetUpload(id: string): void {
  uploads.delete(id);
}

/** True when the CSV of job `id` will carry the uploaded file's columns. */
export function hasUpload(id: string): boolean {
  const upload = uploads.get(id);
  return upload !== undefined && upload.shape.format === 'csv';
}

/** Text pieces as one Blob, folded every few MiB so that the pieces do not pile up as strings. */
async function blobOf(pieces: AsyncIterable<string>, type: string): Promise<Blob> {
  const parts: (Blob | string)[] = [];
  let held = 0;
  for await (const piece of pieces) {
    parts.push(piece);
    held += piece.length;
    if (held > 8 * 1024 * 1024) {
      const folded = new Blob(parts, { type });
      parts.length = 0;
      parts.push(folded);
      held = 0;
    }
  }
  return new Blob(parts, { type });
}

/**
 * Fetches the results as `format` and saves them under a name of the job. The CSV of a job whose CSV file this
 * page uploaded is that file's columns, then the API's result columns (`mailvet_` before a name the file has).
 */
export async function downloadResults(key: string, id: string, format: 'csv' | 'ndjson'): Promise<void> {
  const response = await call(key, `v1/bulk/${encodeURIComponent(id)}/results?format=${format}`);
  const upload = format === 'csv' && hasUpload(id) ? uploads.get(id) : undefined;
  const blob =
    upload === undefined || response.body === null
      ? await response.blob()
      : await blobOf(
          mergedCsv(
            upload.shape,
            fileRows(upload.file, upload.shape),
            readLineBatches(streamChunks(response.body)),
          ),
          'text/csv;charset=utf-8',
        );
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `mailvet-${id}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
