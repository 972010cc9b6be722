import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { createVerifier } from '../../src/verifier.js';
import { until } from './support.js';

describe('BulkJobManager with the real verifier, offline', () => {
  it('gives each address the result the verifier gives it alone, in input order', async () => {
    const verifier = createVerifier({ dns: false });
    const jobs = new BulkJobManager({ verifier });
    const emails = [
      'someone@example.com',
      'not an address',
      'info@example.org',
      'someone@example.com',
      '  Padded@Example.COM  ',
      'josé@exämple.com',
      'user@gmial.com',
      '',
    ];
    const job = await jobs.create({ name: 'offline', emails });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    const results = await jobs.results(job.id);
    const alone = await Promise.all(emails.map((email) => verifier.verify(email)));
    expect(results).toEqual(alone);
    const counts = await jobs.get(job.id);
    expect(Object.values(counts!.counts).reduce((sum, n) => sum + n, 0)).toBe(emails.length);
    await jobs.close();
    await verifier.dispose();
  });

  it('makes, uses and disposes its own verifier from verifierOptions', async () => {
    const jobs = new BulkJobManager({ verifierOptions: { dns: false } });
    const job = await jobs.create({ emails: ['a@example.com', 'broken@'] });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    const results = await jobs.results(job.id);
    expect(results.map((result) => result.email)).toEqual(['a@example.com', 'broken@']);
    expect(results[1]?.status).toBe('invalid');
    await jobs.close();
  });
});
