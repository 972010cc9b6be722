import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { memoryJobStore } from '../../src/bulk/memory-store.js';
import { bullmqRunner } from '../../src/bullmq/runner.js';
import { createWorker } from '../../src/bullmq/worker.js';

const runner = () => bullmqRunner({ connection: 'redis://127.0.0.1:1' });

describe('the runner option', () => {
  it('must be a runner', () => {
    expect(() => new BulkJobManager({ runner: {} as never })).toThrow(/runner must have a open\(\) method/);
  });

  it('needs a PostgreSQL store for the bullmq runner', () => {
    expect(() => new BulkJobManager({ runner: runner() })).toThrow(/store must be a PostgreSQL job store/);
    expect(() => new BulkJobManager({ store: memoryJobStore(), runner: runner() })).toThrow(/postgresStore/);
  });

  it('refuses webhooks, which the fleet does not deliver yet', () => {
    expect(
      () =>
        new BulkJobManager({
          runner: runner(),
          webhooks: { secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'] },
        }),
    ).toThrow(/webhooks cannot be used with the bullmq runner/);
  });

  it('validates its own options, naming them', () => {
    expect(() => bullmqRunner({ connection: 'redis://x', chunkSize: 0 })).toThrow(
      /chunkSize must be an integer/,
    );
    expect(() => bullmqRunner({ connection: 'ftp://x' })).toThrow(/connection must be a redis/);
    for (const chunkAttempts of [0, 51, 1.5, '3', Number.NaN]) {
      expect(() => bullmqRunner({ connection: 'redis://x', chunkAttempts: chunkAttempts as number })).toThrow(
        /chunkAttempts must be an integer 1-50/,
      );
    }
  });
});

describe('createWorker', () => {
  it('needs a PostgreSQL store', async () => {
    await expect(createWorker({ connection: 'redis://x', store: memoryJobStore() as never })).rejects.toThrow(
      /store must be a PostgreSQL job store/,
    );
  });
});
