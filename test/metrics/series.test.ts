/**
 * The labels of mailvet's metrics: each comes from a fixed set, whatever a result, a request or a job holds.
 */
import { describe, expect, it } from 'vitest';
import {
  NO_ROUTE,
  OTHER,
  requestLabels,
  tallyJobs,
  verificationLabels,
  webhookOutcome,
} from '../../src/metrics/series.js';
import type { VerificationResult } from '../../src/result.js';

function result(fields: Partial<VerificationResult>): VerificationResult {
  return {
    email: 'jane@shop.test',
    normalized: 'jane@shop.test',
    user: 'jane',
    domain: 'shop.test',
    status: 'valid',
    sub_status: null,
    score: 100,
    disposable: false,
    role: false,
    free: false,
    accept_all: false,
    did_you_mean: null,
    mx_record: 'mx.shop.test',
    smtp_provider: null,
    ...fields,
  } as VerificationResult;
}

describe('verificationLabels', () => {
  it('names the status, sub-status and a recognised provider', () => {
    expect(
      verificationLabels(
        result({ status: 'invalid', sub_status: 'mailbox_not_found', smtp_provider: 'google' }),
      ),
    ).toEqual({ status: 'invalid', sub_status: 'mailbox_not_found', provider: 'google' });
  });

  it('says none for a result without a sub-status, other for no recognised provider', () => {
    expect(verificationLabels(result({}))).toEqual({ status: 'valid', sub_status: 'none', provider: OTHER });
  });

  it('never carries an address, a domain or an unknown value: hostile fields become other', () => {
    const hostile = result({
      status: 'jane@shop.test' as never,
      sub_status: 'x\n{evil="1"}' as never,
      smtp_provider: 'mx.shop.test',
    });
    expect(verificationLabels(hostile)).toEqual({ status: OTHER, sub_status: OTHER, provider: OTHER });
  });
});

describe('requestLabels', () => {
  it('names the method, the route template and the status', () => {
    expect(requestLabels({ method: 'GET', route: '/v1/bulk/{id}', status: 200 })).toEqual({
      method: 'GET',
      route: '/v1/bulk/{id}',
      status: '200',
    });
  });

  it('a request that matched no route is none, never its path', () => {
    expect(requestLabels({ method: 'GET', route: null, status: 404 }).route).toBe(NO_ROUTE);
  });

  it.each([
    ['FOO', 200, { method: OTHER, status: '200' }],
    ['get', 200, { method: OTHER, status: '200' }],
    ['ÜBER'.repeat(1000), 200, { method: OTHER, status: '200' }],
    ['POST', 99, { method: 'POST', status: OTHER }],
    ['POST', 600, { method: 'POST', status: OTHER }],
    ['POST', 200.5, { method: 'POST', status: OTHER }],
  ])('method %j, status %j: bounded labels', (method, status, expected) => {
    expect(requestLabels({ method, route: null, status })).toMatchObject(expected);
  });
});

describe('tallyJobs', () => {
  const job = (status: string, total: number, completed: number, waiting = 0) =>
    ({ status, total, completed, retries: { waiting } }) as never;

  it('counts jobs by state and their addresses: queued, done, waiting for a greylisting retry', () => {
    const tally = tallyJobs([
      job('queued', 10, 0),
      job('processing', 100, 40, 5),
      job('complete', 7, 7),
      job('failed', 3, 1),
    ]);
    expect(tally.jobs).toEqual({ queued: 1, processing: 1, complete: 1, failed: 1 });
    expect(tally.addresses).toEqual({ queued: 10 + 55, done: 48, retry_waiting: 5 });
  });

  it('is all zeros without jobs', () => {
    expect(tallyJobs([])).toEqual({
      jobs: { queued: 0, processing: 0, complete: 0, failed: 0 },
      addresses: { queued: 0, done: 0, retry_waiting: 0 },
    });
  });
});

describe('webhookOutcome', () => {
  it.each([
    ['delivered', 'delivered'],
    ['retrying', 'retrying'],
    ['failed', 'failed'],
    ['https://hook.example/x', OTHER],
  ])('%j is %j', (state, label) => {
    expect(webhookOutcome(state)).toBe(label);
  });
});
