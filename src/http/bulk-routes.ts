/**
 * The bulk job routes (results are in results-route.ts).
 * @module
 */
import { checkGreylistDelays } from '../bulk/options.js';
import { unstorableText } from '../bulk/storable.js';
import type { Job, SourceRowsInput } from '../bulk/types.js';
import { isMailvetError } from '../errors.js';
import { readJsonBody } from './body.js';
import { reserveBytes } from './byte-quota.js';
import type { Context, Operation } from './context.js';
import { HttpError } from './errors.js';
import { JOBS_PAGE } from './limits.js';
import { type ListFormat, listFormatOf, readAddressList } from './list-body.js';
import { integerListParam, integerParam, queryParam } from './params.js';
import { emptyResponse } from './response.js';
import { requestedWebhook } from './webhooks.js';
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
    const problem = unstorableText(email);
    if (problem !== undefined) throw new HttpError('invalid_request', `emails[${index}] ${problem}`);
  });
  return value as string[];
}

function access(context: Context): { owner?: string } {
  return context.tenant === undefined ? {} : { owner: context.tenant };
}

function jobId(context: Context): string {
  return context.params.id as string;
}

/** What `POST /v1/bulk` asks for, from a JSON body or from a list body and the query. */
interface CreateRequest {
  readonly name: string | undefined;
  readonly emails: readonly string[] | undefined;
  readonly autoStart: boolean | undefined;
  readonly delays: readonly number[] | undefined;
  /** The `webhook` field as sent (checked by {@link requestedWebhook}). */
  readonly webhook: unknown;
  /** The rows of a CSV body. */
  readonly source: SourceRowsInput | undefined;
}

/** Throws `limit_exceeded` when the tenant holds `maxJobsPerKey` jobs, counting `creating` ones in progress. */
async function checkJobQuota(context: Context, creating: number): Promise<void> {
  const { limits, jobs } = context.services;
  const { total } = await jobs.list({ ...access(context), limit: 1 });
  if (total + Math.max(creating, 1) > limits.maxJobsPerKey) {
    throw new HttpError(
      'limit_exceeded',
      `at most ${limits.maxJobsPerKey} jobs per API key; delete finished jobs to make room`,
    );
  }
}

/**
 * Throws `limit_exceeded` when the tenant's jobs, with `adding` more addresses, would hold more than
 * `maxAddressesPerKey`: one key cannot fill the process's memory with addresses (jobs created with
 * `auto_start: false` and filled by adds, say).
 */
async function checkAddressQuota(context: Context, adding: number): Promise<void> {
  const { limits, jobs } = context.services;
  if (adding === 0) return;
  let held = 0;
  for (let offset = 0; ; offset += JOBS_PAGE.max) {
    const page = await jobs.list({ ...access(context), offset, limit: JOBS_PAGE.max });
    for (const job of page.jobs) held += job.total;
    if (offset + JOBS_PAGE.max >= page.total) break;
  }
  if (held + adding > limits.maxAddressesPerKey) {
    throw new HttpError(
      'limit_exceeded',
      `at most ${limits.maxAddressesPerKey} addresses held per API key (its jobs hold ${held}, this request adds ${adding}); delete finished jobs to make room`,
    );
  }
}

/** Addresses handed to the job manager per call when a list is uploaded. */
export const LIST_BATCH = 10_000;

/** The greylisting delays of a body field or query parameter, checked as the manager checks them. */
function greylistDelaysOf(value: unknown): readonly number[] | undefined {
  if (value === undefined) return undefined;
  const checked = checkGreylistDelays(value);
  if (typeof checked === 'string')
    throw new HttpError('invalid_request', `greylist_retry_delays_ms ${checked}`);
  return checked;
}

async function jsonCreateRequest(context: Context): Promise<CreateRequest> {
  const { limits } = context.services;
  // The query parameters of this route are for list bodies: with JSON they would be ignored, so they are refused.
  const stray = [...context.query.keys()][0];
  if (stray !== undefined) {
    throw new HttpError(
      'invalid_request',
      `the query parameter ${JSON.stringify(stray.slice(0, 64))} applies to list bodies (text/plain, text/csv); with JSON, send the field in the body`,
    );
  }
  const body = objectBody(await readJsonBody(context.request, limits.maxBodyBytes), [
    'name',
    'emails',
    'auto_start',
    'greylist_retry_delays_ms',
    'webhook',
  ]);
  const delays = greylistDelaysOf(body.greylist_retry_delays_ms);
  if (body.name !== undefined && body.name !== null && typeof body.name !== 'string') {
    throw new HttpError('invalid_request', 'name must be a string or null');
  }
  if (body.auto_start !== undefined && typeof body.auto_start !== 'boolean') {
    throw new HttpError('invalid_request', 'auto_start must be a boolean');
  }
  return {
    name: typeof body.name === 'string' ? body.name : undefined,
    emails: body.emails === undefined ? undefined : emailsOf(body.emails, limits.maxEmailsPerRequest),
    autoStart: body.auto_start as boolean | undefined,
    delays,
    webhook: body.webhook,
    source: undefined,
  };
}

async function listCreateRequest(context: Context, format: ListFormat): Promise<CreateRequest> {
  const { query, request, services } = context;
  const autoStart = queryParam(query, 'auto_start');
  if (autoStart !== null && autoStart !== 'true' && autoStart !== 'false') {
    throw new HttpError('invalid_request', 'auto_start must be true or false');
  }
  const { emails, source } = await readAddressList(
    request,
    format,
    queryParam(query, 'column') ?? undefined,
    {
      maxBytes: services.limits.maxListBytes,
      maxEmails: services.limits.maxListEmails,
    },
  );
  return {
    name: queryParam(query, 'name') ?? undefined,
    emails,
    autoStart: autoStart === null ? undefined : autoStart === 'true',
    delays: greylistDelaysOf(integerListParam(query, 'greylist_retry_delays_ms')),
    webhook: undefined,
    source,
  };
}

/**
 * Hands `emails` (and their CSV rows) to the job in batches of {@link LIST_BATCH}; an error says how many were
 * added before it (a header that differs from the job's fails the first batch: nothing is added).
 */
async function addInBatches(
  context: Context,
  id: string,
  emails: readonly string[],
  source: SourceRowsInput | undefined,
): Promise<Job | undefined> {
  let job: Job | undefined;
  for (let from = 0; from < emails.length; from += LIST_BATCH) {
    const rows =
      source === undefined ? {} : { source: { ...source, rows: source.rows.slice(from, from + LIST_BATCH) } };
    try {
      job = await context.services.jobs.add(id, emails.slice(from, from + LIST_BATCH), {
        ...access(context),
        ...rows,
      });
    } catch (error) {
      if (from === 0 || !isMailvetError(error)) throw error;
      throw new HttpError(
        error.code === 'limit_exceeded' ? 'limit_exceeded' : 'conflict',
        `${error.message} (the first ${from} addresses of the list were added)`,
      );
    }
  }
  return job;
}

/**
 * `POST /v1/bulk` → 201 with the job and its `Location`. The body is JSON `{ name?, emails?, auto_start?,
 * greylist_retry_delays_ms? }`, or a list (`text/plain`, `text/csv`) with `name`, `auto_start`, `column` and
 * `greylist_retry_delays_ms` in the query: the whole list is read and checked first, and a list that fails to go in leaves no job behind.
 */
export const createJob: Operation = async (context) => {
  const format = listFormatOf(context.request.headers.get('content-type'));
  // A list may be large: a tenant at its job quota is refused before it is read (and checked again after).
  if (format !== undefined) await checkJobQuota(context, 0);
  const fields =
    format === undefined ? await jsonCreateRequest(context) : await listCreateRequest(context, format);
  await checkAddressQuota(context, fields.emails?.length ?? 0);
  const release = reserveBytes(context, fields);
  try {
    return await createRequested(context, fields, format !== undefined && fields.emails !== undefined);
  } finally {
    release();
  }
};

/** Creates the job of `fields` (checked against the quotas), then adds a `listed` list to it. */
async function createRequested(context: Context, fields: CreateRequest, listed: boolean): Promise<Response> {
  const { services, tenant } = context;
  const { jobs } = services;
  // Checked before the job exists: a refused webhook leaves no job behind.
  const webhook = await requestedWebhook(context, fields.webhook);

  const owner = tenant ?? '';
  const pending = services.creating;
  pending.set(owner, (pending.get(owner) ?? 0) + 1);
  let job: Job;
  try {
    await checkJobQuota(context, pending.get(owner) ?? 0);
    job = await jobs.create({
      ...access(context),
      ...(fields.name === undefined ? {} : { name: fields.name }),
      ...(fields.emails === undefined || listed ? {} : { emails: fields.emails }),
      ...(listed || webhook !== undefined
        ? { autoStart: false }
        : fields.autoStart === undefined
          ? {}
          : { autoStart: fields.autoStart }),
      ...(fields.delays === undefined ? {} : { greylistRetry: { delaysMs: fields.delays } }),
    });
  } finally {
    const left = (pending.get(owner) ?? 1) - 1;
    if (left === 0) pending.delete(owner);
    else pending.set(owner, left);
  }
  if (webhook !== undefined) {
    // Attached before the job starts, so that no event can be missed.
    await services.webhooks?.notifier.attach(job.id, webhook, access(context));
    if (!listed && fields.autoStart !== false) await jobs.start(job.id, access(context));
  }
  if (listed) {
    try {
      // The response is the job as created, with its addresses and still queued (as the specification shows
      // it); it starts right after unless auto_start=false.
      job = (await addInBatches(context, job.id, fields.emails ?? [], fields.source)) ?? job;
      if (fields.autoStart !== false) await jobs.start(job.id, access(context));
    } catch (error) {
      await jobs.delete(job.id, access(context)).catch(() => undefined);
      throw error;
    }
  }
  return context.json(201, wireJob(job), { location: `bulk/${encodeURIComponent(job.id)}` });
}

/**
 * `POST /v1/bulk/{id}/emails` → the job. The body is JSON `{ emails }`, or a list (`text/plain`, `text/csv`
 * with `column` in the query), read and checked whole before anything is added.
 */
export const addEmails: Operation = async (context) => {
  const { limits, jobs } = context.services;
  const format = listFormatOf(context.request.headers.get('content-type'));
  if (format !== undefined) {
    const { emails, source } = await readAddressList(
      context.request,
      format,
      queryParam(context.query, 'column') ?? undefined,
      {
        maxBytes: limits.maxListBytes,
        maxEmails: limits.maxListEmails,
      },
    );
    await checkAddressQuota(context, emails.length);
    const release = reserveBytes(context, { emails, source });
    try {
      const job =
        (await addInBatches(context, jobId(context), emails, source)) ??
        (await jobs.get(jobId(context), access(context)));
      if (job === undefined) throw new HttpError('not_found', 'no such job');
      return context.json(200, wireJob(job));
    } finally {
      release();
    }
  }
  const body = objectBody(await readJsonBody(context.request, limits.maxBodyBytes), ['emails']);
  if (body.emails === undefined) throw new HttpError('invalid_request', 'emails is required');
  const emails = emailsOf(body.emails, limits.maxEmailsPerRequest);
  await checkAddressQuota(context, emails.length);
  const release = reserveBytes(context, { emails });
  try {
    return context.json(200, wireJob(await jobs.add(jobId(context), emails, access(context))));
  } finally {
    release();
  }
};

/** `POST /v1/bulk/{id}/start` → the job. */
export const startJob: Operation = async (context) => {
  const job = await context.services.jobs.start(jobId(context), access(context));
  return context.json(200, wireJob(job));
};

/** `POST /v1/bulk/{id}/finish` → the job, its waiting greylisting retries ended (finish now). */
export const finishJob: Operation = async (context) => {
  const job = await context.services.jobs.finish(jobId(context), access(context));
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
  context.services.webhooks?.notifier.detach(jobId(context));
  return emptyResponse(204, context.headers);
};
