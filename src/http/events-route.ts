/**
 * `GET /v1/bulk/{id}/events`: live job progress as Server-Sent Events.
 * @module
 */
import type { Job, JobEventName } from '../bulk/types.js';
import type { Operation } from './context.js';
import { HttpError } from './errors.js';
import { COMMON_HEADERS, emptyResponse } from './response.js';
import { wireJob } from './wire.js';

/**
 * SSE event names: `progress` while the job runs, then `complete` or `failed`, after which the stream ends; `deleted`
 * ends it when the job is deleted (or removed by retention) before it finished.
 */
export type JobStreamEvent = 'progress' | 'complete' | 'failed' | 'deleted';

/** Default milliseconds between heartbeat comments. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

const LAST_EVENT_ID = /^(\d{1,15})(-end)?$/;
const encoder = new TextEncoder();

function isFinal(job: Job): boolean {
  return job.status === 'complete' || job.status === 'failed';
}

/**
 * One event. Its `id` is the job's `completed` count (`<completed>-end` for the final event), so a client that
 * reconnects with `Last-Event-ID` gets the current state if it moved on since, and nothing is missed: each
 * event carries the whole job.
 */
function frame(event: JobStreamEvent, job: Job): Uint8Array {
  const id = event === 'progress' ? String(job.completed) : `${job.completed}-end`;
  return encoder.encode(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(wireJob(job))}\n\n`);
}

/** The final event of a job that no longer exists: `data` is its id and `"deleted": true`. */
function deletedFrame(id: string, completed: number): Uint8Array {
  const end = `${Math.max(completed, 0)}-end`;
  return encoder.encode(`id: ${end}\nevent: deleted\ndata: ${JSON.stringify({ id, deleted: true })}\n\n`);
}

/**
 * `GET /v1/bulk/{id}/events` → `text/event-stream`. On connect: the current state (a `progress` event, unless
 * `Last-Event-ID` shows the client has it), then every change; ends after `complete` or `failed`, or with `deleted` when a heartbeat finds the job gone (deleted
 * here or on another node, or removed by retention). A client
 * that reconnects after the final event (`Last-Event-ID: <n>-end`) gets 204, which tells `EventSource` to stop.
 * Heartbeat comments keep proxies from closing an idle stream. The listener is released when the client goes
 * away (the request's signal, or the response stream being cancelled).
 */
export const jobEvents: Operation = async (context) => {
  const { jobs, heartbeatMs } = context.services;
  const id = context.params.id as string;
  const access = context.tenant === undefined ? {} : { owner: context.tenant };
  const header = context.request.headers.get('last-event-id');
  const last = header === null ? null : LAST_EVENT_ID.exec(header.trim());
  const seen = last === null ? -1 : Number(last[1]);
  const sawEnd = last?.[2] !== undefined;

  // Subscribe before reading the job, so that no change falls between the two.
  const queued: [JobStreamEvent, Job][] = [];
  let push = (event: JobStreamEvent, job: Job) => void queued.push([event, job]);
  const offs = (['progress', 'complete', 'failed'] as const satisfies readonly JobEventName[]).map((event) =>
    jobs.on(event, (job) => {
      if (job.id === id) push(event, job);
    }),
  );
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    for (const off of offs) off();
  };

  let job: Job | undefined;
  try {
    job = await jobs.get(id, access);
  } catch (error) {
    release();
    throw error;
  }
  if (job === undefined) {
    release();
    throw new HttpError('not_found', 'no such job');
  }
  if (sawEnd && isFinal(job)) {
    release();
    return emptyResponse(204, context.headers);
  }
  const current = job;
  const signal = context.request.signal;
  const streams = context.services.streams;
  let forget = (): void => {};
  let timer: ReturnType<typeof setInterval> | undefined;
  let sent = seen;
  let done = false;

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      const stop = () => {
        if (done) return;
        done = true;
        release();
        clearInterval(timer);
        signal.removeEventListener('abort', stop);
        forget();
        try {
          controller.close();
        } catch {
          // already closed by a cancel
        }
      };
      push = (event, next) => {
        if (done) return;
        if (event === 'progress') {
          if (next.completed <= sent || isFinal(next)) return;
          sent = next.completed;
          controller.enqueue(frame('progress', next));
          return;
        }
        controller.enqueue(frame(event, next));
        stop();
      };
      if (isFinal(current)) {
        push(current.status === 'complete' ? 'complete' : 'failed', current);
        return;
      }
      if (current.completed > sent) {
        sent = current.completed;
        controller.enqueue(frame('progress', current));
      }
      for (const [event, next] of queued.splice(0)) push(event, next);
      if (done) return;
      if (signal.aborted || streams.draining) return stop();
      signal.addEventListener('abort', stop, { once: true });
      // A server that shuts down ends the stream (the client reconnects with Last-Event-ID, elsewhere or later).
      forget = streams.add(stop);
      timer = setInterval(() => {
        controller.enqueue(encoder.encode(': heartbeat\n\n'));
        jobs.get(id, access).then(
          (now) => {
            if (now !== undefined || done) return;
            controller.enqueue(deletedFrame(id, sent));
            stop();
          },
          () => {}, // the store is out of reach: the next heartbeat asks again
        );
      }, heartbeatMs);
    },
    cancel() {
      done = true;
      release();
      clearInterval(timer);
    },
  });
  return new Response(stream, {
    status: 200,
    headers: {
      ...COMMON_HEADERS,
      ...context.headers,
      'content-type': 'text/event-stream; charset=utf-8',
      'x-accel-buffering': 'no',
    },
  });
};
