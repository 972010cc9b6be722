import { describe, expect, it } from 'vitest';
import { dropPostgresSchema, POSTGRES_URL, testSchema } from '../support/databases.js';
import { runCli } from './support.js';

const STORE = 'postgres://postgres@127.0.0.1:1/none';

describe('mailvet worker and serve --redis: usage', () => {
  it('worker --help describes the command', async () => {
    const run = await runCli(['worker', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage: mailvet worker --redis/);
    expect(run.stdout).toMatch(/--egress <ip>/);
  });

  it.each([
    [['worker'], /worker needs --redis/],
    [['worker', '--redis', 'redis://127.0.0.1:1'], /worker needs --store postgres/],
    [['worker', '--redis', 'ftp://x', '--store', STORE], /--redis must be a redis:\/\/ or rediss:\/\/ URL/],
    [
      ['worker', '--redis', 'redis://x', '--store', STORE, '--egress', 'nope'],
      /--egress must be an IPv4 or IPv6/,
    ],
    [['worker', '--redis', 'redis://x', '--store', STORE, '--prefix', 'a:b'], /--prefix must be 1-64/],
    [
      ['worker', '--redis', 'redis://x', '--store', STORE, '--chunks', '0'],
      /--chunks must be an integer 1-1000/,
    ],
  ])('worker %j is a usage error (exit 2)', async (argv, message) => {
    const run = await runCli(argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it.each([
    [['serve', '--redis', 'redis://127.0.0.1:1'], /--redis needs --store postgres/],
    [['serve', '--work'], /--work applies to --redis only/],
    [['serve', '--prefix', 'x'], /--prefix applies to --redis only/],
  ])('serve %j is a usage error (exit 2)', async (argv, message) => {
    const run = await runCli(argv, { env: { MAILVET_API_KEYS: 'k' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
  });

  it('worker with an unreachable store stops with exit 3 and one line', async () => {
    const run = await runCli(['worker', '--redis', 'redis://127.0.0.1:1', '--store', STORE]);
    expect(run.code).toBe(3);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it.skipIf(POSTGRES_URL === undefined)('worker with an unreachable Redis stops with exit 3', async () => {
    const schema = testSchema();
    const url = new URL(POSTGRES_URL!);
    url.searchParams.set('schema', schema);
    try {
      const run = await runCli(['worker', '--redis', 'redis://127.0.0.1:1', '--store', url.toString()]);
      expect(run.code).toBe(3);
      expect(run.stderr).toBe(
        "mailvet: cannot start the worker: cannot connect to the queue's Redis (redis://127.0.0.1:1): nothing listens at that address (is Redis running?): connect ECONNREFUSED 127.0.0.1:1\n",
      );
    } finally {
      await dropPostgresSchema(schema);
    }
  });
});
