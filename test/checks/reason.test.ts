import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeResolver } from '../../src/dns/node.js';
import type { VerificationResult } from '../../src/result.js';
import { explainSyntaxFailure } from '../../src/syntax/explain.js';
import { SYNTAX_FAILURES } from '../../src/syntax/failures.js';
import type { Zone } from '../../src/testing/zone.js';
import { createVerifier, type Verifier } from '../../src/verifier.js';
import { type DnsTestServer, startDnsServer } from '../support/dns-server.js';
import { type SmtpServerHarness, startSmtpServer } from '../support/smtp-server.js';

const zone: Zone = {
  'good.test': { mx: [{ priority: 10, exchange: 'mx.good.test' }] },
  'mx.good.test': { a: ['127.0.0.2'] },
  'private.test': { mx: [{ priority: 10, exchange: 'mx.private.test' }] },
  'mx.private.test': { a: ['10.1.2.3'] },
  'nullmx.test': { mx: [{ priority: 0, exchange: '.' }] },
  'nohost.test': { mx: [{ priority: 10, exchange: 'gone.nohost.test' }] },
  'bare.test': {},
  'broken.test': { fail: 'servfail' },
};

let dns: DnsTestServer;
let smtp: SmtpServerHarness;
let verifier: Verifier;

beforeAll(async () => {
  dns = await startDnsServer(zone);
  smtp = await startSmtpServer({ host: '127.0.0.2', mailboxes: { alice: 'ok', full: 'full' } });
  verifier = createVerifier({
    resolver: nodeResolver({ servers: [dns.address] }),
    smtpPort: smtp.port,
    allowAddresses: ['127.0.0.2/32'],
    allowTlds: ['test'],
    heloHost: 'reason.mailvet-test.net',
    catchAll: false,
    timeoutMs: 5000,
  });
});

afterAll(async () => {
  await verifier?.dispose();
  await Promise.all([dns?.close(), smtp?.close()]);
});

const offline = { dns: false, smtp: false } as const;

describe('the reason of a result', () => {
  it('names the syntax rule that failed, and how to allow a special-use name', async () => {
    const special = await createVerifier(offline).verify('alice@good.test');
    expect(special).toMatchObject({ status: 'invalid', sub_status: 'failed_syntax_check' });
    expect(special.reason).toMatch(/^domain_special_use: .*allowTlds .*--allow-tld/);
    const noAt = await createVerifier(offline).verify('nobody');
    expect(noAt.reason).toBe('no_at_sign: the address has no @');
  });

  it('has a sentence for every syntax failure code', () => {
    for (const failure of SYNTAX_FAILURES) expect(explainSyntaxFailure(failure).length).toBeGreaterThan(10);
  });

  it('names the list that matched', async () => {
    const lists = createVerifier({ ...offline, roleIsDoNotMail: true, blocklist: ['blocked.net'] });
    expect((await lists.verify('x@mailinator.com')).reason).toContain('mailinator.com is on the disposable');
    expect((await lists.verify('info@example.com')).reason).toContain('"info" is a role account');
    expect((await lists.verify('x@blocked.net')).reason).toContain('blocklist');
  });

  it('says which address the SSRF guard refused, in which range, and how to allow it', async () => {
    const result = await verifier.verify('bob@private.test');
    expect(result).toMatchObject({ status: 'invalid', sub_status: 'unroutable_ip_address' });
    expect(result.reason).toBe(
      'the mail host mx.private.test resolves to 10.1.2.3 (10.0.0.0/8 private use) is not globally routable: ' +
        'mailvet does not connect to it; to allow it, add it to allowAddresses (--allow-address 10.1.2.3/32)',
    );
  });

  it.each([
    [
      'x@nullmx.test',
      'does_not_accept_mail',
      'nullmx.test publishes a null MX (RFC 7505): it accepts no mail',
    ],
    ['x@absent.test', 'no_dns_entries', 'absent.test does not exist (NXDOMAIN)'],
    ['x@bare.test', 'no_dns_entries', 'bare.test has no MX record and no A/AAAA address'],
    ['x@nohost.test', 'no_dns_entries', 'no MX host of the domain has a usable address (gone.nohost.test)'],
  ])('explains the DNS answer for %s', async (email, subStatus, reason) => {
    const result = await verifier.verify(email);
    expect(result.sub_status).toBe(subStatus);
    expect(result.reason).toBe(reason);
  });

  it('says a DNS failure is one', async () => {
    const result = await verifier.verify('x@broken.test');
    expect(result).toMatchObject({ status: 'unknown', sub_status: 'dns_error' });
    expect(result.reason).toMatch(/^DNS lookup failed: /);
  });

  it('quotes the SMTP reply that decided', async () => {
    const result = await verifier.verify('nobody@good.test');
    expect(result).toMatchObject({ status: 'invalid', sub_status: 'mailbox_not_found' });
    expect(result.reason).toMatch(
      /^mx\.good\.test \[127\.0\.0\.2\] answered RCPT TO with 550 .*user unknown/,
    );
    const full = await verifier.verify('full@good.test');
    expect(full.reason).toMatch(/answered RCPT TO with 552 5\.2\.2 mailbox full/);
  });

  it('is absent from a plain valid result and from one no check explained', async () => {
    const valid: VerificationResult = await verifier.verify('alice@good.test');
    expect(valid.status).toBe('valid');
    expect(valid).not.toHaveProperty('reason');
    const unchecked = await createVerifier(offline).verify('jane@example.com');
    expect(unchecked.sub_status).toBe('smtp_not_checked');
    expect(unchecked).not.toHaveProperty('reason');
  });
});
