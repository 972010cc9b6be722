/**
 * Mail domains on loopback for the bulk tests that verify thousands of addresses: `d0.<zone>` to
 * `d<n-1>.<zone>`, each with an MX host of its own on its own loopback address (the verifier is polite per MX
 * host), served by a test DNS server and test SMTP servers.
 * @module
 */
import { nodeResolver } from '../../src/dns/node.js';
import type { VerifyOptions } from '../../src/options.js';
import type { ZoneEntry } from '../../src/testing/zone.js';
import { type DnsTestServer, startDnsServer } from './dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from './smtp-server.js';

/** Running mail domains (see {@link startMailDomains}). */
export interface MailDomains {
  /** The DNS server of the zone. */
  readonly dns: DnsTestServer;
  /** The port every MX host listens on. */
  readonly smtpPort: number;
  /**
   * `count` addresses spread over the domains in turn: every tenth (from the fourth) is `nobody@`, a missing
   * mailbox; the others are `user<i % users>@`, so `users` bounds how many distinct ones there are.
   */
  addresses(count: number, users: number): string[];
  /** Verifier options that verify these domains: their DNS and SMTP port, loopback and `.test` allowed. */
  verifierOptions(): VerifyOptions;
  /** The same as `mailvet` flags: `--dns`, `--smtp-port`, `--allow-address`, `--allow-tld`. */
  cliFlags(): string[];
  /** Stops the SMTP servers, then the DNS server. */
  close(): Promise<void>;
}

/**
 * Starts `domains` mail domains under `zone` (`fleet.test`: `d0.fleet.test` ...): domain `d<i>` has the MX
 * host `mx<i>.<zone>` on 127.0.0.<i + 2>, whose SMTP server has every mailbox but `nobody`.
 */
export async function startMailDomains(zone: string, domains: number): Promise<MailDomains> {
  const records: Record<string, ZoneEntry> = {};
  for (let d = 0; d < domains; d++) {
    records[`d${d}.${zone}`] = { mx: [{ priority: 10, exchange: `mx${d}.${zone}` }] };
    records[`mx${d}.${zone}`] = { a: [`127.0.0.${d + 2}`] };
  }
  const dns = await startDnsServer(records);
  const smtp: SmtpServerHarness[] = [];
  const close = async () => {
    for (const server of smtp) await server.close();
    await dns.close();
  };
  try {
    const first = await startSmtpServer({ host: '127.0.0.2', mailboxes: { nobody: 'missing' } });
    smtp.push(first);
    for (let d = 1; d < domains; d++) {
      const host = `127.0.0.${d + 2}`;
      smtp.push(await startSmtpServer({ host, port: first.port, mailboxes: { nobody: 'missing' } }));
    }
  } catch (error) {
    await close();
    throw error;
  }
  const smtpPort = smtp[0]!.port;
  return {
    dns,
    smtpPort,
    addresses: (count, users) =>
      Array.from({ length: count }, (_, i) =>
        i % 10 === 3 ? `nobody@d${i % domains}.${zone}` : `user${i % users}@d${i % domains}.${zone}`,
      ),
    verifierOptions: () => ({
      // The DNS server answers in this test process, whose event loop a loaded machine can hold for seconds.
      resolver: nodeResolver({ servers: [dns.address], timeoutMs: 20_000 }),
      smtpPort,
      allowAddresses: ['127.0.0.0/8'],
      allowTlds: ['test'],
    }),
    cliFlags: () => [
      '--dns',
      dns.address,
      '--smtp-port',
      String(smtpPort),
      '--allow-address',
      '127.0.0.0/8',
      '--allow-tld',
      'test',
    ],
    close,
  };
}
