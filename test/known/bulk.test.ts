import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BulkJobManager } from '../../src/bulk/manager.js';
import { nodeResolver } from '../../src/dns/node.js';
import { memoryKnownResults } from '../../src/known/memory.js';
import type { KnownResults } from '../../src/known/types.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { waitFor } from '../support/wait-for.js';

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let grey: SmtpServerHarness;

beforeAll(async () => {
  smtp = await startSmtpServer({ host: '127.0.0.2', catchAll: true, mailboxes: { nobody: 'missing' } });
  grey = await startSmtpServer({ host: '127.0.0.3', port: smtp.port, greylist: true, catchAll: true });
  dns = await startDnsServer({
    'bulk.test': { mx: [{ priority: 10, exchange: 'mx.bulk.test' }] },
    'mx.bulk.test': { a: ['127.0.0.2'] },
    'grey.test': { mx: [{ priority: 10, exchange: 'mx.grey.test' }] },
    'mx.grey.test': { a: ['127.0.0.3'] },
  });
});

afterAll(async () => {
  await smtp?.close();
  await grey?.close();
  await dns?.close();
});

function manager(known: KnownResults): BulkJobManager {
  return new BulkJobManager({
    verifierOptions: {
      resolver: nodeResolver({ servers: [dns.address] }),
      smtpPort: smtp.port,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
      catchAll: false,
      knownResults: known,
    },
    greylistRetry: { delaysMs: [10] },
  });
}

async function run(jobs: BulkJobManager, emails: string[], options: { owner?: string; fresh?: boolean }) {
  const job = await jobs.create({ emails, ...options });
  const access = options.owner === undefined ? undefined : { owner: options.owner };
  await waitFor(async () => (await jobs.get(job.id, access))?.status === 'complete');
  return jobs.results(job.id, access === undefined ? undefined : { ...access });
}

const asked = (server: SmtpServerHarness) => server.rcpts().length;

describe('bulk jobs with known results', () => {
  it("answer a tenant's repeated list from its known results, never another tenant's, and ask again when fresh", async () => {
    const jobs = manager(memoryKnownResults());
    const emails = ['a@bulk.test', 'b@bulk.test', 'nobody@bulk.test'];
    try {
      const before = asked(smtp);
      const first = await run(jobs, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 3);
      expect(first.every((result) => typeof result.checked_at === 'string')).toBe(true);
      const again = await run(jobs, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 3); // no RCPT: every verdict was known
      expect(again.map((result) => [result.status, result.checked_at])).toEqual(
        first.map((result) => [result.status, result.checked_at]),
      );
      await run(jobs, emails, { owner: 'tenant-b' });
      expect(asked(smtp)).toBe(before + 6); // tenant-a's results never answer tenant-b
      await run(jobs, emails, { owner: 'tenant-a', fresh: true });
      expect(asked(smtp)).toBe(before + 9);
    } finally {
      await jobs.close();
    }
  });

  it('retries a greylisted address with the mail server, not with its kept greylisted answer', async () => {
    const jobs = manager(memoryKnownResults());
    try {
      const [result] = await run(jobs, ['retry@grey.test'], {});
      expect(result?.status).toBe('valid');
      expect(grey.rcpts().filter((rcpt) => rcpt === 'retry@grey.test')).toHaveLength(2);
    } finally {
      await jobs.close();
    }
  });

  it('refuses a fresh that is not a boolean, naming it', async () => {
    const jobs = manager(memoryKnownResults());
    try {
      for (const fresh of ['maybe', 'trüe', 1, null]) {
        await expect(jobs.create({ emails: ['a@bulk.test'], fresh } as never)).rejects.toThrow(
          /fresh must be a boolean/,
        );
      }
    } finally {
      await jobs.close();
    }
  });
});
