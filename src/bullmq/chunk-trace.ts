/**
 * The span of one fleet chunk (docs/operations.md, "Traces"): `mailvet.bulk.chunk`, a `CONSUMER` span around a
 * worker's run of one chunk, the verifications of its addresses as its children (given a context manager). It names
 * the job and counts the addresses, never shows them.
 * @module
 */
import { endSpan, startSpan, type TracingApi, tracingApi } from '../tracing.js';
import { isChunkData } from './chunks.js';

/** Runs `work`, the processing of chunk `data` (its `attempt`-th run, from 1), inside a `mailvet.bulk.chunk` span. */
export function tracedChunk(data: unknown, attempt: number, work: () => Promise<void>): Promise<void> {
  const api = tracingApi();
  return api === undefined ? work() : inChunkSpan(api, data, attempt, work);
}

async function inChunkSpan(
  api: TracingApi | Promise<TracingApi | undefined>,
  data: unknown,
  attempt: number,
  work: () => Promise<void>,
): Promise<void> {
  const loaded = await api;
  if (loaded === undefined) return work();
  const attributes = isChunkData(data)
    ? {
        'mailvet.job.id': data.job,
        'mailvet.chunk.addresses': data.positions.length,
        'mailvet.chunk.run': attempt,
      }
    : { 'mailvet.chunk.run': attempt };
  const trace = startSpan(loaded, 'mailvet.bulk.chunk', undefined, attributes, loaded.SpanKind.CONSUMER);
  if (trace === undefined) return work();
  try {
    await loaded.context.with(trace.context, work);
  } catch (error) {
    endSpan(trace, error);
    throw error;
  }
  endSpan(trace);
}
