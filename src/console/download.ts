/**
 * Downloads a job's results with the key in a header (a plain link could not carry it). The server's CSV of a
 * job made from a CSV file has that file's columns in front of the result columns, whoever uploaded it.
 * @module
 */
import { call } from './api.js';

/** A download's format. */
export type DownloadFormat = 'csv' | 'ndjson';

/** Characters no file name may hold on Windows, macOS or Linux, and control characters. */
const UNSAFE = /[\\/:*?"<>|\u0000-\u001f\u007f]+/g;
const LIST_EXTENSION = /\.(csv|txt|tsv)$/i;

/**
 * The file name of a job's results: the uploaded file's name with `-verified` (`contacts.csv` ->
 * `contacts-verified.csv`), the job's name for a job made without a file, `mailvet-<id>` for one without a name;
 * `-partial` marks the results of a job that is not complete.
 */
export function downloadName(
  job: { readonly id: string; readonly name: string },
  format: DownloadFormat,
  partial = false,
): string {
  const base = job.name
    .replace(LIST_EXTENSION, '')
    .replace(UNSAFE, '_')
    .trim()
    .replace(/^\.+/, '')
    .slice(0, 120);
  const stem = base === '' ? `mailvet-${job.id}` : base;
  return `${stem}-verified${partial ? '-partial' : ''}.${format}`;
}

/**
 * Fetches the results of `job` as `format` and saves them under {@link downloadName}; `partial` asks for the
 * results final so far of a job still processing (`?partial=true`).
 */
export async function downloadResults(
  key: string,
  job: { readonly id: string; readonly name: string },
  format: DownloadFormat,
  partial = false,
): Promise<void> {
  const query = `format=${format}${partial ? '&partial=true' : ''}`;
  const response = await call(key, `v1/bulk/${encodeURIComponent(job.id)}/results?${query}`);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = downloadName(job, format, partial);
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
