/**
 * The bulk job routes (results are in results-route.ts).
 * @module
 */
import { checkGreylistDelays } from '../bulk/options.js';
import type { Job } from '../bulk/types.js';
import { readJsonBody } from './body.js';
import type { Context, Operation } from './context.js';
import { HttpError } from './errors.js';
import { JOBS_PAGE } from './limits.js';
import { integerParam } from './params.js';
import { emptyResponse } from './response.js';
import { wireJob } from './wire.js';

function objectBody(body: unknown, fields: readonly string[]): Record<string, unknown> {
  if (body === undefined) return {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError('invalid_request', 'the request body must be a JSON object');
  }
  for (const key of Object.keys(body)) {
    if (!fields.includes(key)) {
      throw new HttpError('invalid_request', `unknown field ${JSON.stringify(key.slice(0, 64))}`);
    }
  }
  return body as Record<string, unknown>;
}

function emailsOf(value: unknown, max: number): string[] {
  if (!Array.isArray(value)) throw new HttpError('invalid_request', 'emails must be an array of strings');
  if (value.length > max) {
    throw new HttpError('payload_too_large', `at most ${max} addresses per request (got ${value.length})`);
  }
  value.forEach((email, index) => {
    if (typeof email !== 'string')
      throw new HttpError('invalid_request', `emails[${index}] must be a string`);
  });
  return value as string[];
}

function access(context: Context): { owner?: string } {
  return context.tenant === undefined ? {} : { owner: context.tenant };
}

function jobId(context: Context): string {
  return context.params.id as string;
}

/** `POST /v1/bulk`: `{ name?, emails?, auto_start?, greylist_retry_delays_ms? }` → 201 with the job and its `Location`. */
export const createJob: Operation = async (context) => {
  const { services, request, tenant } = context;
  const { limits, jobs } = services;
  const body = objectBody(await readJsonBody(request, limits.maxBodyBytes), [
    'name',
    'emails',
    'auto_start',
    'greylist_retry_delays_ms',
  ]);
  const delays = body.greylist_retry_delays_ms;
  if (delays !== undefined) {
    const checked = checkGreylistDelays(delays);
    if (typeof checked === 'string')
      throw new HttpError('invalid_request', `greylist_retry_delays_ms ${checked}`);
  }
  if (body.name !== undefined && body.name !== null && typeof body.name !== 'string') {
    throw new HttpError('invalid_request', 'name must be a string or null');
  }
  if (body.auto_start !== undefined && typeof body.auto_start !== 'boolean') {
    throw new HttpError('invalid_request', 'auto_start must be a boolean');
  }
  const emails = body.emails === undefined ? undefined : emailsOf(body.emails, limits.maxEmailsPerRequest);

  const owner = tenant ?? '';
  const pending = services.creating;
  pending.set(owner, (pending.get(owner) ?? 0) + 1);
  let job: Job;
  try {
    const { total } = await jobs.list({ ...access(context), limit: 1 });
    if (total + (pending.get(owner) ?? 0) > limits.maxJobsPerKey) {
      throw new HttpError(
        'limit_exceeded',
        `at most ${limits.maxJobsPerKey} jobs per API key; delete finished jobs to make room`,
      );
    }
    job = await jobs.create({
      ...access(context),
      ...(typeof body.name === 'string' ? { name: body.name } : {}),
      ...(emails === undefined ? {} : { emails }),
      ...(body.auto_start === undefined ? {} : { autoStart: body.auto_start as boolean }),
      ...(delays === undefined ? {} : { greylistRetry: { delaysMs: delays as number[] } }),
    });
  } finally {
    const left = (pending.get(owner) ?? 1) - 1;
    if (left === 0) pending.delete(owner);
    else pending.set(owner, left);
  }
  return context.json(201, wireJob(job), { location: `bulk/${encodeURIComponent(job.id)}` });
};

/** `POST /v1/bulk/{id}/emails`: `{ emails }` → the job. */
export const addEmails: Operation = async (context) => {
  const { limits, jobs } = context.services;
  const body = objectBody(await readJsonBody(context.request, limits.maxBodyBytes), ['emails']);
  if (body.emails === undefined) throw new HttpError('invalid_request', 'emails is required');
  const emails = emailsOf(body.emails, limits.maxEmailsPerRequest);
  const job = await jobs.add(jobId(context), emails, access(context));
  return context.json(200, wireJob(job));
};

/** `POST /v1/bulk/{id}/start` → the job. */
export const startJob: Operation = async (context) => {
  const job = await context.services.jobs.start(jobId(context), access(context));
  return context.json(200, wireJob(job));
};

/** `GET /v1/bulk/{id}` → the job. */
export const getJob: Operation = async (context) => {
  const job = await context.services.jobs.get(jobId(context), access(context));
  if (job === undefined) throw new HttpError('not_found', 'no such job');
  return context.json(200, wireJob(job));
};

/** `GET /v1/bulk?offset=&limit=` → `{ jobs, offset, limit, total }`, oldest first. */
export const listJobs: Operation = async (context) => {
  const offset = integerParam(context.query, 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const limit = integerParam(context.query, 'limit', JOBS_PAGE.default, 1, JOBS_PAGE.max);
  const { jobs, total } = await context.services.jobs.list({ ...access(context), offset, limit });
  return context.json(200, { jobs: jobs.map(wireJob), offset, limit, total });
};

/** `DELETE /v1/bulk/{id}` → 204. */
export const deleteJob: Operation = async (context) => {
  await context.services.jobs.delete(jobId(context), access(context));
  return emptyResponse(204, context.headers);
};
