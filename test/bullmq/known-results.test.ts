/**
 * Known results in a worker fleet: workers answer a job's first tries from the verdicts its owner's earlier jobs
 * got (kept in the job store's database, shared by the fleet), never from another owner's; a job created with
 * `fresh`, a greylisting retry and a worker without known results ask the mail server again. Loopback DNS and
 * SMTP servers count the RCPTs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorker } from '../../src/bullmq/worker.js';
import { nodeResolver } from '../../src/dns/node.js';
import type { VerifyOptions } from '../../src/options.js';
import { createVerifier } from '../../src/verifier.js';
import { runCli } from '../cli/support.js';
import { POSTGRES_URL } from '../support/databases.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type OwnFleet, type OwnFleetWorkerOptions, ownFleet } from '../support/own-fleet.js';
import { REDIS_URL } from '../support/redis.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';
import { waitFor } from '../support/wait-for.js';

const enabled = POSTGRES_URL !== undefined && REDIS_URL !== undefined;

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let grey: SmtpServerHarness;

beforeAll(async () => {
  if (!enabled) return;
  smtp = await startSmtpServer({ host: '127.0.0.2', catchAll: true, mailboxes: { nobody: 'missing' } });
  grey = await startSmtpServer({ host: '127.0.0.3', port: smtp.port, greylist: true, catchAll: true });
  dns = await startDnsServer({
    'fleet-known.test': { mx: [{ priority: 10, exchange: 'mx.fleet-known.test' }] },
    'mx.fleet-known.test': { a: ['127.0.0.2'] },
    'grey-known.test': { mx: [{ priority: 10, exchange: 'mx.grey-known.test' }] },
    'mx.grey-known.test': { a: ['127.0.0.3'] },
  });
});

afterAll(async () => {
  await smtp?.close();
  await grey?.close();
  await dns?.close();
});

/** The options that point a verifier at the loopback servers. */
function loopback(): VerifyOptions {
  return {
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp.port,
    allowAddresses: ['127.0.0.0/8'],
    allowTlds: ['test'],
    catchAll: false,
  };
}

/** Runs a job of `emails` on `fleet` until it is complete; its results. */
async function run(
  fleet: OwnFleet,
  emails: string[],
  options: { owner?: string; fresh?: boolean; greylistRetry?: { delaysMs: number[] } },
) {
  const job = await fleet.jobs.create({ emails, ...options });
  const access = options.owner === undefined ? undefined : { owner: options.owner };
  await waitFor(async () => (await fleet.jobs.get(job.id, access))?.status === 'complete', {
    timeoutMs: 30_000,
  });
  return fleet.jobs.results(job.id, access === undefined ? undefined : { ...access });
}

/** Runs `body` with a fleet of one worker of `options` (the loopback servers, unless `verifier` is given). */
async function withFleet(
  options: Omit<OwnFleetWorkerOptions, 'verifierOptions'>,
  body: (fleet: OwnFleet) => Promise<void>,
): Promise<void> {
  const fleet = await ownFleet();
  const worker = await fleet.worker({ ...options, verifierOptions: loopback(), id: 'known0' });
  try {
    await fleet.jobs.opened();
    await body(fleet);
  } finally {
    await worker.close();
    await fleet.close();
  }
}

const asked = (server: SmtpServerHarness) => server.rcpts().length;

describe.skipIf(!enabled)('known results in a worker fleet', () => {
  it("answers a tenant's repeated list from the store's known results, never another tenant's, and asks again when fresh", async () => {
    await withFleet({}, async (fleet) => {
      const emails = ['a@fleet-known.test', 'b@fleet-known.test', 'nobody@fleet-known.test'];
      const before = asked(smtp);
      const first = await run(fleet, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 3);
      expect(first.map((result) => result.status)).toEqual(['valid', 'valid', 'invalid']);
      expect(first.every((result) => typeof result.checked_at === 'string')).toBe(true);
      const again = await run(fleet, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 3); // no session for them: every verdict was known
      expect(again.map((result) => [result.status, result.checked_at])).toEqual(
        first.map((result) => [result.status, result.checked_at]),
      );
      await run(fleet, emails, { owner: 'tenant-b' });
      expect(asked(smtp)).toBe(before + 6); // tenant-a's results never answer tenant-b's job
      const fresh = await run(fleet, emails, { owner: 'tenant-a', fresh: true });
      expect(asked(smtp)).toBe(before + 9); // every worker asks again for a fresh job
      expect(fresh.map((result) => result.status)).toEqual(['valid', 'valid', 'invalid']);
      await run(fleet, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 9);
    });
  }, 60_000);

  it('retries a greylisted address with the mail server, not with its kept greylisted answer', async () => {
    await withFleet({}, async (fleet) => {
      const [result] = await run(fleet, ['retry@grey-known.test'], { greylistRetry: { delaysMs: [10] } });
      expect(result?.status).toBe('valid');
      expect(grey.rcpts().filter((rcpt) => rcpt === 'retry@grey-known.test')).toHaveLength(2);
    });
  }, 60_000);

  it('asks every time with knownResults: false, and refuses a knownResults that is not a boolean', async () => {
    await withFleet({ knownResults: false }, async (fleet) => {
      const emails = ['c@fleet-known.test', 'd@fleet-known.test'];
      const before = asked(smtp);
      await run(fleet, emails, { owner: 'tenant-a' });
      await run(fleet, emails, { owner: 'tenant-a' });
      expect(asked(smtp)).toBe(before + 4);
      await expect(
        createWorker({ connection: REDIS_URL!, store: fleet.workerStore, knownResults: 'yes' as never }),
      ).rejects.toThrow(/knownResults must be a boolean/);
    });
  }, 60_000);

  it.each([
    ['mailvet worker keeps known results by default', [] as string[], 0],
    ['mailvet worker --no-known-results asks every time', ['--no-known-results'], 2],
  ])(
    '%s',
    async (_title, flags, again) => {
      const fleet = await ownFleet();
      const stop = new AbortController();
      const url = new URL(POSTGRES_URL!);
      url.searchParams.set('schema', fleet.schema);
      const argv = ['worker', '--redis', REDIS_URL!, '--prefix', fleet.prefix, '--store', url.toString()];
      const exited = runCli([...argv, ...flags], {
        signal: stop.signal,
        createVerifier: (options) => createVerifier({ ...options, ...loopback() }),
      });
      try {
        await fleet.jobs.opened();
        const emails = [`e${again}@fleet-known.test`, `f${again}@fleet-known.test`];
        const before = asked(smtp);
        await run(fleet, emails, { owner: 'tenant-a' });
        expect(asked(smtp)).toBe(before + 2);
        await run(fleet, emails, { owner: 'tenant-a' });
        expect(asked(smtp)).toBe(before + 2 + again);
      } finally {
        stop.abort();
        const cli = await exited;
        expect(cli.code, cli.stderr).toBe(0);
        await fleet.close();
      }
    },
    60_000,
  );
});
