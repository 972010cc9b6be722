/**
 * Downloads a job's results with the key in a header (a plain link could not carry it). The server's CSV of a
 * job made from a CSV file has that file's columns in front of the result columns, whoever uploaded it.
 * @module
 */
import { call } from './api.js';

/** Fetches the results as `format` and saves them under a name of the job. */
export async function downloadResults(key: string, id: string, format: 'csv' | 'ndjson'): Promise<void> {
  const response = await call(key, `v1/bulk/${encodeURIComponent(id)}/results?format=${format}`);
  const blob = await response.blob();
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = `mailvet-${id}.${format}`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
