import { describe, expect, it } from 'vitest';
import {
  JobFailedError,
  JobFinishedError,
  JobNotCompleteError,
  LimitError,
  StoreError,
} from '../../src/bulk/errors.js';
import type { Job } from '../../src/bulk/types.js';
import { MailvetError, OptionsError } from '../../src/errors.js';
import { errorResponse, HTTP_ERRORS, HttpError, type HttpLogger } from '../../src/http/errors.js';

const JOB: Job = {
  id: 'j1',
  name: null,
  status: 'processing',
  total: 2,
  completed: 1,
  progress: 0.5,
  created_at: '2024-01-01T00:00:00.000Z',
  started_at: '2024-01-01T00:00:00.000Z',
  completed_at: null,
  counts: { valid: 1, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 },
  error: null,
  retries: { waiting: 0, next_retry_at: null, delays_ms: [] },
};

function recorder(): HttpLogger & { logged: unknown[] } {
  const logged: unknown[] = [];
  return { logged, error: (_message, details) => logged.push(details.error) };
}

async function render(error: unknown, logger = recorder()) {
  const response = errorResponse(error, 'rid-1', logger, { 'x-request-id': 'rid-1' });
  return { response, body: await response.json(), logger };
}

describe('errorResponse', () => {
  it('sends an HttpError with its status, message and headers', async () => {
    const { response, body } = await render(
      new HttpError('rate_limited', undefined, { headers: { 'retry-after': '3' } }),
    );
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(response.headers.get('x-request-id')).toBe('rid-1');
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(body).toEqual({ error: { code: 'rate_limited', message: HTTP_ERRORS.rate_limited.message } });
  });

  it.each([
    [new OptionsError('name', 'must be a string'), 400, 'invalid_request', 'name must be a string'],
    [new MailvetError('job_not_found', 'no such job'), 404, 'not_found', 'no such job'],
    [new JobFinishedError('complete'), 409, 'conflict', 'the job is complete and takes no more addresses'],
    [new LimitError('maxJobs', 5, 'too many jobs'), 429, 'limit_exceeded', 'too many jobs (maxJobs is 5)'],
  ])('maps the engine error %s', async (error, status, code, message) => {
    const { response, body, logger } = await render(error);
    expect(response.status).toBe(status);
    expect(body).toEqual({ error: { code, message } });
    expect(logger.logged).toEqual([]);
  });

  it('adds the job to job_not_complete and job_failed', async () => {
    const notComplete = await render(new JobNotCompleteError(JOB));
    expect(notComplete.response.status).toBe(409);
    expect(notComplete.body).toMatchObject({ error: { code: 'job_not_complete' }, job: { progress: 0.5 } });
    const failed = {
      ...JOB,
      status: 'failed' as const,
      error: { code: 'store_error' as const, message: 'x' },
    };
    expect((await render(new JobFailedError(failed))).body).toMatchObject({ error: { code: 'job_failed' } });
  });

  it.each([
    ['a TypeError', new TypeError('cannot read x of undefined at /srv/app.js:12')],
    ['a store error', new StoreError('save the job', new Error('ECONNREFUSED 10.0.0.5:5432'))],
    ['a string', 'oops'],
    ['null', null],
  ])('hides %s behind internal_error and logs it', async (_, error) => {
    const { response, body, logger } = await render(error);
    expect(response.status).toBe(500);
    expect(body).toEqual({ error: { code: 'internal_error', message: 'internal error' } });
    expect(JSON.stringify(body)).not.toMatch(/app\.js|ECONNREFUSED|oops/);
    expect(logger.logged).toEqual([error]);
  });

  it('maps a disposed engine to 503 without its message', async () => {
    const { response, body } = await render(new MailvetError('disposed', 'verifier #3 disposed at shutdown'));
    expect(response.status).toBe(503);
    expect(body.error).toEqual({
      code: 'service_unavailable',
      message: HTTP_ERRORS.service_unavailable.message,
    });
  });
});
