/**
 * The logs of `serve` and `worker` without a process or a socket: the flags, the pino logger (JSON lines,
 * redaction), the request lines, the error lines and the job transition lines.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { EXIT } from '../../src/cli/io.js';
import { logJobs, workerJobLog } from '../../src/cli/job-log.js';
import type { LogSettings } from '../../src/cli/log-settings.js';
import { createLogger } from '../../src/cli/logger.js';
import { httpErrorLog, requestLog } from '../../src/http/request-log.js';
import type { RequestRecord } from '../../src/http/request-record.js';
import { withoutAddresses } from '../../src/io/log-text.js';
import { instantVerifier, until } from '../bulk/support.js';
import { runCli } from './support.js';

/** A logger writing JSON lines into memory. */
function memoryLogger(settings: Partial<LogSettings> = {}) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  const logger = createLogger({ level: 'info', format: 'json', addresses: false, ...settings }, { stream });
  return {
    logger,
    text: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const RECORD: RequestRecord = {
  requestId: 'req-1',
  method: 'GET',
  route: '/v1/verify',
  status: 200,
  durationMs: 1.23456,
  bytes: 321,
  tenant: 'f'.repeat(64),
  keyId: 'mv_abc',
};
const VERIFY = new Request('http://localhost/v1/verify?email=someone%40example.com');

describe('the log flags of serve and worker', () => {
  const WORKER = ['worker', '--redis', 'redis://127.0.0.1:1', '--store', 'postgres://127.0.0.1:1/x'];
  const cases: [string[], RegExp][] = [
    [
      ['--log-level', 'loud'],
      /^mailvet: --log-level must be one of fatal, error, warn, info, debug, trace, silent, got "loud"\n$/,
    ],
    [['--log-level', ''], /^mailvet: --log-level must be one of .*, got ""\n$/],
    [['--log-level', 'ınfo'], /^mailvet: --log-level must be one of .*, got "ınfo"\n$/],
    [['--log-level', 'INFO'], /^mailvet: --log-level must be one of .*, got "INFO"\n$/],
    [['--log-format', 'xml'], /^mailvet: --log-format must be one of json, pretty, got "xml"\n$/],
    [['--log-format', 'ｊｓｏｎ'], /^mailvet: --log-format must be one of json, pretty, got "ｊｓｏｎ"\n$/],
    [['--log-format='], /^mailvet: --log-format must be one of json, pretty, got ""\n$/],
    [['--log-level'], /^mailvet: --log-level needs a value <level>\n$/],
    [['--log-addresses=yes'], /^mailvet: --log-addresses takes no value\n$/],
    [['--shutdown-timeout', '-1'], /^mailvet: --shutdown-timeout must be an integer 0-3600, got "-1"\n$/],
    [['--shutdown-timeout', '1.5'], /^mailvet: --shutdown-timeout must be an integer 0-3600, got "1.5"\n$/],
    [['--shutdown-timeout', '٣'], /^mailvet: --shutdown-timeout must be an integer 0-3600, got "٣"\n$/],
    [['--shutdown-timeout', '3601'], /^mailvet: --shutdown-timeout must be an integer 0-3600, got "3601"\n$/],
  ];
  for (const [flags, message] of cases) {
    it(`refuses ${JSON.stringify(flags)} with a usage error (serve and worker)`, async () => {
      const serve = await runCli(['serve', ...flags], { env: { MAILVET_API_KEYS: 'k' } });
      expect(serve).toMatchObject({ code: EXIT.usage, stdout: '' });
      expect(serve.stderr).toMatch(message);
      const worker = await runCli([...WORKER, ...flags]);
      expect(worker).toMatchObject({ code: EXIT.usage, stdout: '' });
      expect(worker.stderr).toMatch(message);
    });
  }

  it('names the variable of a bad value that came from the environment', async () => {
    const run = await runCli(['serve'], { env: { MAILVET_API_KEYS: 'k', MAILVET_LOG_LEVEL: 'verbose' } });
    expect(run.code).toBe(EXIT.usage);
    expect(run.stderr).toMatch(/^mailvet: MAILVET_LOG_LEVEL must be one of .*, got "verbose"\n$/);
    const format = await runCli(['serve'], {
      env: { MAILVET_API_KEYS: 'k', MAILVET_LOG_ADDRESSES: 'maybe' },
    });
    expect(format.stderr).toMatch(/^mailvet: MAILVET_LOG_ADDRESSES must be 1\/true\/yes or 0\/false\/no/);
  });

  it('lists the flags in the help of serve and worker', async () => {
    for (const command of ['serve', 'worker']) {
      const help = await runCli([command, '--help']);
      for (const flag of [
        '--log-level <level>',
        '--log-format <json|pretty>',
        '--log-addresses',
        '--shutdown-timeout <s>',
      ])
        expect(help.stdout).toContain(flag);
    }
  });
});

describe('the logger', () => {
  it('writes one JSON object per line with an ISO time, a level label, the pid and msg', async () => {
    const { logger, lines } = memoryLogger();
    logger.log.info({ a: 1 }, 'hello');
    logger.log.debug('not written at info');
    await logger.flush();
    const [line, ...rest] = lines();
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ level: 'info', pid: process.pid, a: 1, msg: 'hello' });
    expect(new Date(line!.time as string).toISOString()).toBe(line!.time);
  });

  it('censors keys, secrets, passwords and authorization, should a caller ever pass them', async () => {
    const { logger, text } = memoryLogger();
    logger.log.info(
      { key: 'k-123', secret: 'whsec_x', password: 'pw-1', authorization: 'Bearer k-77', apiKey: 'k-9' },
      'careless',
    );
    await logger.flush();
    for (const value of ['k-123', 'whsec_x', 'pw-1', 'k-77', 'k-9']) expect(text()).not.toContain(value);
    expect(text()).toContain('[redacted]');
  });

  it('writes pretty text when asked', async () => {
    const { logger, text } = memoryLogger({ format: 'pretty' });
    logger.log.info({ route: '/v1/verify' }, 'request');
    await logger.flush();
    expect(text()).toMatch(/INFO.*request/);
    expect(() => JSON.parse(text())).toThrow();
  });
});

describe('request lines', () => {
  it('carry the request id, method, route template, status, duration, bytes and key id, never the tenant', async () => {
    const { logger, lines, text } = memoryLogger();
    requestLog(logger.log)(RECORD, VERIFY);
    requestLog(logger.log)(
      { ...RECORD, route: null, bytes: undefined, keyId: undefined, status: 404 },
      VERIFY,
    );
    await logger.flush();
    expect(lines()).toMatchObject([
      {
        level: 'info',
        msg: 'request',
        request_id: 'req-1',
        method: 'GET',
        route: '/v1/verify',
        status: 200,
        duration_ms: 1.23,
        bytes: 321,
        key_id: 'mv_abc',
      },
      { route: null, bytes: null, key_id: null, status: 404 },
    ]);
    expect(text()).not.toContain(RECORD.tenant);
    expect(text()).not.toContain('example.com');
  });

  it('are the same on the fast path (members written as bytes, kept per route) as through pino', async () => {
    const fast = memoryLogger();
    const slow = memoryLogger();
    // Without infoBytes, the request log hands pino an object.
    const viaPino = requestLog({
      isLevelEnabled: (level) => slow.logger.log.isLevelEnabled(level),
      info: (fields, message) => slow.logger.log.info(fields, message),
      error: (fields, message) => slow.logger.log.error(fields, message),
    });
    const viaLine = requestLog(fast.logger.log);
    const records: RequestRecord[] = [
      RECORD,
      { ...RECORD, requestId: 'req-2', durationMs: 0.004, bytes: 0 },
      { ...RECORD, requestId: 'req-"3"', route: null, status: 404, keyId: undefined, bytes: undefined },
      { ...RECORD, requestId: 'req-4', durationMs: 12.5, status: 201 },
      { ...RECORD, requestId: 'req-5', durationMs: 7 },
      { ...RECORD, requestId: 'req\\6\u0001é', keyId: 'k"ey' },
    ];
    for (const record of records) {
      viaLine(record, VERIFY);
      viaPino(record, VERIFY);
    }
    await fast.logger.flush();
    await slow.logger.flush();
    const fields = (lines: Record<string, unknown>[]) => lines.map(({ time: _time, ...rest }) => rest);
    expect(fast.lines()).toHaveLength(6);
    expect(fields(fast.lines())).toEqual(fields(slow.lines()));
    expect(fast.lines()[2]).toMatchObject({ request_id: 'req-"3"', route: null, status: 404 });
    expect(fast.lines()[5]).toMatchObject({ request_id: 'req\\6\u0001é', key_id: 'k"ey' });
  });

  it('carry the address of GET /v1/verify only with addresses on', async () => {
    const { logger, lines } = memoryLogger({ addresses: true });
    const observe = requestLog(logger.log, { addresses: true });
    observe(RECORD, VERIFY);
    observe({ ...RECORD, route: '/v1/bulk' }, new Request('http://localhost/v1/bulk?email=x@y.test'));
    await logger.flush();
    expect(lines()[0]).toMatchObject({ email: 'someone@example.com' });
    expect(lines()[1]).not.toHaveProperty('email');
  });

  it('build nothing when info is off', () => {
    const { logger } = memoryLogger({ level: 'warn' });
    const observe = requestLog(logger.log);
    const record = new Proxy(RECORD, {
      get: () => {
        throw new Error('read');
      },
    });
    expect(() => observe(record, VERIFY)).not.toThrow();
  });
});

describe('error lines', () => {
  it('carry the request id and the error without addresses, unless asked', async () => {
    const { logger, lines } = memoryLogger();
    const error = Object.assign(new Error('cannot verify "a b"@example.com or x@y.test'), { code: 'boom' });
    httpErrorLog(logger.log).error('unexpected error', { requestId: 'req-9', error });
    httpErrorLog(logger.log, { addresses: true }).error('unexpected error', { requestId: '', error });
    await logger.flush();
    expect(lines()).toMatchObject([
      {
        level: 'error',
        msg: 'unexpected error',
        request_id: 'req-9',
        error: { name: 'Error', code: 'boom', message: 'cannot verify [address] or [address]' },
      },
      { request_id: null, error: { message: 'cannot verify "a b"@example.com or x@y.test' } },
    ]);
  });

  it('lose addresses and passwords in URLs, and keep text without @ as it is', () => {
    expect(withoutAddresses('connect postgres://u:secret-pw@127.0.0.1:5432/db')).not.toContain('secret-pw');
    expect(withoutAddresses('<ALICE@Example.COM>, bob+tag@münchen.de;')).toBe('<[address]>, [address];');
    expect(withoutAddresses('no address here')).toBe('no address here');
  });
});

describe('job lines', () => {
  it('one per transition: created, started, complete, with counts and duration; never the name', async () => {
    const { logger, lines, text } = memoryLogger();
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    const stop = logJobs(jobs, logger);
    const job = await jobs.create({ name: 'secret-name', emails: ['a@example.com', 'b@example.com'] });
    await until(async () => (await jobs.get(job.id))?.status === 'complete');
    await logger.flush();
    expect(lines().map((line) => line.msg)).toEqual(['job created', 'job started', 'job complete']);
    expect(lines()[2]).toMatchObject({ job_id: job.id, status: 'complete', total: 2, completed: 2 });
    expect(typeof lines()[2]!.duration_ms).toBe('number');
    expect(lines()[2]!.counts).toBeTypeOf('object');
    expect(text()).not.toContain('secret-name');
    expect(text()).not.toContain('example.com');
    stop();
    await jobs.create({ emails: [] });
    await logger.flush();
    expect(lines()).toHaveLength(3);
    await jobs.close();
  });

  it('a failed job is a warn line with its error; nothing is subscribed when the level is off', async () => {
    const { logger, lines } = memoryLogger();
    const jobs = new BulkJobManager({ verifier: instantVerifier() });
    logJobs(jobs, logger);
    await jobs.create({ emails: ['a@example.com'], autoStart: false });
    await jobs.close(); // fails the unfinished job: disposed
    await logger.flush();
    expect(lines().at(-1)).toMatchObject({ level: 'warn', msg: 'job failed', error: { code: 'disposed' } });
    const quiet = memoryLogger({ level: 'error' });
    let subscribed = 0;
    const counting = {
      on: () => {
        subscribed++;
        return () => {};
      },
    };
    logJobs(counting, quiet.logger);
    expect(subscribed).toBe(0);
  });

  it('a worker logs the jobs it completes or fails, and chunks at debug', async () => {
    const { logger, lines } = memoryLogger({ level: 'debug' });
    const record = {
      id: 'job-1',
      owner: 'tenant',
      name: 'n',
      status: 'complete' as const,
      total: 2,
      completed: 2,
      counts: { valid: 2, invalid: 0, catch_all: 0, unknown: 0, do_not_mail: 0 },
      createdAt: 1000,
      startedAt: 2000,
      completedAt: 5000,
      error: null,
      greylistDelaysMs: [],
      armed: true,
      source: null,
    };
    const tell = workerJobLog(logger);
    tell({ event: 'chunk', record, written: 2 });
    tell({ event: 'complete', record, written: 2 });
    tell({
      event: 'failed',
      record: { ...record, status: 'failed', error: { code: 'store_error', message: 'x@y.test' } },
      written: 0,
    });
    await logger.flush();
    expect(lines()).toMatchObject([
      { level: 'debug', msg: 'chunk done', job_id: 'job-1', written: 2 },
      { level: 'info', msg: 'job complete', job_id: 'job-1', duration_ms: 3000, total: 2 },
      { level: 'warn', msg: 'job failed', error: { code: 'store_error', message: '[address]' } },
    ]);
  });
});
